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
#include <filesystem>
#include <string>

#include "tests/support/captured_dataset_rows.h"

namespace ssgd::sim {
namespace {

struct H200Dataset {
  static std::filesystem::path path() {
    return std::filesystem::path(SSGD_SOURCE_DIR) / "traces/datasets/h200-pytorch";
  }
};
using H200Validation = testing::CapturedDatasetTest<H200Dataset>;

TEST_F(H200Validation, DatasetIsIntact) {
  EXPECT_EQ(data_->problems, 0u);
  EXPECT_EQ(data_->rows.size(), 6u);
}

TEST_F(H200Validation, PrintTable) { testing::print_captured_rows(*data_); }

// Issue 6: a replay of its own trace within 2%, of an imported Kineto trace
// within 5% (today: +0.05% at most, and +0.03%).
TEST_F(H200Validation, EachReplayReproducesTheIterationsItWasCapturedFrom) {
  for (const char* id : {"resnet50-fp32", "resnet50-amp", "vgg16", "bert-base", "mlp-graphs"}) {
    SCOPED_TRACE(id);
    EXPECT_LE(std::abs(row(id).own_error()), 2.0);
    EXPECT_LE(std::abs(row(id).own_error()), 1.0);  // today 0.50% at most
  }
  EXPECT_LE(std::abs(row("vgg16-kineto").own_error()), 5.0);
  EXPECT_LE(std::abs(row("vgg16-kineto").own_error()), 0.5);
}

// Issue 38: CUDA graphs (torch.compile mode reduce-overhead, one graph per
// block), captured on 2026-11-28 (docs/runs/2026-11-28-h200-window-graphs).
// The replay places each graph's kernels at its launch call: -0.11% today.
// Placed by their own GPU times, as before, the host's waits between the
// graphs were lost and it came out 24% short.
TEST_F(H200Validation, CudaGraphsReplayAsTheirLaunchesRan) {
  EXPECT_LE(std::abs(row("mlp-graphs").own_error()), 1.0);
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
  // The graphed MLP leaves the host little but the marks' hooks and NVTX
  // ranges, nine layers' worth a step, and the tracer's records: +77%.
  EXPECT_GT(row("mlp-graphs").untraced_error(), 60.0);
  EXPECT_LE(row("mlp-graphs").untraced_error(), 90.0);
  for (const char* id : {"vgg16", "bert-base", "vgg16-kineto"}) {
    SCOPED_TRACE(id);
    EXPECT_LE(std::abs(row(id).untraced_error()), 2.5);
  }
}

}  // namespace
}  // namespace ssgd::sim
