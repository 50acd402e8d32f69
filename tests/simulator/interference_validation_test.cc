// Issue 37's validation of the interference model (docs/validation.md,
// section 14) on the emulated clusters' captures:
//   fit       `ssgd calibrate --interference` on each model and link rate of
//             traces/datasets/cpu-cluster: the DDP capture with 25 MiB buckets
//             against the one with overlap off, the collectives against the
//             gloo sweep of the same network (network/<rate>-w2)
//   what-ifs  every case of the dataset replayed again with the model on, each
//             model's factors the median of its three rates' fits, against
//             the same cases without it; and the partitioned captures of
//             traces/datasets/cpu-partitions with their own fit, and with
//             host.concurrent fitted on each target's other captures
// The factors come from the traces' own timings, never from the measured
// iteration times they are compared with. The test prints the tables and
// holds the figures stated there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "simulator/calibration/interference_fit.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/dataset/dataset_replay.h"
#include "tests/support/dataset_validation.h"
#include "traces/dataset/dataset_check.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kCluster = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-cluster";
const fs::path kPartitions = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-partitions";

using Group = ssgd::testing::ErrorGroup;
using Json = trace::JsonFieldReader::Json;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct ModelFit {
  std::vector<double> compute, comm;  // per link rate, where measured
};

// The knob a what-if case changes (as cpu_cluster_validation_test groups them).
std::string group_of(const DatasetCase& c, const trace::DatasetManifest& m) {
  if (c.kind == DatasetCaseKind::kReplay) return "replay";
  const auto config = [&](const std::string& id) -> Json {
    for (const auto& e : m.entries) {
      if (e.id == id) return e.config;
    }
    return {};
  };
  const Json from = config(c.from), to = config(c.entry);
  if (from.at("world") != to.at("world")) {
    return "what-if: " + std::to_string(from.at("world").get<int>()) + " -> " +
           std::to_string(to.at("world").get<int>()) + " ranks";
  }
  if (from.at("overlap") != to.at("overlap")) return "what-if: overlap on -> off";
  if (from.at("rate") != to.at("rate")) return "what-if: link rate";
  return "what-if: bucket size";
}

std::map<std::string, Group> groups(const std::vector<DatasetCase>& cases,
                                    const trace::DatasetManifest& m) {
  std::map<std::string, Group> out;
  for (const DatasetCase& c : cases) {
    out[group_of(c, m)].add(c);
    out["all"].add(c);
  }
  return out;
}

class InterferenceValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_levels("error");
    manifest_ = new trace::DatasetManifest(trace::check_dataset(kCluster).manifest);
    std::printf("\n| model | link | host.compute (10th-90th) | host.comm (10th-90th) |\n"
                "|---|---|---|---|\n");
    for (const std::string model : {"cnn", "mlp", "transformer"}) {
      for (const std::string rate : {"unshaped", "1gbit", "200mbit"}) {
        const fs::path c = kCluster / "configs";
        const NetworkCalibration cal =
            read_network_calibration(kCluster / "network" / (rate + "-w2") / "calibration.yaml");
        const InterferenceFit f = fit_interference(
            {c / (model + "-w2-" + rate + "-b25") / "trace.ssgdt",
             c / (model + "-w2-" + rate + "-nooverlap") / "trace.ssgdt"},
            false, &cal);
        const auto text = [](const std::optional<FactorFit>& x) {
          if (!x) return std::string("-");
          char buf[96];
          std::snprintf(buf, sizeof buf, "%+.1f%% (%+.1f%% .. %+.1f%%)", 100 * x->median,
                        100 * x->p10, 100 * x->p90);
          return std::string(buf);
        };
        std::printf("| %s | %s | %s | %s |\n", model.c_str(), rate.c_str(), text(f.compute).c_str(),
                    text(f.comm).c_str());
        ModelFit& m = (*fits_)[model];
        if (f.compute) m.compute.push_back(f.compute->median);
        if (f.comm) m.comm.push_back(f.comm->median);
      }
    }
    const auto run = [](bool on) {
      DatasetReplayOptions options;
      options.jobs = 2;
      if (on) {
        options.adjust = [](Scenario& s, const trace::DatasetEntry& e) {
          const ModelFit& m = fits_->at(e.config.at("model").get<std::string>());
          s.interference.model = InterferenceModel::kContention;
          s.interference.host_compute = std::max(0.0, median(m.compute));
          s.interference.host_comm = std::max(0.0, median(m.comm));
        };
      }
      return replay_dataset(kCluster, *manifest_, options);
    };
    none_ = new std::map<std::string, Group>(groups(run(false), *manifest_));
    on_ = new std::map<std::string, Group>(groups(run(true), *manifest_));
  }
  static void TearDownTestSuite() {
    delete manifest_;
    delete none_;
    delete on_;
  }

  static inline trace::DatasetManifest* manifest_ = nullptr;
  static inline std::map<std::string, ModelFit>* fits_ = new std::map<std::string, ModelFit>;
  static inline std::map<std::string, Group>* none_ = nullptr;
  static inline std::map<std::string, Group>* on_ = nullptr;
};

