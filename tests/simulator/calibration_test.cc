// ssgd calibrate's fits: the band fit on synthetic points with known costs,
// and the calibration file's round trip and strict reader. The measurement
// readers are tested in tests/traces/measurement_readers_test.cc;
// calibration_validation_test.cc fits the measured OSU curves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/calibration/band_fit.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_platform.h"
#include "tests/support/test_files.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------- fit

// Points of a known two-band cost: (alpha, beta) below `break_at` bytes and
// (alpha2, beta2) above, for P = 2, 4, 8 and sizes 1 KiB x 1.5^k.
std::vector<trace::Measurement> synthetic(CollectiveAlgorithm algorithm, double alpha, double beta,
                                   double break_at, double alpha2, double beta2,
                                   const std::vector<std::int64_t>& ranks = {2, 4, 8}) {
  std::vector<trace::Measurement> out;
  for (const std::int64_t p : ranks) {
    const AlphaBetaTerms t = alpha_beta_terms(CollectiveOp::kAllReduce, algorithm, p);
    for (double m = 1024; m <= 4e6; m *= 1.5) {
      const double bytes = std::floor(m);
      const bool high = bytes > break_at;
      const double s =
          t.alpha_count * (high ? alpha2 : alpha) + t.beta_factor * bytes * (high ? beta2 : beta);
      trace::Measurement x;
      x.op = CollectiveOp::kAllReduce;
      x.ranks = p;
      x.bytes = bytes;
      x.time = duration_from_seconds(s);
      x.source = "synthetic";
      out.push_back(x);
    }
  }
  return out;
}

TEST(BandFit, RecoversAlphaAndBetaExactly) {
  for (const auto algorithm : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kHalvingDoubling}) {
    FitOptions o;
    o.algorithm = algorithm;
    const auto fit = fit_bands(synthetic(algorithm, 10e-6, 1e-9, 1e300, 0, 0), o);
    ASSERT_EQ(fit.collective.bands.size(), 1u) << "one cost, one band";
    const CalibrationBand& b = fit.collective.bands[0];
    EXPECT_NEAR(static_cast<double>(b.latency.ns()), 10'000, 1);
    EXPECT_NEAR(b.bandwidth_bytes_per_s, 1e9, 1e3);
    EXPECT_LT(b.max_error, 1e-4) << "only the nanosecond rounding of the times is left";
    EXPECT_EQ(fit.collective.algorithm, algorithm);
    EXPECT_EQ(fit.collective.ranks, (std::vector<std::int64_t>{2, 4, 8}));
    EXPECT_EQ(b.points, static_cast<std::int64_t>(synthetic(algorithm, 1, 1, 1, 1, 1).size()));
  }
}

