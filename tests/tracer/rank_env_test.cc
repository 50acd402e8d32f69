// Rank detection from the launcher's environment (tracer/core/rank_env.h):
// each variable alone, the order of preference, malformed values skipped
// with a reason, and the fallback to rank 0.
#include "tracer/core/rank_env.h"
#include "tracer/core/process_session.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>

#include "tests/support/tracer_test_doubles.h"

namespace ssgd::tracer {
namespace {

using Env = std::map<std::string, std::string>;

using ssgd::testing::map_env;

TEST(RankEnvTest, EachRankVariableAloneGivesTheRank) {
  const char* names[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
                         "LOCAL_RANK"};
  int value = 3;
  for (const char* name : names) {
    const RankEnv r = detect_rank(map_env({{name, std::to_string(value)}}));
    EXPECT_EQ(r.rank, value) << name;
    EXPECT_EQ(r.rank_source, name);
    EXPECT_TRUE(r.skipped.empty()) << name;
    ++value;
  }
}

TEST(RankEnvTest, PreferenceOrderIsAsDocumented) {
  Env env = {{"RANK", "1"}, {"OMPI_COMM_WORLD_RANK", "2"}, {"PMI_RANK", "3"},
             {"SLURM_PROCID", "4"}, {"LOCAL_RANK", "5"}};
  const std::vector<const char*>& order = rank_variables();
  ASSERT_EQ(order.size(), 5u);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const RankEnv r = detect_rank(map_env(env));
    EXPECT_EQ(r.rank_source, order[i]);
    EXPECT_EQ(r.rank, static_cast<int>(i) + 1);
    env.erase(order[i]);  // the next one takes over
  }
  const RankEnv none = detect_rank(map_env(env));
  EXPECT_EQ(none.rank, 0);
  EXPECT_EQ(none.rank_source, "");
}

TEST(RankEnvTest, MalformedValuesAreSkippedWithTheReasonAndTheNextVariableIsUsed) {
  const RankEnv r = detect_rank(map_env({{"RANK", "abc"},
                                        {"OMPI_COMM_WORLD_RANK", "-1"},
                                        {"PMI_RANK", "  "},
                                        {"SLURM_PROCID", "99999999999"},
                                        {"LOCAL_RANK", " 6 "}}));
  EXPECT_EQ(r.rank, 6);
  EXPECT_EQ(r.rank_source, "LOCAL_RANK");
  ASSERT_EQ(r.skipped.size(), 4u);
  EXPECT_EQ(r.skipped[0], "RANK='abc': not a decimal number");
  EXPECT_EQ(r.skipped[1], "OMPI_COMM_WORLD_RANK='-1': negative");
  EXPECT_EQ(r.skipped[2], "PMI_RANK='  ': empty");
  EXPECT_EQ(r.skipped[3], "SLURM_PROCID='99999999999': out of range (more than 2147483647)");
}

TEST(RankEnvTest, AllMalformedFallsBackToRankZeroAndSaysWhy) {
  const RankEnv r = detect_rank(map_env({{"RANK", "2x"}}));
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.rank_source, "");
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0], "RANK='2x': not a decimal number");
}

TEST(RankEnvTest, WorldSizeFromEachVariableAndZeroIsSkipped) {
  const char* names[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
  for (const char* name : names) {
    const RankEnv r = detect_rank(map_env({{name, "16"}}));
    ASSERT_TRUE(r.world_size.value) << name;
    EXPECT_EQ(*r.world_size.value, 16);
    EXPECT_EQ(r.world_size.source, name);
  }
  const RankEnv r = detect_rank(map_env({{"WORLD_SIZE", "0"}, {"PMI_SIZE", "8"}}));
  EXPECT_EQ(*r.world_size.value, 8);
  EXPECT_EQ(r.world_size.source, "PMI_SIZE");
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0], "WORLD_SIZE='0': a size must be at least 1");
  EXPECT_FALSE(detect_rank(map_env({})).world_size.value);
}

