// Real GPU captures (issues 5 and 6): the bundled dataset
// traces/datasets/h200-pytorch, PyTorch training on one NVIDIA H200 captured
// by ssgd's tracer and by torch.profiler (docs/runs/2026-11-26-h200-checklist),
// replayed by ssgd as `ssgd dataset verify` replays it.
//   own run   the replay against the iterations it was captured from, as the
//             captured run's training loop timed them (config
//             captured_iteration_ns): the issues' targets, 2% for ssgd's
//             own traces and 5% for imported Kineto traces
//   untraced  the replay against an untraced run's median (measured): the
//             capture's own cost is in this difference
// The test prints docs/validation.md's section 9 table and holds each error
// to the figures stated there.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/logging.h"
#include "simulator/dataset/dataset_replay.h"
#include "traces/dataset/dataset_check.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDataset = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/h200-pytorch";

struct Row {
  std::string id;
  double predicted_ms = 0, captured_ms = 0, untraced_ms = 0;
  [[nodiscard]] double own_error() const { return 100 * (predicted_ms - captured_ms) / captured_ms; }
  [[nodiscard]] double untraced_error() const {
    return 100 * (predicted_ms - untraced_ms) / untraced_ms;
  }
};

class H200Validation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_levels("error");  // each replay warns that one GPU communicates nothing
    const trace::DatasetCheck check = trace::check_dataset(kDataset);
    problems_ = check.problems.size();
    std::map<std::string, const trace::DatasetEntry*> by_id;
    for (const auto& e : check.manifest.entries) by_id[e.id] = &e;
    rows_ = new std::map<std::string, Row>;
    for (const DatasetCase& c : replay_dataset(kDataset, check.manifest, {})) {
      Row r;
      r.id = c.entry;
      r.predicted_ms = static_cast<double>(c.predicted.ns()) / 1e6;
      r.untraced_ms = static_cast<double>(c.measured.median.ns()) / 1e6;
      r.captured_ms =
          by_id.at(c.entry)->config.at("captured_iteration_ns").get<double>() / 1e6;
      (*rows_)[r.id] = r;
    }
  }
  static void TearDownTestSuite() { delete rows_; }
  static const Row& row(const std::string& id) { return rows_->at(id); }

  static inline std::size_t problems_ = 0;
  static inline std::map<std::string, Row>* rows_ = nullptr;
};

TEST_F(H200Validation, DatasetIsIntact) {
  EXPECT_EQ(problems_, 0u);
  EXPECT_EQ(rows_->size(), 5u);
}

TEST_F(H200Validation, PrintTable) {
  std::printf("\n| entry | replay | captured run | error | untraced run | error |\n"
              "|---|---:|---:|---:|---:|---:|\n");
  for (const auto& [id, r] : *rows_) {
    std::printf("| %s | %.3f ms | %.3f ms | %+.2f%% | %.3f ms | %+.2f%% |\n", id.c_str(),
                r.predicted_ms, r.captured_ms, r.own_error(), r.untraced_ms, r.untraced_error());
  }
}

// Issue 6: a replay of its own trace within 2%, of an imported Kineto trace
// within 5% (today: +0.05% at most, and +0.03%).
TEST_F(H200Validation, EachReplayReproducesTheIterationsItWasCapturedFrom) {
  for (const char* id : {"resnet50-fp32", "resnet50-amp", "vgg16", "bert-base"}) {
    SCOPED_TRACE(id);
    EXPECT_LE(std::abs(row(id).own_error()), 2.0);
    EXPECT_LE(std::abs(row(id).own_error()), 1.0);  // today 0.50% at most
  }
  EXPECT_LE(std::abs(row("vgg16-kineto").own_error()), 5.0);
  EXPECT_LE(std::abs(row("vgg16-kineto").own_error()), 0.5);
}

// Against untraced runs the capture's own cost shows: ResNet-50 is bound by
// the host's launches on an H200, and the marks' NVTX ranges slowed its
// captured run (+6.7% today; with AMP, where the GPU's share is smaller,
// +52%); the others lose 2% or less.
TEST_F(H200Validation, AgainstAnUntracedRunTheCaptureCostShows) {
  EXPECT_GT(row("resnet50-fp32").untraced_error(), 0.0);
  EXPECT_LE(row("resnet50-fp32").untraced_error(), 8.0);
  EXPECT_GT(row("resnet50-amp").untraced_error(), 40.0);
  EXPECT_LE(row("resnet50-amp").untraced_error(), 60.0);
  for (const char* id : {"vgg16", "bert-base", "vgg16-kineto"}) {
    SCOPED_TRACE(id);
    EXPECT_LE(std::abs(row(id).untraced_error()), 2.5);
  }
}

}  // namespace
}  // namespace ssgd::sim