TEST_F(InterferenceValidation, PrintTables) {
  std::printf("\n| model | host.compute | host.comm |\n|---|---|---|\n");
  for (const auto& [model, m] : *fits_) {
    std::printf("| %s | %.3f | %.3f |\n", model.c_str(), std::max(0.0, median(m.compute)),
                std::max(0.0, median(m.comm)));
  }
  std::printf("\n| group | cases | none: median, worst | contention: median, worst | worst case (contention) |\n"
              "|---|---|---|---|---|\n");
  for (const auto& [name, g] : *none_) {
    const Group& o = on_->at(name);
    std::printf("| %s | %zu | %.1f%%, %.1f%% | %.1f%%, %.1f%% | `%s` |\n", name.c_str(),
                g.errors.size(), g.median_abs(), g.worst_abs, o.median_abs(), o.worst_abs,
                o.worst.c_str());
  }
}

// Every model's operators ran measurably slower beside gloo's all-reduce
// (its median over the three links between 3% and 25%).
TEST_F(InterferenceValidation, FittedFactorsArePlausible) {
  ASSERT_EQ(fits_->size(), 3u);
  for (const auto& [model, m] : *fits_) {
    SCOPED_TRACE(model);
    ASSERT_EQ(m.compute.size(), 3u);
    EXPECT_GT(median(m.compute), 0.02);
    EXPECT_LT(median(m.compute), 0.25);
  }
}

// With the model on, every group stays within issue 13's targets (median 3%
// for replays; median 5% and worst 15% for what-ifs; the replays' worst, 8%,
// is missed by one case with or without the model, mlp-w2-unshaped-nooverlap,
// whose capture ran 16% slower than its measured run: section 6), and no
// group's median moves by more than the noise floor (3.6%, section 6).
TEST_F(InterferenceValidation, TheDatasetStaysWithinItsTargets) {
  for (const auto& [name, o] : *on_) {
    SCOPED_TRACE(name);
    const Group& n = none_->at(name);
    EXPECT_EQ(o.errors.size(), n.errors.size());
    EXPECT_LE(o.median_abs(), name == "replay" ? 3.0 : 5.0);
    EXPECT_LE(o.worst_abs, name == "replay" || name == "all" ? 10.5 : 15.0);
    EXPECT_LE(std::abs(o.median_abs() - n.median_abs()), 3.6);
  }
}

// The partitioned captures: the fit finds the many small all-reduces run
// several times their swept time beside compute, but most of them run after
// backward, beside nothing: the compute and comm factors move the
// many-partition cases by a few points and leave them 50-65% too fast
// (docs/validation.md, section 14); host.concurrent (the next test) is what
// closes them.
TEST(InterferencePartitions, TheManyPartitionGapRemains) {
  set_log_levels("error");
  const fs::path c = kPartitions / "configs";
  const NetworkCalibration cal =
      read_network_calibration(kPartitions / "network/unshaped-w2/calibration.yaml");
  const InterferenceFit f = fit_interference(
      {c / "mlp-w2-unshaped-b2/trace.ssgdt", c / "mlp-w2-unshaped-b2-p64/trace.ssgdt",
       c / "mlp-w2-unshaped-b2-p256/trace.ssgdt"},
      false, &cal);
  ASSERT_TRUE(f.compute && f.comm);
  std::printf("cpu-partitions mlp fit: host.compute %+.1f%%, host.comm %+.1f%% (%zu collectives)\n",
              100 * f.compute->median, 100 * f.comm->median,
              static_cast<std::size_t>(f.comm->samples));
  EXPECT_GT(f.comm->median, 1.0);  // overlapped partitions: several times their swept time
  const trace::DatasetManifest m = trace::check_dataset(kPartitions).manifest;
  DatasetReplayOptions options;
  options.jobs = 2;
  options.adjust = [&f](Scenario& s, const trace::DatasetEntry&) {
    s.interference.model = InterferenceModel::kContention;
    s.interference.host_compute = std::max(0.0, f.compute->median);
    s.interference.host_comm = std::max(0.0, f.comm->median);
  };
  Group p64;
  for (const DatasetCase& d : replay_dataset(kPartitions, m, options)) {
    if (d.entry == "mlp-w2-unshaped-b2-p64") p64.add(d);
  }
  ASSERT_EQ(p64.errors.size(), 4u);
  std::printf("mlp-w2-unshaped-b2-p64 under contention: median %.1f%%, worst %.1f%%\n",
              p64.median_abs(), p64.worst_abs);
  EXPECT_GT(p64.median_abs(), 40.0);  // not closed: a gap the model does not explain
  EXPECT_LT(p64.worst_abs, 70.0);
}

