// The CUPTI activity source's settings (tracer/cupti/cupti_activity_source.h)
// as the environment gives them: each SSGD_TRACER_API_CALLS mode, and a
// malformed value kept at the default with the reason.
#include "tracer/cupti/cupti_activity_source.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace ssgd::tracer {
namespace {

ActivitySourceSettings settings_with(std::map<std::string, std::string> vars) {
  return read_activity_settings([vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

using ApiCalls = ActivitySourceSettings::ApiCalls;

TEST(ActivitySettings, ApiCallsDefaultToTheLaunchList) {
  const auto s = settings_with({});
  EXPECT_EQ(s.api_calls, ApiCalls::kLaunches);
  EXPECT_TRUE(s.problems.empty());
}

TEST(ActivitySettings, EachApiCallsModeIsRead) {
  EXPECT_EQ(settings_with({{"SSGD_TRACER_API_CALLS", "launches"}}).api_calls, ApiCalls::kLaunches);
  EXPECT_EQ(settings_with({{"SSGD_TRACER_API_CALLS", "runtime"}}).api_calls, ApiCalls::kRuntime);
  EXPECT_EQ(settings_with({{"SSGD_TRACER_API_CALLS", "none"}}).api_calls, ApiCalls::kNone);
  EXPECT_EQ(settings_with({{"SSGD_TRACER_API_CALLS", "all"}}).api_calls, ApiCalls::kAll);
}

TEST(ActivitySettings, AnUnknownModeKeepsTheLaunchListAndSaysWhy) {
  const auto s = settings_with({{"SSGD_TRACER_API_CALLS", "driver"}});
  EXPECT_EQ(s.api_calls, ApiCalls::kLaunches);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("SSGD_TRACER_API_CALLS='driver'"), std::string::npos);
  EXPECT_NE(s.problems[0].find("recording launches"), std::string::npos);
}

// SSGD_TRACER_WINDOW_DETACH: off unless 1; anything else is said and left off.
TEST(ActivitySettings, WindowDetachIsOnlyOnWhenAsked) {
  EXPECT_FALSE(settings_with({}).window_detach);
  EXPECT_TRUE(settings_with({{"SSGD_TRACER_WINDOW_DETACH", "1"}}).window_detach);
  EXPECT_FALSE(settings_with({{"SSGD_TRACER_WINDOW_DETACH", "0"}}).window_detach);
  const auto s = settings_with({{"SSGD_TRACER_WINDOW_DETACH", "yes"}});
  EXPECT_FALSE(s.window_detach);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("SSGD_TRACER_WINDOW_DETACH='yes'"), std::string::npos);
}

}  // namespace
}  // namespace ssgd::tracer
