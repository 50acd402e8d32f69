// Validation of `ssgd calibrate` on measured data: the OSU all-reduce
// latency curves of a 10 GbE cluster at 2, 4 and 8 nodes
// (../shared/data/bcaffe/allreduce{2,4,8}.log, see ../shared/data/README.md).
// Every 2nd (then every 3rd) message size of each curve is held back, the
// bands are fitted on the rest and predict the held-back sizes; the target
// is a median relative error of 10% or less for each node count.
// docs/validation.md, section 3, records the numbers this test prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "simulator/calibration/band_fit.h"
#include "traces/import/measurement_files.h"

namespace ssgd::sim {
namespace {

const std::filesystem::path kData = "../shared/data/bcaffe";
constexpr std::int64_t kNodes[] = {2, 4, 8};

class OsuCalibration : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::int64_t p : kNodes) {
      const auto file = kData / ("allreduce" + std::to_string(p) + ".log");
      if (!std::filesystem::exists(file)) {
        GTEST_SKIP() << "reference data not found: " << file
                     << " (tests run from the repository root; ../shared/data holds data measured "
                        "by others)";
      }
      // allreduce4.log has no "nodes," prefix; the others' prefixes win over this.
      trace::MeasurementOptions o;
      o.ranks = p;
      for (auto& m : trace::read_measurements(file, o)) {
        ASSERT_EQ(m.ranks, p) << file;
        by_nodes_[p].push_back(m);
        all_.push_back(m);
      }
    }
  }

  std::map<std::int64_t, std::vector<trace::Measurement>> by_nodes_;
  std::vector<trace::Measurement> all_;
};

void print_header(const char* title) {
  std::printf(
      "\n%s\n| nodes | held back | fitted points | bands | median error | max error |\n"
      "|---|---|---|---|---|---|\n",
      title);
}

void print_row(const HoldoutError& h, const FitResult& fit, std::int64_t holdout) {
  std::int64_t fitted = 0;
  for (const auto& b : fit.collective.bands) fitted += b.points;
  std::printf("| %lld | every %lld%s size: %lld | %lld | %zu | %.1f%% | %.1f%% |\n",
              static_cast<long long>(h.ranks), static_cast<long long>(holdout),
              holdout == 2 ? "nd" : "rd", static_cast<long long>(h.points),
              static_cast<long long>(fitted), fit.collective.bands.size(), 100 * h.median_error,
              100 * h.max_error);
}

// The calibration a scenario gets from `ssgd calibrate --per-ranks` at a
// measured node count: that node count's own bands (ring terms, found
// automatically). Target met with a wide margin.
TEST_F(OsuCalibration, EachNodeCountPredictsItsHeldBackSizesWithinTenPercent) {
  for (const std::int64_t holdout : {2, 3}) {
    print_header(holdout == 2 ? "Per node count, every 2nd size held back"
                              : "Per node count, every 3rd size held back");
    for (const std::int64_t p : kNodes) {
      FitOptions o;
      o.holdout = holdout;
      const FitResult fit = fit_bands(by_nodes_[p], o);
      ASSERT_EQ(fit.holdout.size(), 1u);
      const HoldoutError& h = fit.holdout[0];
      print_row(h, fit, holdout);
      EXPECT_GT(h.points, 80) << p << " nodes";
      EXPECT_LE(h.median_error, 0.10) << p << " nodes, every " << holdout << " size held back";
    }
  }
}

// One joint fit over 2, 4 and 8 nodes (the default of `ssgd calibrate`):
// the same latency and bandwidth per band for every node count. It misses
// the target for 2 and 4 nodes: these runs do not share one per-message cost
// (docs/validation.md, section 3, shows why). The bound is the documented
// result with a margin, so that a change making it worse is noticed.
TEST_F(OsuCalibration, JointFitOverNodeCounts) {
  print_header("Joint fit over 2, 4 and 8 nodes, every 2nd size held back");
  FitOptions o;
  o.holdout = 2;
  const FitResult fit = fit_bands(all_, o);
  ASSERT_EQ(fit.holdout.size(), 3u);
  for (const HoldoutError& h : fit.holdout) {
    print_row(h, fit, o.holdout);
    EXPECT_LE(h.median_error, 0.20) << h.ranks << " nodes";
  }
}

// Extrapolation in P: fit two node counts jointly and predict every size
// of the third. Printed, not asserted: these curves do not support it.
TEST_F(OsuCalibration, LeaveOneNodeCountOut) {
  std::printf(
      "\nJoint fit over two node counts, predicting all sizes of the third\n"
      "| predicted nodes | fitted on | sizes | median error | max error "
      "|\n|---|---|---|---|---|\n");
  for (const std::int64_t out : kNodes) {
    std::vector<trace::Measurement> train;
    std::string fitted_on;
    for (const std::int64_t p : kNodes) {
      if (p == out) continue;
      train.insert(train.end(), by_nodes_[p].begin(), by_nodes_[p].end());
      fitted_on += (fitted_on.empty() ? "" : " and ") + std::to_string(p);
    }
    const FitResult fit = fit_bands(train, {});
    std::vector<double> errors;
    for (const trace::Measurement& m : by_nodes_[out]) {
      const double measured = static_cast<double>(m.time.ns());
      errors.push_back(
          std::abs(static_cast<double>(predict(fit.collective, out, m.bytes).ns()) - measured) /
          measured);
    }
    std::sort(errors.begin(), errors.end());
    const std::size_t n = errors.size();
    const double median = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
    std::printf("| %lld | %s | %zu | %.1f%% | %.1f%% |\n", static_cast<long long>(out),
                fitted_on.c_str(), n, 100 * median, 100 * errors.back());
    EXPECT_GT(n, 200u);
  }
}

}  // namespace
}  // namespace ssgd::sim
