// ssgd calibrate's parts: the measurement readers (OSU, nccl-tests text and
// JSON), the band fit, the calibration file, and the validation on the OSU
// curves of ../shared/data/bcaffe (held-back sizes predicted within 10%).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "simulator/calibration/band_fit.h"
#include "simulator/calibration/measurement.h"
#include "simulator/calibration/network_calibration.h"
#include "tests/support/test_files.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

class Calibration : public ssgd::testing::TempDirTest {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    ssgd::testing::write_file_bytes(p, text);
    return p;
  }
  std::string error_of(const std::filesystem::path& p, MeasurementOptions o = {}) {
    try {
      read_measurements(p, o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(Calibration, ReadsOsuWithAndWithoutNodePrefix) {
  const auto a = write("a.log", "# OSU MPI Allreduce Latency Test v5.4.0\n# Size Avg Latency(us)\n2,4 31.92\n2,8 32.20\n");
  const auto m = read_measurements(a, {});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].ranks, 2);
  EXPECT_EQ(m[0].bytes, 4);
  EXPECT_EQ(m[0].time, Duration(31'920));
  EXPECT_EQ(m[0].op, CollectiveOp::kAllReduce);
  const auto b = write("b.log", "# OSU MPI Allgather Latency Test\n4 10.5\n8 11\n");
  EXPECT_THAT(error_of(b), HasSubstr("give --ranks"));
  MeasurementOptions o;
  o.ranks = 4;
  const auto mb = read_measurements(b, o);
  EXPECT_EQ(mb[1].ranks, 4);
  EXPECT_EQ(mb[1].op, CollectiveOp::kAllGather);
}

TEST_F(Calibration, GarbageLinesNameFileLineAndField) {
  const auto g = write("g.log", "# OSU MPI Allreduce Latency Test\n2,4 31.92\n2,8 fast\n");
  EXPECT_THAT(error_of(g), HasSubstr("g.log:3: field 'latency': expected a number, got 'fast'"));
  const auto z = write("z.log", "# OSU MPI Allreduce Latency Test\n2,0 31.92\n");
  EXPECT_THAT(error_of(z), HasSubstr("z.log:2: field 'size': must be greater than zero"));
  const auto c = write("c.log", "# OSU MPI Allreduce Latency Test\n2,4 31.92 extra\n");
  EXPECT_THAT(error_of(c), HasSubstr("c.log:2: field 'line'"));
  const auto n = write("n.txt", "# nccl-tests version 2.13\n# Collective test starting: all_reduce_perf\n"
                                "#  Rank  0 Group  0 Pid 1 on h device  0\n"
                                "     1024   256   float   sum   -1   12.3   0.08   0.00   0   12.1   0.08   0.00  0\n"
                                "     2048   512   float   sum   -1   oops   0.08   0.00   0   12.1   0.08   0.00  0\n");
  EXPECT_THAT(error_of(n), HasSubstr("n.txt:5: field 'time': expected a number, got 'oops'"));
  const auto e = write("e.txt", "hello\n");
  EXPECT_THAT(error_of(e), HasSubstr("not recognised"));
  const auto j = write("j.json", R"({"devices":[{},{}],"args":"all_reduce_perf","results":[{"size":-3,"out_of_place":{"time":2}}]})");
  EXPECT_THAT(error_of(j), HasSubstr("field 'results[0].size': must be greater than zero"));
}

TEST_F(Calibration, ReadsNcclTestsTextAndJson) {
  const auto t = write("t.txt",
                       "0: # nccl-tests version 2.13.8\n"
                       "0: # Collective test starting: all_reduce_perf\n"
                       "0: #  Rank  0 Group  0 Pid 1 on a device  0 [0x0f] NVIDIA H100\n"
                       "0: #  Rank  1 Group  0 Pid 2 on a device  1 [0x10] NVIDIA H100\n"
                       "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                       "0:      8388608       2097152     float     sum      -1    204.8   40.96   76.80      0    201.1   41.71   78.20      0\n"
                       "0: # Avg bus bandwidth    : 76.8\n");
  const auto m = read_measurements(t, {});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].ranks, 2);
  EXPECT_EQ(m[0].bytes, 8388608);
  EXPECT_EQ(m[0].time, Duration(204'800));
  const auto j = write("r.json", R"({"version":3,"args":"./all_gather_perf -b 8 -e 1G","devices":[{"rank":0},{"rank":1},{"rank":2},{"rank":3}],
    "results":[{"size":1048576,"count":65536,"type":"float","out_of_place":{"time":50.5,"alg_bw":20.7,"bus_bw":15.5,"nwrong":0}}]})");
  const auto mj = read_measurements(j, {});
  ASSERT_EQ(mj.size(), 1u);
  EXPECT_EQ(mj[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(mj[0].ranks, 4);
  EXPECT_EQ(mj[0].time, Duration(50'500));
}

std::vector<Measurement> synthetic(double alpha, double beta, double break_at, double alpha2, double beta2) {
  std::vector<Measurement> out;
  for (std::int64_t p : {2, 4, 8}) {
    for (double m = 1024; m <= 4e6; m *= 1.5) {
      const auto t = alpha_beta_terms(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, p);
      const bool high = m > break_at;
      const double s = t.alpha_count * (high ? alpha2 : alpha) + t.beta_factor * m * (high ? beta2 : beta);
      out.push_back({CollectiveOp::kAllReduce, p, std::floor(m), duration_from_seconds(s), "synthetic", 0});
    }
  }
  return out;
}

TEST(BandFit, RecoversAlphaBetaAndAPlantedBreakpoint) {
  FitOptions o;
  o.max_bands = 1;
  const auto one = fit_bands(synthetic(10e-6, 1e-9, 1e300, 0, 0), o);
  ASSERT_EQ(one.collective.bands.size(), 1u);
  EXPECT_NEAR(static_cast<double>(one.collective.bands[0].latency.ns()), 10'000, 2);
  EXPECT_NEAR(one.collective.bands[0].bandwidth_bytes_per_s, 1e9, 1e6);
  o.max_bands = 4;
  const auto two = fit_bands(synthetic(5e-6, 2e-9, 100e3, 40e-6, 0.8e-9), o);
  ASSERT_EQ(two.collective.bands.size(), 2u) << "BIC should find exactly the planted break";
  EXPECT_GT(two.collective.bands[0].max_bytes, 60e3);
  EXPECT_LT(two.collective.bands[0].max_bytes, 160e3);
  EXPECT_NEAR(static_cast<double>(two.collective.bands[1].latency.ns()), 40'000, 50);
  EXPECT_LT(two.collective.bands[0].max_error, 1e-3);
}

TEST_F(Calibration, FileRoundTripAndStrictReader) {
  const auto fit = fit_bands(synthetic(5e-6, 2e-9, 100e3, 40e-6, 0.8e-9), FitOptions{});
  NetworkCalibration cal;
  cal.level = "inter_node";
  cal.collectives.push_back(fit.collective);
  const auto p = dir_ / "net.yaml";
  write_network_calibration(cal, p);
  const auto back = read_network_calibration(p);
  ASSERT_EQ(back.collectives.size(), 1u);
  ASSERT_EQ(back.collectives[0].bands.size(), fit.collective.bands.size());
  EXPECT_EQ(back.collectives[0].bands[0].latency, fit.collective.bands[0].latency);
  EXPECT_NEAR(back.collectives[0].bands[0].bandwidth_bytes_per_s, fit.collective.bands[0].bandwidth_bytes_per_s, 1);
  EXPECT_EQ(back.find(CollectiveOp::kAllReduce, 4), &back.collectives[0]);
  EXPECT_EQ(back.find(CollectiveOp::kBroadcast, 4), nullptr);
  const auto bad = write("bad.yaml", "ssgd_network_calibration: 1\nlevel: inter_node\ncollectives:\n"
                                     "  - op: all_reduce\n    algorithm: ring\n    bands:\n"
                                     "      - {max_bytes: inf, latency: 5us, bandwidth: 0GB/s}\n");
  try {
    read_network_calibration(bad);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.yaml:7: field 'collectives[0].bands[0].bandwidth'"));
  }
  const auto unknown = write("u.yaml", "ssgd_network_calibration: 1\nlevel: inter_node\nflavour: 2\ncollectives: []\n");
  EXPECT_THROW(read_network_calibration(unknown), InputError);
}

TEST(OsuValidation, HeldBackSizesWithinTenPercent) {
  const std::filesystem::path data = "../shared/data/bcaffe";
  if (!std::filesystem::exists(data / "allreduce4.log")) {
    GTEST_SKIP() << "reference data not found at " << data << " (run from the repository root)";
  }
  std::printf("\n| nodes | held-back sizes | median error | max error |\n|---|---|---|---|\n");
  for (std::int64_t p : {2, 4, 8}) {
    MeasurementOptions mo;
    mo.ranks = p;  // allreduce4.log has no node prefix
    const auto points = read_measurements(data / ("allreduce" + std::to_string(p) + ".log"), mo);
    FitOptions fo;
    fo.holdout = 2;  // every second size is predicted, not fitted
    const FitResult fit = fit_bands(points, fo);
    ASSERT_EQ(fit.holdout.size(), 1u);
    const auto& h = fit.holdout[0];
    std::printf("| %lld | %lld | %.1f%% | %.1f%% |\n", static_cast<long long>(p),
                static_cast<long long>(h.points), 100 * h.median_error, 100 * h.max_error);
    EXPECT_LE(h.median_error, 0.10) << p << " nodes";
  }
}

}  // namespace
}  // namespace ssgd::sim
