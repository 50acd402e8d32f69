// The Chrome-trace JSON writer shared by the timeline and the exporter, and
// the exact decimal formatting it writes times with.
#include "common/chrome_trace_writer.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "common/fixed_decimal.h"

namespace ssgd {
namespace {

TEST(FixedDecimal, KeepsEveryDigitWithoutFloatingPoint) {
  EXPECT_EQ(format_fixed_decimal(1500, 3), "1.500");
  EXPECT_EQ(format_fixed_decimal(0, 3), "0.000");
  EXPECT_EQ(format_fixed_decimal(-1, 3), "-0.001");
  EXPECT_EQ(format_fixed_decimal(-1, 6), "-0.000001");
  EXPECT_EQ(format_fixed_decimal(1234567890123456789, 6), "1234567890123.456789");
  EXPECT_EQ(format_fixed_decimal(std::numeric_limits<std::int64_t>::min(), 3),
            "-9223372036854775.808");
  EXPECT_EQ(format_fixed_decimal(42, 0), "42");
  EXPECT_THROW(format_fixed_decimal(1, 19), std::invalid_argument);
  EXPECT_EQ(chrome_micros(12500), "12.500");
}

TEST(ChromeTraceWriter, WritesOneEventPerLineWithEscapedNames) {
  std::ostringstream out;
  ChromeTraceWriter w(out, false);
  w.process_name(1, "rank \"0\"");
  w.slice("k\n", "kernel", 1, 2, 1500, 250);
  w.slice("k", "kernel", 1, 2, 2000, 1, R"("bytes":4)");
  w.flow_start(7, "launch", "launch", 1, 3, 1000);
  w.flow_end(7, "launch", "launch", 1, 2, 1500);
  w.finish();
  EXPECT_EQ(out.str(),
            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
            R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"rank \"0\""}})" ",\n"
            R"({"name":"k\u000a","cat":"kernel","ph":"X","pid":1,"tid":2,"ts":1.500,"dur":0.250})" ",\n"
            R"({"name":"k","cat":"kernel","ph":"X","pid":1,"tid":2,"ts":2.000,"dur":0.001,"args":{"bytes":4}})" ",\n"
            R"({"name":"launch","cat":"launch","ph":"s","id":7,"pid":1,"tid":3,"ts":1.000})" ",\n"
            R"({"name":"launch","cat":"launch","ph":"f","bp":"e","id":7,"pid":1,"tid":2,"ts":1.500})"
            "\n]}\n");
  EXPECT_EQ(w.events(), 5u);
  EXPECT_THROW(w.slice("late", "x", 1, 1, 0, 0), std::logic_error);
}

}  // namespace
}  // namespace ssgd

namespace ssgd {
namespace {

// JSON is UTF-8: bytes that are not (a file name from another file system)
// become U+FFFD, so a timeline always parses (issue 15).
TEST(JsonEscape, InvalidUtf8BecomesTheReplacementCharacter) {
  EXPECT_EQ(json_escape("a\xFF\"b"), "a\xEF\xBF\xBD\\\"b");
  EXPECT_EQ(json_escape("\xC3\xA9\xC0\xAF"), "\xC3\xA9\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(json_escape("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace ssgd
