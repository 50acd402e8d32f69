#include "simulator/dataset/dataset_pack.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "common/version.h"
#include "simulator/dataset/dataset_replay.h"
#include "traces/dataset/dataset_files.h"

namespace ssgd::sim {
namespace fs = std::filesystem;

namespace {

// The profiles of the scenario's jobs, read as `ssgd simulate` will read
// them (load_scenario has read the files its models use).
void read_job_profiles(const Scenario& scenario) {
  for (const JobSpec& job : scenario.jobs) {
    if (job.profile) load_replay_input(*job.profile);
  }
}

// Name, description and tolerance: the options, else the previous manifest's.
void describe(trace::DatasetManifest& m, const fs::path& dir, const DatasetPackOptions& options) {
  std::optional<trace::DatasetManifest> previous;
  if (!options.name || !options.description || options.tolerance.empty()) {
    std::error_code ec;
    if (fs::exists(dir / trace::kDatasetManifestName, ec)) {
      try {
        previous = trace::read_manifest(dir);
      } catch (const InputError& e) {
        logger("sim")->warn(
            "the previous manifest is unreadable, its name, description and tolerance "
            "are not kept: {}",
            e.what());
      }
    }
  }
  if (options.name) {
    m.name = *options.name;
  } else if (previous) {
    m.name = previous->name;
  } else {
    m.name = fs::weakly_canonical(fs::absolute(dir)).filename().string();
  }
  if (options.description) {
    m.description = *options.description;
  } else if (previous) {
    m.description = previous->description;
  }
  if (!options.tolerance.empty()) {
    m.tolerance = options.tolerance;
  } else if (previous) {
    m.tolerance = previous->tolerance;
  }
}

}  // namespace

trace::DatasetManifest pack_dataset(const fs::path& dir, const DatasetPackOptions& options) {
  const trace::DatasetScan scan = trace::scan_dataset(dir);
  if (!scan.problems.empty()) throw scan.problems.front();

  trace::DatasetManifest m;
  for (const std::string& path : scan.files) {
    if (fs::path(path).filename() == trace::kDatasetEntryName) {
      m.entries.push_back(trace::read_dataset_entry(dir, path));
    }
  }
  if (m.entries.empty()) {
    throw InputError({dir.string(), std::nullopt, std::nullopt, ""},
                     fmt::format("no {} in the folder: a dataset needs at least one entry",
                                 trace::kDatasetEntryName));
  }
  // Sorted by id; equal ids stay in path order for the duplicate's message.
  std::stable_sort(m.entries.begin(), m.entries.end(),
                   [](const auto& a, const auto& b) { return a.id < b.id; });
  const auto at = [&](std::size_t i, const std::string& field) {
    return InputLocation{(dir / m.entries[i].entry_file).string(), std::nullopt, std::nullopt,
                         field};
  };
  trace::check_dataset_entries(m.entries, at);

  auto log = logger("sim");
  for (std::size_t i = 0; i < m.entries.size(); ++i) {
    const trace::DatasetEntry& e = m.entries[i];
    trace::check_dataset_file(dir, e.trace, at(i, "trace"));
    trace::check_dataset_file(dir, e.scenario, at(i, "scenario"));
    read_job_profiles(load_entry_scenario(dir, e, scan.files));
    for (const auto& w : load_entry_input(dir, e).warnings) log->warn("{}: {}", e.id, w);
    log->debug("entry {} ({}) checked", e.id, e.entry_file);
  }

  describe(m, dir, options);
  m.ssgd_version = std::string(ssgd_version());
  m.files = trace::hash_dataset_files(dir, scan.files);
  return m;
}

}  // namespace ssgd::sim
