// Issue 4's validation: GoogLeNet speedups at 2, 4 and 8 nodes for WFBP,
// MG-WFBP and one all-reduce after backward, predicted from the single-node
// profile (../shared/data/bcaffe/tmpcomm.log, its comm times dropped: one
// node has no network) and a 10 GbE model calibrated on measurements of the
// same cluster, against the speedups the MG-WFBP paper measured.
//
// Two calibrations, each a per-node-count ring fit (ssgd calibrate
// --per-ranks):
//   osu       the OSU all-reduce curves allreduce{2,4,8}.log (4 to 1 MiB);
//   training  the per-layer all-reduce times the WFBP runs logged
//             (tmp{2,4,8}comm.log, 4th field), i.e. all-reduces measured
//             while training ran beside them.
// The test prints both tables (docs/validation.md, section 5, holds them),
// checks the policies' order, and holds each median error to a band so a
// change that moves them shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "simulator/calibration/band_fit.h"
#include "simulator/input/scenario_inputs.h"
#include "traces/import/measurement_files.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/replay/replay.h"
#include "traces/import/bcaffe/bcaffe_log.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kData = "../shared/data/bcaffe";

struct Measured {
  int nodes;
  double wfbp, mgwfbp, single;
};
// ../shared/data/README.md (the raw numbers are in B-Caffe scripts/gmwfbp.py).
constexpr Measured kMeasured[] = {
    {2, 1.83, 1.93, 1.53}, {4, 3.67, 3.67, 2.82}, {8, 6.16, 7.41, 5.44}};

trace::LayerProfile without_comm(trace::LayerProfile p) {
  for (auto& row : p.layers) row.comm.reset();
  return p;
}

// A per-node-count ring fit of `points` (grouped by ranks), written to `file`.
fs::path calibrate(const std::vector<std::vector<trace::Measurement>>& per_ranks, const std::string& name,
                   std::int64_t max_bands) {
  NetworkCalibration cal;
  cal.level = "inter_node";
  for (const auto& points : per_ranks) {
    FitOptions o;
    o.max_bands = max_bands;
    cal.collectives.push_back(fit_bands(points, o).collective);
  }
  const fs::path file = fs::path(::testing::TempDir()) / name;
  write_network_calibration(cal, file);
  return file;
}

double speedup(const trace::LayerProfile& p, int nodes, OverlapPolicy policy, const fs::path& cal) {
  Scenario s;
  s.nodes = nodes;
  s.gpus_per_node = 1;
  s.inter_node.preset = "10gbe";
  s.calibration = cal;
  s.overlap_policy = policy;
  s.iterations = 5;
  read_scenario_files(s);
  const ReplayResult r = replay(p, s);
  return r.speedup;
}

// Prints the table; returns the median absolute relative error.
double compare(const trace::LayerProfile& p, const fs::path& cal, const char* label) {
  std::printf("\n%s\n| nodes | policy | predicted speedup | measured | error |\n|---|---|---|---|---|\n",
              label);
  std::vector<double> errors;
  for (const auto& m : kMeasured) {
    double previous_wfbp = 0;
    for (const auto& [policy, measured] :
         {std::pair{OverlapPolicy::kWfbp, m.wfbp}, std::pair{OverlapPolicy::kMgWfbp, m.mgwfbp},
          std::pair{OverlapPolicy::kSingle, m.single}}) {
      const double predicted = speedup(p, m.nodes, policy, cal);
      const double err = (predicted - measured) / measured;
      errors.push_back(std::fabs(err));
      std::printf("| %d | %s | %.2f | %.2f | %+.1f%% |\n", m.nodes, to_string(policy), predicted,
                  measured, 100 * err);
      if (policy == OverlapPolicy::kWfbp) previous_wfbp = predicted;
      // MG-WFBP never loses to WFBP; one all-reduce after backward hides nothing.
      if (policy == OverlapPolicy::kMgWfbp) {
        EXPECT_GE(predicted, previous_wfbp - 1e-9) << m.nodes;
      }
      if (policy == OverlapPolicy::kSingle) {
        EXPECT_LT(predicted, previous_wfbp) << m.nodes;
      }
    }
  }
  std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
  const double median = errors[errors.size() / 2];
  std::printf("median absolute error: %.1f%%\n", 100 * median);
  return median;
}

TEST(BcaffeValidation, PolicySpeedupsFromACalibrated10GbEModel) {
  if (!fs::exists(kData / "tmpcomm.log") || !fs::exists(kData / "allreduce8.log")) {
    GTEST_SKIP() << "reference data not found at " << kData << " (run from the repository root "
                 << "with ../shared/data present)";
  }
  const trace::LayerProfile one = without_comm(trace::read_bcaffe_log(kData / "tmpcomm.log"));

  std::vector<std::vector<trace::Measurement>> osu, training;
  for (const int n : {2, 4, 8}) {
    trace::MeasurementOptions o;
    o.ranks = n;  // the 4-node file does not say
    osu.push_back(trace::read_measurements(kData / ("allreduce" + std::to_string(n) + ".log"), o));
    const auto run = trace::read_bcaffe_log(kData / ("tmp" + std::to_string(n) + "comm.log"));
    std::vector<trace::Measurement> points;
    for (const auto& row : run.layers) {
      if (!row.comm || *row.comm <= Duration::zero() || row.grad_bytes <= 0) continue;
      points.push_back({CollectiveOp::kAllReduce, n, static_cast<double>(row.grad_bytes), *row.comm,
                        "tmp" + std::to_string(n) + "comm.log", 0});
    }
    training.push_back(std::move(points));
  }
  const double osu_median =
      compare(one, calibrate(osu, "bcaffe_osu.yaml", 4), "calibrated on the OSU curves");
  const double training_median = compare(one, calibrate(training, "bcaffe_training.yaml", 2),
                                         "calibrated on the all-reduces logged in training");
  // Bands around today's figures (8.9% and 4.5%), not the 5% target,
  // which the OSU calibration does not meet: docs/validation.md, section 5.
  EXPECT_LT(osu_median, 0.10);
  EXPECT_LT(training_median, 0.05);
}

}  // namespace
}  // namespace ssgd::sim
