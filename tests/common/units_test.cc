#include "common/units.h"

#include <stdexcept>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ssgd {
namespace {

using ::testing::HasSubstr;

// The message of the std::invalid_argument that `parse` throws for `text`.
template <typename Parse>
std::string error_of(Parse parse, const std::string& text) {
  try {
    parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return {};
}

std::string duration_error(const std::string& text) {
  return error_of([](std::string_view t) { return parse_duration(t); }, text);
}
std::string bytes_error(const std::string& text) {
  return error_of([](std::string_view t) { return parse_bytes(t); }, text);
}
std::string rate_error(const std::string& text) {
  return error_of([](std::string_view t) { return parse_rate_bytes_per_s(t); }, text);
}

TEST(ParseDuration, EveryUnit) {
  EXPECT_EQ(parse_duration("250ns"), Duration(250));
  EXPECT_EQ(parse_duration("5us"), Duration(5'000));
  EXPECT_EQ(parse_duration("5\xC2\xB5s"), Duration(5'000));  // µs, micro sign
  EXPECT_EQ(parse_duration("5\xCE\xBCs"), Duration(5'000));  // μs, Greek mu
  EXPECT_EQ(parse_duration("7ms"), Duration(7'000'000));
  EXPECT_EQ(parse_duration("2s"), Duration(2'000'000'000));
}

TEST(ParseDuration, DecimalsAreExact) {
  EXPECT_EQ(parse_duration("1.5ms"), Duration(1'500'000));
  EXPECT_EQ(parse_duration("0.1us"), Duration(100));
  EXPECT_EQ(parse_duration("0.3s"), Duration(300'000'000));
  EXPECT_EQ(parse_duration("1.000000001s"), Duration(1'000'000'001));
  EXPECT_EQ(parse_duration("12.345678ms"), Duration(12'345'678));
  EXPECT_EQ(parse_duration(".5us"), Duration(500));
  EXPECT_EQ(parse_duration("2.us"), Duration(2'000));
  EXPECT_EQ(parse_duration("007ms"), Duration(7'000'000));
  EXPECT_EQ(parse_duration("1.50000000000000000000000ms"), Duration(1'500'000));
}

TEST(ParseDuration, RoundsSubNanosecondsToNearest) {
  EXPECT_EQ(parse_duration("1.4ns"), Duration(1));
  EXPECT_EQ(parse_duration("1.5ns"), Duration(2));
  EXPECT_EQ(parse_duration("0.0004us"), Duration(0));
  EXPECT_EQ(parse_duration("0.0005us"), Duration(1));
}

TEST(ParseDuration, ZeroAndSpace) {
  EXPECT_EQ(parse_duration("0ns"), Duration(0));
  EXPECT_EQ(parse_duration("0s"), Duration(0));
  EXPECT_EQ(parse_duration("1.5 ms"), Duration(1'500'000));
  EXPECT_EQ(parse_duration("5 us"), Duration(5'000));
}

TEST(ParseDuration, LargestValues) {
  EXPECT_EQ(parse_duration("9223372036854775807ns"), Duration::max());
  EXPECT_EQ(parse_duration("9223372036s"), Duration(9'223'372'036'000'000'000));
  EXPECT_THAT(duration_error("9223372036854775808ns"), HasSubstr("too large"));
  EXPECT_THAT(duration_error("9223372037s"), HasSubstr("too large"));
  EXPECT_THAT(duration_error("100000000000000000000000s"), HasSubstr("too large"));
}

TEST(ParseDuration, Errors) {
  EXPECT_EQ(duration_error("5"),
            "duration '5': missing unit; write one of ns, us, \xC2\xB5s, ms, s (e.g. '1.5ms')");
  EXPECT_EQ(duration_error("5 parsecs"),
            "duration '5 parsecs': unknown unit 'parsecs'; write one of ns, us, \xC2\xB5s, ms, s "
            "(e.g. '1.5ms')");
  EXPECT_EQ(duration_error("-5ms"), "duration '-5ms': must not be negative");
  EXPECT_THAT(duration_error(""), HasSubstr("empty"));
  EXPECT_THAT(duration_error("ms"), HasSubstr("does not start with a number"));
  EXPECT_THAT(duration_error("nan"), HasSubstr("does not start with a number"));
  EXPECT_THAT(duration_error("inf"), HasSubstr("does not start with a number"));
  EXPECT_THAT(duration_error("-inf"), HasSubstr("must not be negative"));
  EXPECT_THAT(duration_error("+5ms"), HasSubstr("does not start with a number"));
  EXPECT_THAT(duration_error(" 5ms"), HasSubstr("does not start with a number"));
  EXPECT_THAT(duration_error("5ms extra"), HasSubstr("unknown unit 'ms extra'"));
  EXPECT_THAT(duration_error("5ms "), HasSubstr("unknown unit 'ms '"));
  EXPECT_THAT(duration_error("5  ms"), HasSubstr("unknown unit ' ms'"));
  EXPECT_THAT(duration_error("1..5ms"), HasSubstr("unknown unit '.5ms'"));
  EXPECT_THAT(duration_error("1e3ms"), HasSubstr("unknown unit 'e3ms'"));
  EXPECT_THAT(duration_error("5MS"), HasSubstr("unknown unit 'MS'"));
  EXPECT_THAT(duration_error("5."), HasSubstr("missing unit"));
  EXPECT_THAT(duration_error("0.1234567890123456789012345s"),
              HasSubstr("more than 24 digits after the decimal point"));
}

TEST(ParseBytes, EveryUnit) {
  EXPECT_EQ(parse_bytes("512B"), 512);
  EXPECT_EQ(parse_bytes("64kB"), 64'000);
  EXPECT_EQ(parse_bytes("64KB"), 64'000);
  EXPECT_EQ(parse_bytes("3MB"), 3'000'000);
  EXPECT_EQ(parse_bytes("2GB"), 2'000'000'000);
  EXPECT_EQ(parse_bytes("1TB"), 1'000'000'000'000);
  EXPECT_EQ(parse_bytes("64KiB"), 65'536);
  EXPECT_EQ(parse_bytes("3MiB"), 3 * 1'048'576);
  EXPECT_EQ(parse_bytes("2GiB"), 2'147'483'648);
  EXPECT_EQ(parse_bytes("1TiB"), 1'099'511'627'776);
}

TEST(ParseBytes, FractionsRoundToWholeBytes) {
  EXPECT_EQ(parse_bytes("1.5GB"), 1'500'000'000);
  EXPECT_EQ(parse_bytes("1.5KiB"), 1'536);
  EXPECT_EQ(parse_bytes("0.5B"), 1);  // halves round away from zero
  EXPECT_EQ(parse_bytes("0.4B"), 0);
  EXPECT_EQ(parse_bytes("0.001KiB"), 1);  // 1.024 B
  EXPECT_EQ(parse_bytes("0.1MiB"), 104'858);  // 104857.6 B
  EXPECT_EQ(parse_bytes("97.5 MiB"), 102'236'160);
  EXPECT_EQ(parse_bytes("0B"), 0);
}

TEST(ParseBytes, Errors) {
  EXPECT_EQ(bytes_error("64"),
            "size '64': missing unit; write one of B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB "
            "(e.g. '64MiB')");
  EXPECT_THAT(bytes_error("64Gb"), HasSubstr("unknown unit 'Gb'"));
  EXPECT_THAT(bytes_error("64kib"), HasSubstr("unknown unit 'kib'"));
  EXPECT_THAT(bytes_error("-1KB"), HasSubstr("must not be negative"));
  EXPECT_THAT(bytes_error("nan B"), HasSubstr("does not start with a number"));
  EXPECT_THAT(bytes_error("8388608TiB"), HasSubstr("too large"));
  EXPECT_THAT(bytes_error("1KiB and more"), HasSubstr("unknown unit"));
}

TEST(ParseRate, BytesPerSecond) {
  EXPECT_EQ(parse_rate_bytes_per_s("100B/s"), 100.0);
  EXPECT_EQ(parse_rate_bytes_per_s("5kB/s"), 5e3);
  EXPECT_EQ(parse_rate_bytes_per_s("5KB/s"), 5e3);
  EXPECT_EQ(parse_rate_bytes_per_s("900MB/s"), 900e6);
  EXPECT_EQ(parse_rate_bytes_per_s("12GB/s"), 12e9);
  EXPECT_EQ(parse_rate_bytes_per_s("12.5GB/s"), 12.5e9);
  EXPECT_EQ(parse_rate_bytes_per_s("0.1GB/s"), 1e8);
  EXPECT_EQ(parse_rate_bytes_per_s("2TB/s"), 2e12);
  EXPECT_EQ(parse_rate_bytes_per_s("1KiB/s"), 1024.0);
  EXPECT_EQ(parse_rate_bytes_per_s("900MiB/s"), 900.0 * 1024 * 1024);
  EXPECT_EQ(parse_rate_bytes_per_s("1.5GiB/s"), 1.5 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_rate_bytes_per_s("1TiB/s"), 1024.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_rate_bytes_per_s("12 GB/s"), 12e9);
}

TEST(ParseRate, BitsPerSecond) {
  EXPECT_EQ(parse_rate_bytes_per_s("100Gb/s"), 12.5e9);
  EXPECT_EQ(parse_rate_bytes_per_s("10Gbit/s"), 1.25e9);
  EXPECT_EQ(parse_rate_bytes_per_s("400Gbps"), 50e9);
  EXPECT_EQ(parse_rate_bytes_per_s("100Mb/s"), 12.5e6);
  EXPECT_EQ(parse_rate_bytes_per_s("100Mbps"), 12.5e6);
  EXPECT_EQ(parse_rate_bytes_per_s("1Tb/s"), 125e9);
  EXPECT_EQ(parse_rate_bytes_per_s("56kb/s"), 7e3);
  EXPECT_EQ(parse_rate_bytes_per_s("8b/s"), 1.0);
  EXPECT_EQ(parse_rate_bytes_per_s("8bps"), 1.0);
  EXPECT_EQ(parse_rate_bytes_per_s("25 Gbit/s"), 3.125e9);
  EXPECT_EQ(parse_rate_bytes_per_s("0GB/s"), 0.0);
}

TEST(ParseRate, Errors) {
  EXPECT_THAT(rate_error("12"), HasSubstr("rate '12': missing unit; write one of B/s"));
  EXPECT_THAT(rate_error("12GB"), HasSubstr("unknown unit 'GB'"));
  EXPECT_THAT(rate_error("12gb/s"), HasSubstr("unknown unit 'gb/s'"));
  EXPECT_THAT(rate_error("12GB/h"), HasSubstr("unknown unit 'GB/h'"));
  EXPECT_THAT(rate_error("12Xb/s"), HasSubstr("unknown unit 'Xb/s'"));
  EXPECT_THAT(rate_error("-12GB/s"), HasSubstr("must not be negative"));
  EXPECT_THAT(rate_error("inf GB/s"), HasSubstr("does not start with a number"));
  EXPECT_THAT(rate_error(""), HasSubstr("empty"));
}

TEST(FormatDuration, PicksTheUnit) {
  EXPECT_EQ(format_duration(Duration(0)), "0 ns");
  EXPECT_EQ(format_duration(Duration(999)), "999 ns");
  EXPECT_EQ(format_duration(Duration(1'000)), "1.000 us");
  EXPECT_EQ(format_duration(Duration(12'345)), "12.345 us");
  EXPECT_EQ(format_duration(Duration(1'234'000)), "1.234 ms");
  EXPECT_EQ(format_duration(Duration(1'234'567)), "1.235 ms");
  EXPECT_EQ(format_duration(Duration(999'999'999)), "1.000 s");
  EXPECT_EQ(format_duration(Duration(999'999'499)), "999.999 ms");
  EXPECT_EQ(format_duration(Duration(2'500'000'000)), "2.500 s");
  EXPECT_EQ(format_duration(Duration(3'600'000'000'000)), "3600.000 s");
  EXPECT_EQ(format_duration(Duration(-1'500'000)), "-1.500 ms");
}

TEST(FormatBytes, BinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1'023), "1023 B");
  EXPECT_EQ(format_bytes(1'024), "1.0 KiB");
  EXPECT_EQ(format_bytes(1'536), "1.5 KiB");
  EXPECT_EQ(format_bytes(102'236'160), "97.5 MiB");
  EXPECT_EQ(format_bytes(1'048'575), "1.0 MiB");
  EXPECT_EQ(format_bytes(2'147'483'648), "2.0 GiB");
  EXPECT_EQ(format_bytes(1'099'511'627'776), "1.0 TiB");
  EXPECT_EQ(format_bytes(-2'048), "-2.0 KiB");
}

TEST(FormatRate, DecimalUnits) {
  EXPECT_EQ(format_rate(0), "0.0 B/s");
  EXPECT_EQ(format_rate(512), "512.0 B/s");
  EXPECT_EQ(format_rate(1.25e9), "1.2 GB/s");  // 1.25 rounds to even in printf
  EXPECT_EQ(format_rate(25e9), "25.0 GB/s");
  EXPECT_EQ(format_rate(12.6e9), "12.6 GB/s");
  EXPECT_EQ(format_rate(999.96e6), "1.0 GB/s");
  EXPECT_EQ(format_rate(3e12), "3.0 TB/s");
}

TEST(Units, FormatThenParseRoundTrips) {
  EXPECT_EQ(parse_duration("1.234ms"), Duration(1'234'000));
  EXPECT_EQ(parse_duration(format_duration(Duration(1'234'000))), Duration(1'234'000));
  EXPECT_EQ(parse_bytes(format_bytes(1'536)), 1'536);
  EXPECT_EQ(parse_rate_bytes_per_s(format_rate(25e9)), 25e9);
}

// Exact sizes, as files write them: the largest binary unit that divides,
// else bytes; each reads back equal.
TEST(ExactBytesText, LargestDividingUnitAndBack) {
  EXPECT_EQ(exact_bytes_text(16 * 1024 * 1024), "16MiB");
  EXPECT_EQ(exact_bytes_text(std::int64_t{3} << 40), "3TiB");
  EXPECT_EQ(exact_bytes_text(1536), "1536B");  // 1.5 KiB: no unit divides it
  EXPECT_EQ(exact_bytes_text(2048), "2KiB");
  EXPECT_EQ(exact_bytes_text(1000), "1000B");
  EXPECT_EQ(exact_bytes_text(0), "0B");
  for (const std::int64_t b : {std::int64_t{1}, std::int64_t{1023}, std::int64_t{1} << 20,
                               (std::int64_t{5} << 30) + 1024, std::int64_t{7} << 41}) {
    EXPECT_EQ(parse_bytes(exact_bytes_text(b)), b) << b;
  }
}

}  // namespace
}  // namespace ssgd
