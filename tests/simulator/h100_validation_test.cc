// Real GPU captures on an H100: the bundled dataset
// traces/datasets/h100-pytorch, PyTorch training on one NVIDIA H100 80GB HBM3
// captured by ssgd's tracer (docs/runs/2026-11-27-h100-h200), replayed by ssgd
// as `ssgd dataset verify` replays it.
//   own run   the replay against the iterations it was captured from, as the
//             captured run's training loop timed them (config
//             captured_iteration_ns): within 2%, as for the H200 captures
//             (h200_validation_test; today 0.07% at most)
//   untraced  the replay against an untraced run's median (measured): the
//             capture's own cost (marks and tracer) is in this difference;
//             printed, not held to a bound
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/support/captured_dataset_rows.h"

namespace ssgd::sim {
namespace {

struct H100Dataset {
  static std::filesystem::path path() {
    return std::filesystem::path(SSGD_SOURCE_DIR) / "traces/datasets/h100-pytorch";
  }
};
using H100Validation = testing::CapturedDatasetTest<H100Dataset>;

TEST_F(H100Validation, DatasetIsIntact) {
  EXPECT_EQ(data_->problems, 0u);
  EXPECT_EQ(data_->rows.size(), 3u);
}

TEST_F(H100Validation, PrintTable) { testing::print_captured_rows(*data_); }

// A replay of its own trace within 2% of the iterations it was captured from
// (today: +0.01%, -0.03% and -0.07%).
TEST_F(H100Validation, EachReplayReproducesTheIterationsItWasCapturedFrom) {
  for (const char* id : {"resnet50-fp32", "bert-base", "bert-fsdp2"}) {
    SCOPED_TRACE(id);
    EXPECT_LE(std::abs(row(id).own_error()), 2.0);
  }
}

}  // namespace
}  // namespace ssgd::sim