TEST(BandFit, FindsAPlantedBreakpoint) {
  const auto fit =
      fit_bands(synthetic(CollectiveAlgorithm::kRing, 5e-6, 2e-9, 100e3, 40e-6, 0.8e-9), {});
  const auto& bands = fit.collective.bands;
  ASSERT_EQ(bands.size(), 2u) << "BIC should find exactly the planted break";
  // The sizes either side of 100 kB are 87,500 and 131,250 bytes.
  EXPECT_GT(bands[0].max_bytes, 87'000);
  EXPECT_LT(bands[0].max_bytes, 131'250);
  EXPECT_TRUE(std::isinf(bands[1].max_bytes));
  EXPECT_NEAR(static_cast<double>(bands[0].latency.ns()), 5'000, 1);
  EXPECT_NEAR(bands[0].bandwidth_bytes_per_s, 0.5e9, 1e3);
  EXPECT_NEAR(static_cast<double>(bands[1].latency.ns()), 40'000, 2);
  EXPECT_NEAR(bands[1].bandwidth_bytes_per_s, 1.25e9, 1e3);
  EXPECT_LT(bands[0].max_error, 1e-4);
  EXPECT_LT(bands[1].max_error, 1e-4);
}

TEST(BandFit, GivenBandsAreKeptAsLimits) {
  FitOptions o;
  o.boundaries = {100e3};
  const auto fit =
      fit_bands(synthetic(CollectiveAlgorithm::kRing, 5e-6, 2e-9, 100e3, 40e-6, 0.8e-9), o);
  ASSERT_EQ(fit.collective.bands.size(), 2u);
  EXPECT_EQ(fit.collective.bands[0].max_bytes, 100e3);
  EXPECT_NEAR(static_cast<double>(fit.collective.bands[1].latency.ns()), 40'000, 2);
  o.boundaries = {1.2e3};  // only 1024 below
  EXPECT_THROW(
      fit_bands(synthetic(CollectiveAlgorithm::kRing, 5e-6, 2e-9, 100e3, 40e-6, 0.8e-9), o),
      std::invalid_argument);
}

TEST(BandFit, HoldoutPredictsEveryNthSizeOfEachRankCount) {
  FitOptions o;
  o.holdout = 3;
  const auto points = synthetic(CollectiveAlgorithm::kRing, 5e-6, 2e-9, 1e300, 0, 0, {2, 4});
  const auto fit = fit_bands(points, o);
  ASSERT_EQ(fit.holdout.size(), 2u);
  const auto per_rank = static_cast<std::int64_t>(points.size() / 2);
  for (const auto& h : fit.holdout) {
    EXPECT_EQ(h.points, per_rank / 3) << h.ranks;
    EXPECT_LT(h.max_error, 1e-4) << "an exact model predicts what it did not see";
  }
  ASSERT_EQ(fit.band_holdout.size(), fit.collective.bands.size());
  EXPECT_EQ(fit.collective.bands[0].points + fit.band_holdout[0].points,
            static_cast<std::int64_t>(points.size()));
}

TEST(BandFit, AlphaStaysNonNegative) {
  // Times proportional to size, minus a little: the unconstrained fit would
  // give a negative latency.
  std::vector<trace::Measurement> points;
  for (const std::int64_t p : {2, 4}) {
    const AlphaBetaTerms t =
        alpha_beta_terms(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, p);
    for (double m = 1e4; m <= 1e6; m *= 2) {
      trace::Measurement x;
      x.ranks = p;
      x.bytes = m;
      x.time = duration_from_seconds(t.beta_factor * m * 1e-9 - 1e-6);
      x.source = "synthetic";
      points.push_back(x);
    }
  }
  FitOptions o;
  o.max_bands = 1;
  const auto fit = fit_bands(points, o);
  EXPECT_EQ(fit.collective.bands[0].latency, Duration::zero());
  EXPECT_GT(fit.collective.bands[0].bandwidth_bytes_per_s, 0);
}

TEST(BandFit, RejectsAnAlgorithmWithoutTermsForTheOp) {
  auto points = synthetic(CollectiveAlgorithm::kRing, 5e-6, 2e-9, 1e300, 0, 0);
  for (auto& p : points) p.op = CollectiveOp::kAllToAll;
  FitOptions o;
  o.algorithm = CollectiveAlgorithm::kTorus2d;
  try {
    fit_bands(points, o);
    FAIL() << "torus2d has no all-to-all";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not implement all_to_all"));
  }
}

TEST(BandFit, PredictUsesTheBandAndTheTerms) {
  CalibratedCollective c;
  c.op = CollectiveOp::kAllReduce;
  c.algorithm = CollectiveAlgorithm::kRing;
  c.bands = {{8192, Duration(10'000), 1e9, 0, 0, 0},
             {std::numeric_limits<double>::infinity(), Duration(50'000), 2e9, 0, 0, 0}};
  // P = 4: 6 alpha, 1.5 M beta.
  EXPECT_EQ(predict(c, 4, 8192), Duration(6 * 10'000 + 12'288));
  EXPECT_EQ(predict(c, 4, 8193), Duration(6 * 50'000 + 6'145));  // 6144.75 rounds up
  EXPECT_EQ(predict(c, 1, 1e6), Duration::zero());
}

// ---------------------------------------------------------------- calibration file

class CalibrationFile : public ssgd::testing::TempDirTest {
 protected:
  std::string file_error(const std::string& text) {
    const auto p = write_file("net.yaml", text);
    try {
      read_network_calibration(p);
    } catch (const InputError& e) {
      std::string s = e.what();
      return s.substr(s.find("net.yaml"));
    }
    return "no error";
  }
};

constexpr const char* kGoodFile =
    "ssgd_network_calibration: 1\n"
    "level: inter_node\n"
    "collectives:\n"
    "  - op: all_reduce\n"
    "    algorithm: ring\n"
    "    ranks: [2, 4, 8]\n"
    "    sources: [allreduce2.log]\n"
    "    bands:\n"
    "      - {max_bytes: 8KiB, latency: 15.2us, bandwidth: 1.1GB/s, points: 30, median_error: "
    "0.021, max_error: 0.08}\n"
    "      - {max_bytes: inf, latency: 40us, bandwidth: 1.2GB/s}\n";

// A calibration of a level the scenario names no link for: that link is
// taken at least as fast as the fastest band (here 1.2 GB/s against the
// default 10 GbE's 1.125), so the band is not held back; a link the scenario
// names keeps its own rate.
TEST_F(CalibrationFile, AnUnnamedLinkCarriesTheFastestBand) {
  const auto p = dir_ / "net.yaml";
  ssgd::testing::write_file_bytes(p, kGoodFile);
  const Scenario unnamed = load_scenario(std::nullopt, {"network.calibration=" + p.string(), "cluster.nodes=4"});
  EXPECT_DOUBLE_EQ(scenario_platform_spec(unnamed).node.nic.bandwidth_bytes_per_s, 1.2e9);
  const Scenario named = load_scenario(
      std::nullopt, {"network.calibration=" + p.string(), "cluster.nodes=4", "network.inter_node=10gbe"});
  EXPECT_DOUBLE_EQ(scenario_platform_spec(named).node.nic.bandwidth_bytes_per_s, 0.9 * 1.25e9);
}

TEST_F(CalibrationFile, RoundTrip) {
  FitOptions o;
  o.holdout = 2;
  const auto joint =
      fit_bands(synthetic(CollectiveAlgorithm::kRing, 5e-6, 2e-9, 100e3, 40e-6, 0.8e-9), o);
  const auto four =
      fit_bands(synthetic(CollectiveAlgorithm::kRing, 6e-6, 2e-9, 1e300, 0, 0, {4}), {});
  NetworkCalibration cal;
  cal.level = "intra_node";
  cal.collectives = {joint.collective, four.collective};
  cal.collectives[0].sources = {"a file: with \"quotes\".log", "b.log"};
  const auto p = dir_ / "out.yaml";
  write_network_calibration(cal, p);
  const NetworkCalibration back = read_network_calibration(p);
  EXPECT_EQ(back.level, "intra_node");
  ASSERT_EQ(back.collectives.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& a = cal.collectives[i];
    const auto& b = back.collectives[i];
    EXPECT_EQ(b.op, a.op);
    EXPECT_EQ(b.algorithm, a.algorithm);
    EXPECT_EQ(b.ranks, a.ranks);
    EXPECT_EQ(b.sources, a.sources);
    ASSERT_EQ(b.bands.size(), a.bands.size());
    for (std::size_t k = 0; k < a.bands.size(); ++k) {
      EXPECT_EQ(b.bands[k].max_bytes, a.bands[k].max_bytes);
      EXPECT_EQ(b.bands[k].latency, a.bands[k].latency) << "latency is written exactly";
      EXPECT_NEAR(b.bands[k].bandwidth_bytes_per_s / a.bands[k].bandwidth_bytes_per_s, 1, 1e-6);
      EXPECT_EQ(b.bands[k].points, a.bands[k].points);
      EXPECT_NEAR(b.bands[k].median_error, a.bands[k].median_error, 5e-5);
      EXPECT_NEAR(b.bands[k].max_error, a.bands[k].max_error, 5e-5);
    }
  }
  // The fit made for the rank count first, then the joint one.
  EXPECT_EQ(back.find(CollectiveOp::kAllReduce, 4), &back.collectives[1]);
  EXPECT_EQ(back.find(CollectiveOp::kAllReduce, 16), &back.collectives[0]);
  EXPECT_EQ(back.find(CollectiveOp::kAllReduce), &back.collectives[0]);
  EXPECT_EQ(back.find(CollectiveOp::kBroadcast, 4), nullptr);
  // The file is readable and says what it is.
  const std::string text = ssgd::testing::read_file_bytes(p);
  EXPECT_THAT(text, HasSubstr("ssgd_network_calibration: 1\nlevel: intra_node\n"));
  EXPECT_THAT(text, HasSubstr("max_bytes: inf, latency: 40us, bandwidth: 1.25GB/s"));
}

TEST_F(CalibrationFile, ReadsTheDocumentedExample) {
  const auto cal = read_network_calibration(write_file("net.yaml", kGoodFile));
  ASSERT_EQ(cal.collectives.size(), 1u);
  const auto& c = cal.collectives[0];
  EXPECT_EQ(c.band_for(8192).latency, Duration(15'200));
  EXPECT_EQ(c.band_for(8193).latency, Duration(40'000));
  EXPECT_EQ(c.band_for(1e12).bandwidth_bytes_per_s, 1.2e9);
  EXPECT_EQ(c.bands[0].points, 30);
  EXPECT_EQ(c.bands[0].max_error, 0.08);
}

TEST_F(CalibrationFile, StrictReaderNamesLineAndKeyPath) {
  const auto edit = [](const std::string& from, const std::string& to) {
    std::string t = kGoodFile;
    return t.replace(t.find(from), from.size(), to);
  };
  EXPECT_EQ(file_error(edit("level: inter_node\n", "level: inter_node\nflavour: 2\n")),
            "net.yaml:3: field 'flavour': unknown key 'flavour'; expected one of "
            "ssgd_network_calibration, level, collectives");
  EXPECT_EQ(
      file_error(edit("latency: 40us", "latency: 40us, jitter: 2us")),
      "net.yaml:10: field 'collectives[0].bands[1].jitter': unknown key 'jitter'; expected one "
      "of max_bytes, latency, bandwidth, points, median_error, max_error");
  EXPECT_EQ(file_error(edit("latency: 40us", "latency: 40")),
            "net.yaml:10: field 'collectives[0].bands[1].latency': duration '40': missing unit; "
            "write one of ns, us, µs, ms, s (e.g. '1.5ms')");
  EXPECT_EQ(file_error(edit("bandwidth: 1.2GB/s", "bandwidth: 0GB/s")),
            "net.yaml:10: field 'collectives[0].bands[1].bandwidth': rate '0GB/s' must be greater "
            "than zero");
  EXPECT_EQ(file_error(edit("max_bytes: 8KiB", "max_bytes: 8 apples")),
            "net.yaml:9: field 'collectives[0].bands[0].max_bytes': size '8 apples': unknown unit "
            "'apples'; write one of B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB (e.g. '64MiB')");
  EXPECT_EQ(
      file_error(edit("points: 30", "points: [30]")),
      "net.yaml:9: field 'collectives[0].bands[0].points': expected a single value, got a list");
  EXPECT_EQ(
      file_error(edit("points: 30", "points: 2.5")),
      "net.yaml:9: field 'collectives[0].bands[0].points': expected a whole number, got '2.5'");
  EXPECT_EQ(
      file_error(edit("max_error: 0.08", "max_error: -0.08")),
      "net.yaml:9: field 'collectives[0].bands[0].max_error': must not be negative, got -0.08");
  EXPECT_EQ(file_error(edit("ranks: [2, 4, 8]", "ranks: 4")),
            "net.yaml:6: field 'collectives[0].ranks': expected a list of rank counts, got '4'");
  EXPECT_EQ(file_error(edit("ranks: [2, 4, 8]", "ranks: [2, 1]")),
            "net.yaml:6: field 'collectives[0].ranks': must be at least 2, got 1");
  EXPECT_EQ(file_error(edit("op: all_reduce", "op: allreduce")),
            "net.yaml:4: field 'collectives[0].op': unknown op 'allreduce'; expected one of "
            "all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, reduce");
  EXPECT_EQ(
      file_error(edit("algorithm: ring", "algorithm: auto")),
      "net.yaml:5: field 'collectives[0].algorithm': unknown algorithm 'auto'; expected one "
      "of ring, double_binary_tree, halving_doubling, hierarchical, torus2d, parameter_server, "
      "byteps");
  EXPECT_EQ(file_error(edit("op: all_reduce", "op: all_to_all")), "no error");
  std::string torus = edit("op: all_reduce", "op: all_to_all");
  torus.replace(torus.find("algorithm: ring"), 15, "algorithm: torus2d");
  EXPECT_THAT(file_error(torus),
              HasSubstr("net.yaml:5: field 'collectives[0].algorithm': collective: "
                        "algorithm torus2d does not implement all_to_all"));
  EXPECT_EQ(file_error(edit("max_bytes: inf", "max_bytes: 4KiB")),
            "net.yaml:10: field 'collectives[0].bands[1].max_bytes': bands must be in increasing "
            "order of max_bytes; the band before ends at 8KiB");
  EXPECT_EQ(file_error(edit("max_bytes: inf", "max_bytes: 1MiB")),
            "net.yaml:10: field 'collectives[0].bands[1].max_bytes': the last band must have "
            "max_bytes: inf, so that every size has a band");
  EXPECT_EQ(file_error(edit("level: inter_node\n", "level: inter_node\nlevel: intra_node\n")),
            "net.yaml:3: field 'level': key given twice");
  EXPECT_EQ(file_error(edit("level: inter_node\n", "")),
            "net.yaml:1: field 'level': missing key 'level'");
  EXPECT_EQ(
      file_error(edit("ssgd_network_calibration: 1", "ssgd_network_calibration: 2")),
      "net.yaml:1: field 'ssgd_network_calibration': unsupported version '2'; this ssgd reads "
      "version 1");
  EXPECT_EQ(file_error(edit("level: inter_node", "level: rack")),
            "net.yaml:2: field 'level': expected inter_node or intra_node, got 'rack'");
  EXPECT_EQ(
      file_error(std::string(kGoodFile) +
                 std::string(kGoodFile).substr(std::string(kGoodFile).find("  - op"))),
      "net.yaml:11: field 'collectives[1]': collectives[0] already calibrates all_reduce over "
      "the same ranks");
  EXPECT_THAT(file_error("collectives: [\n"), HasSubstr("net.yaml:2: not valid YAML: "));
  EXPECT_THAT(file_error(edit("level: inter_node", "level: inter\x7fnode")),
              HasSubstr("net.yaml:2: the calibration file holds the control character 0x7f"));
  EXPECT_EQ(
      file_error("- 1\n"),
      "net.yaml:1: expected a mapping with keys ssgd_network_calibration, level, collectives, "
      "got a list");
}

}  // namespace
}  // namespace ssgd::sim
