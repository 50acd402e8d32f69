// Errors about input (common/error.h): where and why, with untrusted text
// (a path, a value, a key) shown bounded, so that a 20 MB path cannot make
// a 20 MB message.
#include "common/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace ssgd {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(Bounded, ShortTextIsShownWhole) {
  EXPECT_EQ(bounded("cluster.nodes"), "cluster.nodes");
  EXPECT_EQ(bounded(std::string(kMaxEchoBytes, 'x')), std::string(kMaxEchoBytes, 'x'));
  EXPECT_EQ(bounded(""), "");
}

TEST(Bounded, LongTextShowsItsStartAndItsLength) {
  const std::string long_text(kMaxEchoBytes + 1, 'x');
  EXPECT_EQ(bounded(long_text), std::string(kMaxEchoBytes, 'x') + "... (201 bytes)");
  EXPECT_EQ(bounded("abcdef", 3), "abc... (6 bytes)");
}

TEST(Bounded, NeverCutsAUtf8Character) {
  // "é" is two bytes: a cut at 3 would split the second one.
  const std::string text = "aéé";  // 1 + 2 + 2 bytes
  EXPECT_EQ(bounded(text, 4), "aé... (5 bytes)");
  EXPECT_EQ(bounded(text, 3), "aé... (5 bytes)");
  EXPECT_EQ(bounded(text, 2), "a... (5 bytes)");
}

TEST(Bounded, ReplacesEveryEchoOfALongValue) {
  const std::string value(300, '9');
  const std::string message = "expected an integer, got '" + value + "' (value '" + value + "')";
  const std::string shown = std::string(kMaxEchoBytes, '9') + "... (300 bytes)";
  EXPECT_EQ(with_bounded_echo(message, value),
            "expected an integer, got '" + shown + "' (value '" + shown + "')");
  // A short value leaves the message as it is.
  EXPECT_EQ(with_bounded_echo("got 'x'", "x"), "got 'x'");
}

TEST(InputError, TheFileTheFieldAndTheReasonAreBounded) {
  const std::string path(20 * 1024 * 1024, 'p');
  const InputError e({path, 3, std::nullopt, std::string(1000, 'k')}, std::string(10'000, 'r'));
  const std::string what = e.what();
  EXPECT_LT(what.size(), kMaxReasonBytes + 2 * kMaxEchoBytes + 100);
  EXPECT_THAT(what, StartsWith(std::string(kMaxEchoBytes, 'p') + "... (20971520 bytes):3: field '" +
                               std::string(kMaxEchoBytes, 'k') + "... (1000 bytes)': rrr"));
  EXPECT_THAT(what, EndsWith("... (10000 bytes)"));
  // The location keeps the whole path for code that needs it.
  EXPECT_EQ(e.where().file.size(), path.size());
  EXPECT_EQ(e.reason().size(), kMaxReasonBytes + std::string("... (10000 bytes)").size());
}

TEST(InputError, AnOrdinaryMessageIsUnchanged) {
  const InputError e({"s.yaml", 4, std::nullopt, "cluster.nodes"}, "must be at least 1, got 0");
  EXPECT_EQ(std::string(e.what()), "s.yaml:4: field 'cluster.nodes': must be at least 1, got 0");
  EXPECT_THAT(InputError({"t.ssgdt", std::nullopt, 7, ""}, "bad").what(),
              HasSubstr("t.ssgdt: record 7: bad"));
}

}  // namespace
}  // namespace ssgd
