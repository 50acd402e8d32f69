#pragma once
// The integrity check of a dataset folder against its manifest, the first
// half of `ssgd dataset verify` (the replays are the second,
// simulator/dataset/dataset_replay.h).

#include <filesystem>
#include <vector>

#include "common/error.h"
#include "traces/dataset/dataset_manifest.h"

namespace ssgd::trace {

struct DatasetCheck {
  DatasetManifest manifest;
  std::vector<InputError> problems;  // in file order; none when the folder is intact
};

// Reads DIR/manifest.json (a schema error throws InputError), then checks
// the folder against it: every listed file present with its size and
// SHA-256, no other file (hidden ones aside), no symbolic link, and each
// listed entry.json, read again, equal to the manifest's entry for it.
DatasetCheck check_dataset(const std::filesystem::path& dir);

}  // namespace ssgd::trace
