#pragma once
// The validation tests that replay a bundled, measured dataset
// (simulator/dataset/dataset_replay.h): the dataset checked and every case
// replayed, as `ssgd dataset verify` does; the cases' signed errors gathered
// into named groups (the median of their absolute values, their mean, the
// worst case); and the two tables docs/validation.md shows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/logging.h"
#include "simulator/calibration/interference_fit.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/dataset/dataset_replay.h"
#include "traces/dataset/dataset_check.h"

namespace ssgd::testing {

struct ErrorGroup {
  std::vector<double> errors;  // signed, percent
  std::string worst;
  double worst_abs = -1;

  void add(const sim::DatasetCase& c) { add(c.name(), c.error_percent); }
  void add(const std::string& name, double error_percent) {
    errors.push_back(error_percent);
    if (std::abs(error_percent) > worst_abs) {
      worst_abs = std::abs(error_percent);
      worst = name;
    }
  }
  [[nodiscard]] double median_abs() const {
    std::vector<double> a;
    for (double e : errors) a.push_back(std::abs(e));
    std::sort(a.begin(), a.end());
    const std::size_t n = a.size();
    if (n == 0) return 0;
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }
  [[nodiscard]] double mean_signed() const {
    double s = 0;
    for (double e : errors) s += e;
    return errors.empty() ? 0 : s / static_cast<double>(errors.size());
  }
};

struct ReplayedDataset {
  std::size_t problems = 0;  // what the integrity check found
  trace::DatasetManifest manifest;
  std::vector<sim::DatasetCase> cases;
  std::map<std::string, ErrorGroup> groups;  // filled by the test

