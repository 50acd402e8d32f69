#include "simulator/dataset/dataset_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "common/logging.h"
#include "common/run_indexed.h"
#include "common/work_context.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "traces/dataset/dataset_files.h"

namespace ssgd::sim {
namespace fs = std::filesystem;

Scenario load_entry_scenario(const fs::path& dir, const trace::DatasetEntry& entry,
                             const std::vector<std::string>& files,
                             const std::vector<std::string>& sets) {
  const fs::path file = dir / entry.scenario;
  Scenario scenario = load_scenario(file, sets);
  for (const ScenarioFile& named : scenario_files(scenario)) {
    const InputLocation where{file.string(), std::nullopt, std::nullopt, named.key};
    const std::string path = trace::dataset_path_of(dir, named.path, where);
    trace::check_dataset_file(dir, path, where);
    if (!std::binary_search(files.begin(), files.end(), path)) {
      throw InputError(where, fmt::format("'{}' is not one of the dataset's files", path));
    }
  }
  return scenario;
}

ReplayInput load_entry_input(const fs::path& dir, const trace::DatasetEntry& entry) {
  return load_replay_input(dir / entry.trace);
}

const char* to_string(DatasetCaseKind kind) {
  return kind == DatasetCaseKind::kReplay ? "replay" : "what-if";
}

std::string DatasetCase::name() const {
  return kind == DatasetCaseKind::kReplay ? entry : fmt::format("{} <- {}", entry, from);
}

std::vector<DatasetCase> replay_dataset(const fs::path& dir, const trace::DatasetManifest& manifest,
                                        const DatasetReplayOptions& options) {
  const auto& entries = manifest.entries;
  std::vector<std::string> files;
  for (const auto& f : manifest.files) files.push_back(f.path);
  std::sort(files.begin(), files.end());

  // Each entry's input and scenario, loaded once for all its cases.
  std::vector<std::optional<ReplayInput>> inputs(entries.size());
  std::vector<std::optional<Scenario>> scenarios(entries.size());
  run_indexed(entries.size(), options.jobs, [&](std::size_t i) {
    scenarios[i] = load_entry_scenario(dir, entries[i], files, options.sets);
    if (options.adjust) options.adjust(*scenarios[i], entries[i]);
    inputs[i] = load_entry_input(dir, entries[i]);
    for (const auto& w : inputs[i]->warnings) logger("sim")->warn("{}: {}", entries[i].id, w);
  });

  struct Plan {
    std::size_t entry, from;
  };
  std::vector<Plan> plans;
  std::vector<DatasetCase> cases;
  const auto index_of = [&](const std::string& id) {
    const auto it =
        std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.id == id; });
    if (it == entries.end()) {
      throw std::invalid_argument(fmt::format("predict_from names no entry: '{}'", id));
    }
    return static_cast<std::size_t>(it - entries.begin());
  };
  for (std::size_t y = 0; y < entries.size(); ++y) {
    plans.push_back({y, y});
    for (const std::string& id : entries[y].predict_from) plans.push_back({y, index_of(id)});
  }
  for (const Plan& p : plans) {
    DatasetCase c;
    c.kind = p.entry == p.from ? DatasetCaseKind::kReplay : DatasetCaseKind::kWhatIf;
    c.entry = entries[p.entry].id;
    c.from = entries[p.from].id;
    c.trace = entries[p.from].trace;
    c.scenario = entries[p.entry].scenario;
    c.measured = entries[p.entry].iteration;
    c.measured_memory = entries[p.entry].memory;
    cases.push_back(std::move(c));
  }

  std::mutex progress_mutex;
  std::size_t done = 0;
  run_indexed(plans.size(), options.jobs, [&](std::size_t k) {
    const auto t0 = std::chrono::steady_clock::now();
    const Plan& p = plans[k];
    DatasetCase& c = cases[k];
    const WorkContext context("replaying", (dir / c.trace).string(), "dataset case");
    const ReplayResult result = replay(inputs[p.from]->profile, *scenarios[p.entry]);
    c.predicted = result.iteration_time;
    const auto error_percent = [](auto predicted, auto measured) {
      const double m = static_cast<double>(measured);
      return (static_cast<double>(predicted) - m) / m * 100.0;
    };
    c.error_percent = error_percent(c.predicted.ns(), c.measured.median.ns());
    if (c.measured_memory) {
      c.predicted_memory_bytes = result.memory.total();
      c.memory_activations_known = result.memory.activations.has_value();
      c.memory_error_percent = error_percent(c.predicted_memory_bytes, c.measured_memory->median);
    }
    if (options.progress) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::lock_guard lock(progress_mutex);
      options.progress(c, ++done, plans.size(), seconds);
    }
  });
  return cases;
}

}  // namespace ssgd::sim
