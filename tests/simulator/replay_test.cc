#include "simulator/replay/replay.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "presentation/report/report.h"
#include "tests/support/report_context.h"

#include <sstream>

namespace ssgd::sim {
namespace {

trace::LayerProfile profile() {
  trace::LayerProfile p;
  p.batch_per_gpu = 32;
  for (int l = 0; l < 4; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(1'000'000), Duration(2'000'000),
                        4'000'000, std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

TEST(Replay, OneWorkerIsComputeOnly) {
  Scenario s;
  s.iterations = 3;
  const auto r = replay(profile(), s);
  EXPECT_EQ(r.iteration_time, Duration(12'000'000));
  EXPECT_EQ(r.breakdown.compute, Duration(12'000'000));
  EXPECT_EQ(r.breakdown.exposed_comm, Duration::zero());
  EXPECT_DOUBLE_EQ(r.scaling_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(r.throughput_samples_per_s, 32 / 0.012);
  EXPECT_EQ(r.collectives_per_iteration, 0);
}

TEST(Replay, MoreWorkersAreSlowerPerIterationAndReportIsConsistent) {
  Scenario s;
  s.nodes = 4;
  s.gpus_per_node = 2;
  s.iterations = 4;
  s.overlap_policy = OverlapPolicy::kBsp;
  const auto bsp = replay(profile(), s);
  s.overlap_policy = OverlapPolicy::kWfbp;
  const auto wfbp = replay(profile(), s);
  EXPECT_GT(bsp.iteration_time, wfbp.iteration_time);
  EXPECT_LT(wfbp.scaling_efficiency, 1.0);
  EXPECT_NEAR(wfbp.speedup, 8 * wfbp.scaling_efficiency, 1e-12);
  EXPECT_EQ(bsp.breakdown.exposed_comm, bsp.comm_per_iteration);
  EXPECT_EQ(wfbp.collectives_per_iteration, 4);
  EXPECT_EQ(*wfbp.closed_form, wfbp.iteration_time);

  const auto j =
      report::report_json(wfbp, s, testing::report_context("x.csv", "layer-profile-csv"));
  for (const char* key : {"iteration_time_ns", "throughput_samples_per_s", "scaling_efficiency"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"compute_ns", "exposed_comm_ns", "io_ns", "idle_ns"}) {
    EXPECT_TRUE(j["breakdown"].contains(key)) << key;
  }
  EXPECT_EQ(j["iteration_time_ns"].get<std::int64_t>(), wfbp.iteration_time.ns());
}

// One rank standing for identical ranks gives every time the full DAG gives,
// under both network models and both policies; only the task count shrinks.
TEST(Replay, FoldedRanksGiveTheFullDagsTimes) {
  for (const std::string model : {"analytical", "flow"}) {
    for (const auto policy : {OverlapPolicy::kBsp, OverlapPolicy::kWfbp, OverlapPolicy::kPriority}) {
      Scenario s;
      s.nodes = 4;
      s.gpus_per_node = 2;
      s.iterations = 3;
      s.network_model = model;
      s.overlap_policy = policy;
      // Priority: small partitions and a credit, so batches form; prefetch.
      s.policy_params.partition_bytes = 1'000'000;
      s.policy_params.credit_bytes = 3'000'000;
      if (policy == OverlapPolicy::kPriority) s.policy_params.prefetch_depth = 2;
      s.io_time = Duration(300'000);
      s.update_time = Duration(200'000);
      ReplayOptions full;
      full.keep_schedule = true;  // a timeline needs every rank: never folded
      const auto folded = replay(profile(), s);
      const auto all = replay(profile(), s, full);
      SCOPED_TRACE(std::string(model) + " " + to_string(policy));
      EXPECT_EQ(folded.ranks_simulated, 1);
      EXPECT_EQ(all.ranks_simulated, 8);
      EXPECT_LT(folded.tasks * 4, all.tasks);
      EXPECT_EQ(folded.iteration_times, all.iteration_times);
      EXPECT_EQ(folded.iteration_time, all.iteration_time);
      EXPECT_EQ(folded.breakdown.compute, all.breakdown.compute);
      EXPECT_EQ(folded.breakdown.exposed_comm, all.breakdown.exposed_comm);
      EXPECT_EQ(folded.breakdown.idle, all.breakdown.idle);
      EXPECT_EQ(folded.critical_path.length, all.critical_path.length);
      ASSERT_EQ(folded.collectives.size(), all.collectives.size());
      for (std::size_t c = 0; c < all.collectives.size(); ++c) {
        EXPECT_EQ(folded.collectives[c].time, all.collectives[c].time);
      }
    }
  }
}

TEST(Replay, PartitionsStartedTogetherAreReportedAsOneCollective) {
  Scenario s;
  s.nodes = 4;
  s.iterations = 2;
  s.overlap_policy = OverlapPolicy::kPriority;
  s.policy_params.partition_bytes = 1'000'000;  // each 4 MB gradient: 4 partitions
  s.policy_params.credit_bytes = 0;
  const auto one_at_a_time = replay(profile(), s);
  std::int64_t bytes = 0;
  for (const auto& c : one_at_a_time.collectives) bytes += c.bytes;
  EXPECT_EQ(one_at_a_time.collectives.size(), 4u * profile().layers.size());
  EXPECT_EQ(bytes, 4'000'000 * static_cast<std::int64_t>(profile().layers.size()));
  s.policy_params.credit_bytes = 1LL << 40;  // everything ready at once goes together
  const auto together = replay(profile(), s);
  bytes = 0;
  for (const auto& c : together.collectives) bytes += c.bytes;
  EXPECT_LT(together.collectives.size(), one_at_a_time.collectives.size());
  EXPECT_EQ(bytes, 4'000'000 * static_cast<std::int64_t>(profile().layers.size()));
  EXPECT_LT(together.comm_per_iteration, one_at_a_time.comm_per_iteration);  // fewer start-ups
}

TEST(Replay, MeasuredCommIsReplayedAsGiven) {
  auto p = profile();
  for (auto& row : p.layers) row.comm = Duration(5'000'000);
  Scenario s;
  s.nodes = 2;
  s.overlap_policy = OverlapPolicy::kBsp;
  s.iterations = 2;
  const auto r = replay(p, s);
  EXPECT_TRUE(r.comm_replayed);
  EXPECT_EQ(r.comm_per_iteration, Duration(20'000'000));
  EXPECT_EQ(r.iteration_time, Duration(12'000'000 + 20'000'000));
}

TEST(Replay, IoAndUpdateAreOnThePath) {
  Scenario s;
  s.io_time = Duration(500);
  s.h2d_time = Duration(250);
  s.update_time = Duration(100);
  s.iterations = 2;
  const auto r = replay(profile(), s);
  EXPECT_EQ(r.iteration_time, Duration(12'000'000 + 850));
  EXPECT_EQ(r.breakdown.io, Duration(750));
}

// A trace's collectives without a size (walk/trace_profile.h): their measured
// times are replayed, and the output says so; a policy that merges gradients
// models every collective from its size and refuses, naming the record and
// how to supply sizes (issue 33: it replayed 0 ns of communication).
trace::LayerProfile unsized_trace_profile() {
  trace::LayerProfile p = profile();
  p.source = "run.ssgdt";
  for (auto& row : p.layers) {
    row.grad_bytes = 0;
    row.comm = Duration(500'000);
  }
  p.measured_only.without_size = 8;
  p.measured_only.first_record = 42;
  p.measured_only.first_field = "collective.size_bytes";
  p.measured_only.first_what = "the ALL_REDUCE collective has no size";
  return p;
}

TEST(Replay, CollectivesWithoutSizeReplayAtTheirMeasuredDurationsAndTheOutputSaysSo) {
  Scenario s;
  s.gpus_per_node = 2;
  s.iterations = 3;
  const auto r = replay(unsized_trace_profile(), s);
  EXPECT_TRUE(r.comm_replayed);
  EXPECT_EQ(r.unsized_collectives_replayed, 8);
  EXPECT_EQ(r.comm_per_iteration, Duration(4 * 500'000));
  std::ostringstream text;
  report::print_summary(r, s, testing::report_context("run.ssgdt", "ssgd-trace"), text);
  EXPECT_NE(text.str().find("note: 8 collectives had no size; replayed at their measured "
                            "durations"),
            std::string::npos)
      << text.str();
  const auto j = report::report_json(r, s, testing::report_context("run.ssgdt", "ssgd-trace"));
  EXPECT_EQ(j["communication"]["collectives_without_size_replayed"].get<std::int64_t>(), 8);
  // A profile without such collectives has no note.
  const auto plain = replay(profile(), s);
  EXPECT_FALSE(report::report_json(
                   plain, s, testing::report_context("x.csv", "layer-profile-csv"))["communication"]
                   .contains("collectives_without_size_replayed"));
}

TEST(Replay, APolicyThatModelsCollectivesRefusesOnesWithoutSize) {
  Scenario s;
  s.gpus_per_node = 2;
  s.iterations = 3;
  s.overlap_policy = OverlapPolicy::kDdp;
  try {
    (void)replay(unsized_trace_profile(), s);
    FAIL() << "replayed";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "run.ssgdt");
    EXPECT_EQ(e.where().record, 42);
    EXPECT_EQ(e.where().field, "collective.size_bytes");
    for (const char* part : {"the ALL_REDUCE collective has no size (and 7 more like it)",
                             "policy.overlap ddp merges gradients", "ssgd_marks",
                             "record_shapes=True", "policy.overlap wfbp or bsp"}) {
      EXPECT_NE(e.reason().find(part), std::string::npos) << part << " in " << e.reason();
    }
  }
  // One worker models nothing: no refusal.
  s.gpus_per_node = 1;
  EXPECT_NO_THROW((void)replay(unsized_trace_profile(), s));
}

// A clock overflow caused by the input's own times names the input, not
// the scenario's iterations (issue 33: a 57-year collective).
TEST(Replay, AnInputWhoseIterationOverflowsTheClockIsNamed) {
  trace::LayerProfile p = profile();
  p.source = "huge.csv";
  p.layers[2].comm = Duration(std::int64_t{1} << 61);
  Scenario s;
  s.gpus_per_node = 2;
  s.iterations = 3;
  try {
    (void)replay(p, s);
    FAIL() << "replayed";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "huge.csv");
    EXPECT_NE(e.reason().find("layer 'l2'"), std::string::npos) << e.reason();
    EXPECT_EQ(e.reason().find("iterations"), std::string::npos) << e.reason();
  }
}

}  // namespace
}  // namespace ssgd::sim