  [[nodiscard]] const trace::JsonFieldReader::Json& config(const std::string& id) const {
    for (const auto& e : manifest.entries) {
      if (e.id == id) return e.config;
    }
    throw std::out_of_range("no entry " + id);
  }
};

// Checks `dir` and replays every case on 2 threads, logging errors only (the
// replays' warnings are the dataset's, known). `adjust`, if set, changes every
// entry's scenario (DatasetReplayOptions::adjust).
inline ReplayedDataset replay_bundled_dataset(
    const std::filesystem::path& dir,
    std::function<void(sim::Scenario&, const trace::DatasetEntry&)> adjust = {}) {
  set_log_levels("error");
  const trace::DatasetCheck check = trace::check_dataset(dir);
  ReplayedDataset d;
  d.problems = check.problems.size();
  d.manifest = check.manifest;
  sim::DatasetReplayOptions options;
  options.jobs = 2;
  options.adjust = std::move(adjust);
  d.cases = sim::replay_dataset(dir, d.manifest, options);
  return d;
}

// The host's interference factors (interference.host.compute and .comm,
// simulator/calibration/interference_fit.h) fitted on the captures of
// `dir`'s entries `ids` against the network calibration `calibration`
// (relative to `dir`), as `ssgd calibrate --interference` fits them; a factor
// that is not measured, or below 0, is 0.
struct HostFactors {
  double compute = 0;
  double comm = 0;
};
inline HostFactors fit_host_factors(const std::filesystem::path& dir,
                                    const std::vector<std::string>& ids,
                                    const std::filesystem::path& calibration) {
  std::vector<std::filesystem::path> traces;
  for (const std::string& id : ids) traces.push_back(dir / "configs" / id / "trace.ssgdt");
  const sim::NetworkCalibration cal = sim::read_network_calibration(dir / calibration);
  const sim::InterferenceFit fit = sim::fit_interference(traces, false, &cal);
  HostFactors f;
  if (fit.compute) f.compute = std::max(0.0, fit.compute->median);
  if (fit.comm) f.comm = std::max(0.0, fit.comm->median);
  return f;
}

// An adjust (replay_bundled_dataset) that turns the contention model on with
// the host's factors `f`.
inline std::function<void(sim::Scenario&, const trace::DatasetEntry&)> with_host_contention(
    HostFactors f) {
  return [f](sim::Scenario& s, const trace::DatasetEntry&) {
    s.interference.model = sim::InterferenceModel::kContention;
    s.interference.host_compute = f.compute;
    s.interference.host_comm = f.comm;
  };
}

// Each case of a sharded testbed grid (tools/testbed/grids/cpu-sharded*.toml)
// in its groups: "replays" or "what-ifs", and "replay" or the knob its what-if
// changes ("what-if: 2 -> 4 ranks", "what-if: 1 -> 2 micro-batches", "what-if:
// link rate", "what-if: strategy", else "what-if: prefetch").
inline void group_sharded_cases(ReplayedDataset& data) {
  for (const sim::DatasetCase& c : data.cases) {
    const auto& to = data.config(c.entry);
    const auto& from = data.config(c.from);
    const auto micro = [](const auto& config) {
      return config.contains("accumulation") ? config.at("accumulation").template get<int>() : 1;
    };
    const auto rate = [](const auto& config) {
      return config.contains("rate") ? config.at("rate").template get<std::string>()
                                     : std::string();
    };
    std::string kind = "replay";
    if (c.kind == sim::DatasetCaseKind::kWhatIf) {
      kind = to.at("world") != from.at("world")         ? "what-if: 2 -> 4 ranks"
             : micro(to) != micro(from)                 ? "what-if: 1 -> 2 micro-batches"
             : rate(to) != rate(from)                   ? "what-if: link rate"
             : to.at("strategy") != from.at("strategy") ? "what-if: strategy"
                                                        : "what-if: prefetch";
    }
    data.groups[kind].add(c);
    data.groups[c.kind == sim::DatasetCaseKind::kReplay ? "replays" : "what-ifs"].add(c);
  }
}

// Every case, then every group, as Markdown tables.
inline void print_validation_tables(const ReplayedDataset& d) {
  std::printf(
      "\n| case | kind | predicted (ms) | measured (ms) | error |\n|---|---|---|---|---|\n");
  for (const sim::DatasetCase& c : d.cases) {
    std::printf("| %s | %s | %.1f | %.1f | %+.1f%% |\n", c.name().c_str(), to_string(c.kind),
                static_cast<double>(c.predicted.ns()) / 1e6,
                static_cast<double>(c.measured.median.ns()) / 1e6, c.error_percent);
  }
  std::printf(
      "\n| group | cases | median abs error | mean error | worst abs error | worst case |\n"
      "|---|---|---|---|---|---|\n");
  for (const auto& [name, g] : d.groups) {
    std::printf("| %s | %zu | %.1f%% | %+.1f%% | %.1f%% | %s |\n", name.c_str(), g.errors.size(),
                g.median_abs(), g.mean_signed(), g.worst_abs, g.worst.c_str());
  }
}

// The replays' memory errors: each configuration's per-GPU estimate against
// its measured peak (the cases with measured.memory_bytes).
inline ErrorGroup replay_memory_errors(const ReplayedDataset& d) {
  ErrorGroup g;
  for (const sim::DatasetCase& c : d.cases) {
    if (c.kind == sim::DatasetCaseKind::kReplay && c.measured_memory) {
      g.add(c.name(), c.memory_error_percent);
    }
  }
  return g;
}

// The memory table docs/validation.md shows, and its summary line.
inline void print_memory_table(const ReplayedDataset& d, const ErrorGroup& memory) {
  std::printf(
      "\n| configuration | memory estimate | measured | error | activations |\n"
      "|---|---|---|---|---|\n");
  for (const sim::DatasetCase& c : d.cases) {
    if (c.kind != sim::DatasetCaseKind::kReplay || !c.measured_memory) continue;
    std::printf("| %s | %.1f MiB | %.1f MiB | %+.1f%% | %s |\n", c.entry.c_str(),
                static_cast<double>(c.predicted_memory_bytes) / 1048576.0,
                static_cast<double>(c.measured_memory->median) / 1048576.0, c.memory_error_percent,
                c.memory_activations_known ? "from the trace" : "none");
  }
  std::printf("\nmemory: median |error| %.1f%%, worst %.1f%% (%s)\n", memory.median_abs(),
              memory.worst_abs, memory.worst.c_str());
}

}  // namespace ssgd::testing
