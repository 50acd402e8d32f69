#pragma once
// Replays a dataset's entries (docs/datasets.md), the second half of
// `ssgd dataset verify`: each entry's trace under its own scenario (a replay
// case), and for each id X in an entry Y's predict_from, X's trace under Y's
// scenario (a what-if case), each against Y's measured median iteration time.
// Every case is what `ssgd simulate TRACE --scenario SCENARIO` computes; an
// entry that measured its memory is also set beside the replay's estimate.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/input/replay_input.h"
#include "simulator/scenario/scenario.h"
#include "traces/dataset/dataset_manifest.h"

namespace ssgd::sim {

// An entry's scenario, loaded as `ssgd simulate --scenario` loads it, after
// checking that every file it names (scenario_files) is a file of the
// dataset: inside `dir`, not hidden, reached without a symbolic link and in
// `files` (the dataset paths of its files). Throws InputError.
// `sets` ("key=value", as --set takes them) are applied on top of it.
Scenario load_entry_scenario(const std::filesystem::path& dir, const trace::DatasetEntry& entry,
                             const std::vector<std::string>& files,
                             const std::vector<std::string>& sets = {});

// An entry's trace (or any input `ssgd simulate` reads), loaded as
// `ssgd simulate` loads it. Throws InputError.
ReplayInput load_entry_input(const std::filesystem::path& dir, const trace::DatasetEntry& entry);

enum class DatasetCaseKind { kReplay, kWhatIf };
const char* to_string(DatasetCaseKind kind);  // "replay", "what-if"

struct DatasetCase {
  DatasetCaseKind kind = DatasetCaseKind::kReplay;
  std::string entry;             // whose scenario and measurement
  std::string from;              // whose trace: `entry` for a replay
  std::string trace;             // dataset path of that trace
  std::string scenario;          // dataset path of `entry`'s scenario
  Duration predicted;            // steady-state iteration time, as `ssgd simulate` prints it
  trace::MeasuredTime measured;  // the entry's measured.iteration_ns
  // (predicted - measured median) / measured median, in percent.
  double error_percent = 0;
  // Where the entry measured its memory (measured.memory_bytes): that, the
  // replay's per-GPU memory estimate (MemoryEstimate::total(), what `ssgd
  // simulate` reports) and their error, as for the time. The estimate holds
  // activations only where the trace gave them (memory_activations_known).
  std::optional<trace::MeasuredBytes> measured_memory;
  std::int64_t predicted_memory_bytes = 0;
  double memory_error_percent = 0;
  bool memory_activations_known = false;

  // "ID" for a replay, "ID <- FROM" for a what-if case.
  [[nodiscard]] std::string name() const;
};

struct DatasetReplayOptions {
  std::size_t jobs = 1;  // cases simulated at once, each on its own thread
  // Called as each case ends (from the thread that ran it, one call at a
  // time): the case, how many are done, of how many, and its wall seconds.
  std::function<void(const DatasetCase&, std::size_t done, std::size_t total, double seconds)>
      progress;
  // Scenario keys set on every entry's scenario ("key=value", ssgd dataset
  // verify --set): the dataset replayed under a what-if of the user's.
  std::vector<std::string> sets;
  // Called on each entry's scenario once loaded (after `sets`).
  std::function<void(Scenario&, const trace::DatasetEntry&)> adjust;
};

// Runs every case, in a fixed order (entries by id, each's replay, then its
// what-if cases in predict_from order) whatever `jobs` is. Each entry's input
// and scenario are loaded once. Throws what loading or replaying throws:
// the first failure in case order.
std::vector<DatasetCase> replay_dataset(const std::filesystem::path& dir,
                                        const trace::DatasetManifest& manifest,
                                        const DatasetReplayOptions& options = {});

}  // namespace ssgd::sim