// gloo's concurrent collectives (interference.host.concurrent): each entry of
// traces/datasets/cpu-partitions replayed and predicted with the factor
// fitted on the captures of the OTHER configurations of its model (leave one
// out: never the target's own capture), against the same cases without it.
// Prints every case and the groups (docs/validation.md, 8c and 14).
struct ConcurrentResult {
  std::map<std::string, double> factor;   // by entry: the factor its cases ran with
  std::map<std::string, Group> none, on;  // by group
};

std::string partition_group(const DatasetCase& c) {
  const bool cut = c.entry.find("-p") != std::string::npos;
  const std::string model = c.entry.substr(0, c.entry.find('-'));
  return model + (cut ? ": partitioned targets" : ": uncut targets");
}

const ConcurrentResult& concurrent_result() {
  static const ConcurrentResult result = [] {
    set_log_levels("error");
    ConcurrentResult r;
    const fs::path c = kPartitions / "configs";
    const NetworkCalibration cal =
        read_network_calibration(kPartitions / "network/unshaped-w2/calibration.yaml");
    const trace::DatasetManifest m = trace::check_dataset(kPartitions).manifest;
    for (const auto& target : m.entries) {
      std::vector<fs::path> others;
      for (const auto& e : m.entries) {
        if (e.id != target.id && e.config.at("model") == target.config.at("model")) {
          others.push_back(c / e.id / "trace.ssgdt");
        }
      }
      const InterferenceFit f = fit_interference(others, false, &cal);
      r.factor[target.id] = f.concurrent ? std::max(0.0, f.concurrent->median) : 0.0;
      std::printf(
          "%-26s host.concurrent fitted on the %zu other capture(s): %+.1f%% "
          "(10th-90th %+.1f%% .. %+.1f%%, %lld busy periods)\n",
          target.id.c_str(), others.size(), 100 * r.factor[target.id],
          f.concurrent ? 100 * f.concurrent->p10 : 0.0,
          f.concurrent ? 100 * f.concurrent->p90 : 0.0,
          static_cast<long long>(f.concurrent ? f.concurrent->samples : 0));
    }
    DatasetReplayOptions options;
    options.jobs = 2;
    const auto none = replay_dataset(kPartitions, m, options);
    options.adjust = [&r](Scenario& s, const trace::DatasetEntry& e) {
      s.interference.model = InterferenceModel::kContention;
      s.interference.resource = InterferenceResource::kHost;
      s.interference.host_concurrent = r.factor.at(e.id);
    };
    const auto on = replay_dataset(kPartitions, m, options);
    std::printf("\n| case | measured | without | with |\n|---|---:|---:|---:|\n");
    for (std::size_t k = 0; k < on.size(); ++k) {
      std::printf("| `%s` | %.1f ms | %+.1f%% | %+.1f%% |\n", on[k].name().c_str(),
                  static_cast<double>(on[k].measured.median.ns()) / 1e6, none[k].error_percent,
                  on[k].error_percent);
      for (const std::string& g : {partition_group(on[k]), std::string("all")}) {
        r.none[g].add(none[k]);
        r.on[g].add(on[k]);
      }
    }
    std::printf(
        "\n| group | cases | without: median, worst | with: median, worst |\n"
        "|---|---:|---|---|\n");
    for (const auto& [g, o] : r.on) {
      std::printf("| %s | %zu | %.1f%%, %.1f%% | %.1f%%, %.1f%% |\n", g.c_str(), o.errors.size(),
                  r.none.at(g).median_abs(), r.none.at(g).worst_abs, o.median_abs(), o.worst_abs);
    }
    return r;
  }();
  return result;
}

// The mlp's partitioned targets (32 to 513 all-reduces an iteration), 30-70%
// too fast without the factor, come within issue 13's what-if targets with
// it (3.0% median, 10.7% worst); the factor, fitted on the other captures
// each time, is 2.9 to 3.3 for the mlp. The cnn's cases barely move (its
// partitions rarely wait behind each other in the replay), nor do the uncut
// mlp's (its gap is its compute's contention, not concurrency).
TEST(InterferencePartitions, ConcurrentCollectivesFittedLeaveOneOut) {
  const ConcurrentResult& r = concurrent_result();
  ASSERT_EQ(r.on.at("all").errors.size(), 32u);
  for (const auto& [id, f] : r.factor) {
    if (id.starts_with("mlp")) {
      EXPECT_GT(f, 2.5) << id;
      EXPECT_LT(f, 3.5) << id;
    }
  }
  const Group& mlp = r.on.at("mlp: partitioned targets");
  EXPECT_GT(r.none.at("mlp: partitioned targets").median_abs(), 50.0);
  EXPECT_LE(mlp.median_abs(), 5.0);
  EXPECT_LE(mlp.worst_abs, 15.0);
  for (const std::string g :
       {"cnn: partitioned targets", "cnn: uncut targets", "mlp: uncut targets"}) {
    EXPECT_LE(std::abs(r.on.at(g).median_abs() - r.none.at(g).median_abs()), 1.0) << g;
  }
  EXPECT_LE(r.on.at("all").median_abs(), 6.0);
}

}  // namespace
}  // namespace ssgd::sim
