#pragma once
// `ssgd dataset pack DIR`: finds every entry of a dataset folder, checks it
// (docs/datasets.md lists the rules), and describes the folder in a manifest.

#include <filesystem>
#include <optional>
#include <string>

#include "traces/dataset/dataset_manifest.h"

namespace ssgd::sim {

struct DatasetPackOptions {
  // When not given: the previous manifest's, if DIR has a readable one; else
  // the folder's name and "".
  std::optional<std::string> name;
  std::optional<std::string> description;
  // The tolerance verify checks by default (each limit given replaces the
  // previous manifest's; neither given keeps it).
  trace::DatasetTolerance tolerance;
};

// Checks every entry.json under `dir`: its schema and measured values, ids
// unique, predict_from naming entries, its trace and scenario files inside
// the folder, the trace readable as `ssgd simulate` reads it, the scenario
// loadable and every file it names inside the folder and readable. Then
// lists and hashes every file. Writes nothing. Throws InputError naming the
// file and the field of the first problem.
trace::DatasetManifest pack_dataset(const std::filesystem::path& dir,
                                    const DatasetPackOptions& options = {});

}  // namespace ssgd::sim
