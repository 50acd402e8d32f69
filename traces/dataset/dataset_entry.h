#pragma once
// One entry of a dataset (docs/datasets.md): a captured configuration with
// its trace, the scenario that describes the setting it ran in, and the
// iteration time measured without the profiler (and, where it was measured,
// the peak memory of a rank).
//
// An entry is written by hand (or by the testbed) as `entry.json` in a folder
// of its own, with paths relative to that folder; `ssgd dataset pack` keeps
// it, normalised, inside the manifest, with paths relative to the dataset.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/time.h"
#include "traces/dataset/json_field_reader.h"

namespace ssgd::trace {

// The statistics of a measured time over its timed samples (iterations),
// gathered in rounds that interleave configurations; all times in ns.
// min <= p10 <= median <= p90.
struct MeasuredTime {
  Duration median;
  Duration min;
  Duration p10;
  Duration p90;
  std::int64_t samples = 0;                            // timed iterations, > 0
  std::optional<std::int64_t> rounds;                  // rounds they were taken in, > 0
  std::optional<std::vector<Duration>> round_medians;  // each round's median, `rounds` of them

  friend bool operator==(const MeasuredTime&, const MeasuredTime&) = default;
};

// The statistics of a measured memory figure over its samples (each rank of
// each round), in bytes: the most a rank's training held at once above what
// it held before the model was built (model state, buffers, activations): a
// GPU's peak allocated bytes, or a CPU rank's peak resident set. `ssgd
// dataset verify` sets it beside the replay's per-GPU memory estimate.
// min <= p10 <= median <= p90.
struct MeasuredBytes {
  std::int64_t median = 0;
  std::int64_t min = 0;
  std::int64_t p10 = 0;
  std::int64_t p90 = 0;
  std::int64_t samples = 0;  // > 0

  friend bool operator==(const MeasuredBytes&, const MeasuredBytes&) = default;
};

struct DatasetEntry {
  std::string id;           // unique in the dataset: letters, digits, '.', '_', '-'
  std::string description;  // "" when not given
  std::string entry_file;   // dataset path of its entry.json
  std::string trace;        // dataset path of what `ssgd simulate` replays
  std::string scenario;     // dataset path of the scenario YAML
  MeasuredTime iteration;   // measured.iteration_ns
  std::optional<MeasuredBytes> memory;  // measured.memory_bytes, when it was measured
  // Ids of the entries whose traces predict this entry under its scenario
  // (what-if cases), in the order given.
  std::vector<std::string> predict_from;
  // Free-form knobs of the configuration, kept as written (an object).
  JsonFieldReader::Json config = JsonFieldReader::Json::object();
};

// Reads `entry_file` (a dataset path ending in entry.json) under `dir`: its
// schema, ids, measured values, and paths, which become dataset paths. It
// does not look at the files the paths name. Throws InputError naming the
// file and the field.
DatasetEntry read_dataset_entry(const std::filesystem::path& dir, const std::string& entry_file);

// The entry as the manifest holds it (`entries[i]`), and back; `path` is the
// field path of `v` for messages.
JsonFieldReader::Json entry_manifest_json(const DatasetEntry& entry);
DatasetEntry parse_manifest_entry(const JsonFieldReader::Json& v, const JsonFieldReader& reader,
                                  const std::string& path);

// Checks the entries together: every id unique, every predict_from names
// another entry. `where(i, field)` locates field `field` of entries[i].
void check_dataset_entries(
    const std::vector<DatasetEntry>& entries,
    const std::function<InputLocation(std::size_t, const std::string&)>& where);

}  // namespace ssgd::trace