TEST(RankEnvTest, LocalRankFromEachVariable) {
  const char* names[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                         "SLURM_LOCALID"};
  for (const char* name : names) {
    const RankEnv r = detect_rank(map_env({{name, "2"}}));
    ASSERT_TRUE(r.local_rank.value) << name;
    EXPECT_EQ(*r.local_rank.value, 2);
    EXPECT_EQ(r.local_rank.source, name);
  }
  // OMPI sets both: the global rank wins for the rank, the local for the local rank.
  const RankEnv r = detect_rank(
      map_env({{"OMPI_COMM_WORLD_RANK", "9"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  EXPECT_EQ(r.rank, 9);
  EXPECT_EQ(*r.local_rank.value, 1);
}

TEST(RankEnvTest, ProcessEnvironmentReadsTheRealEnvironment) {
  ::setenv("SSGD_RANK_ENV_TEST_VARIABLE", "12", 1);
  EXPECT_EQ(process_environment("SSGD_RANK_ENV_TEST_VARIABLE"), "12");
  ::unsetenv("SSGD_RANK_ENV_TEST_VARIABLE");
  EXPECT_FALSE(process_environment("SSGD_RANK_ENV_TEST_VARIABLE"));
}

TEST(SessionSettingsTest, DefaultsAndOverridesAndMalformedValuesKeepTheDefault) {
  SessionSettings d = read_session_settings(map_env({}));
  EXPECT_EQ(d.out_dir, "ssgd-trace");
  EXPECT_EQ(d.flush_ms, 1000);
  EXPECT_TRUE(d.problems.empty());
  SessionSettings s = read_session_settings(map_env({{"SSGD_TRACER_OUT", "/tmp/x"}, {"SSGD_TRACER_FLUSH_MS", "250"}}));
  EXPECT_EQ(s.out_dir, "/tmp/x");
  EXPECT_EQ(s.flush_ms, 250);
  SessionSettings bad = read_session_settings(map_env({{"SSGD_TRACER_OUT", ""}, {"SSGD_TRACER_FLUSH_MS", "soon"}}));
  EXPECT_EQ(bad.out_dir, "ssgd-trace");
  EXPECT_EQ(bad.flush_ms, 1000);
  ASSERT_EQ(bad.problems.size(), 2u);
  EXPECT_NE(bad.problems[1].find("SSGD_TRACER_FLUSH_MS='soon'"), std::string::npos) << bad.problems[1];
}

TEST(SessionSettingsTest, FatalSignalFlushIsOnByDefaultAndSetByTheEnvironment) {
  SessionSettings d = read_session_settings(map_env({}));
  EXPECT_TRUE(d.signals);
  EXPECT_EQ(d.signal_flush_ms, 2000);
  SessionSettings off = read_session_settings(
      map_env({{"SSGD_TRACER_SIGNALS", "0"}, {"SSGD_TRACER_SIGNAL_FLUSH_MS", "500"}}));
  EXPECT_FALSE(off.signals);
  EXPECT_EQ(off.signal_flush_ms, 500);
  SessionSettings bad = read_session_settings(
      map_env({{"SSGD_TRACER_SIGNALS", "no"}, {"SSGD_TRACER_SIGNAL_FLUSH_MS", "-1"}}));
  EXPECT_TRUE(bad.signals);
  EXPECT_EQ(bad.signal_flush_ms, 2000);
  ASSERT_EQ(bad.problems.size(), 2u);
  EXPECT_NE(bad.problems[0].find("SSGD_TRACER_SIGNALS='no'"), std::string::npos) << bad.problems[0];
}

// A 0/1 setting: both values set it, empty or unset keeps it, anything else
// keeps it and says what stays.
TEST(RankEnvTest, ASwitchIsZeroOrOneAndAnythingElseIsSaid) {
  std::vector<std::string> problems;
  bool v = false;
  read_switch(map_env({{"S", "1"}}), "S", v, "kept", problems);
  EXPECT_TRUE(v);
  read_switch(map_env({{"S", ""}}), "S", v, "kept", problems);
  read_switch(map_env({}), "S", v, "kept", problems);
  EXPECT_TRUE(v);
  read_switch(map_env({{"S", "0"}}), "S", v, "kept", problems);
  EXPECT_FALSE(v);
  EXPECT_TRUE(problems.empty());
  read_switch(map_env({{"S", "on"}}), "S", v, "it stays off", problems);
  EXPECT_FALSE(v);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "S='on' is not 0 or 1; it stays off");
}

}  // namespace
}  // namespace ssgd::tracer
