#pragma once
// The manifest of a dataset, DIR/manifest.json (docs/datasets.md): what the
// dataset is, its entries, and every file in it with its size and SHA-256.
// `ssgd dataset pack` writes it and `ssgd dataset verify` checks the folder
// against it.
//
// The text is deterministic: keys in a fixed order, entries sorted by id,
// files by path, no timestamps, so packing the same folder twice gives the
// same bytes.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/dataset/dataset_entry.h"
#include "traces/dataset/dataset_files.h"

namespace ssgd::trace {

inline constexpr std::string_view kDatasetManifestFormat = "ssgd.dataset.manifest";
// Bump when a reader of the old version would misread the new one; readers
// refuse versions they do not know.
inline constexpr std::int64_t kDatasetManifestVersion = 1;

// The errors a dataset's cases are expected to stay within, in percent of
// the measured time (`ssgd dataset verify`'s default for --max-error and
// --max-whatif-error). Unset: no check unless the flags ask.
struct DatasetTolerance {
  std::optional<double> max_error_percent;         // every case
  std::optional<double> max_whatif_error_percent;  // what-if cases (default: max_error_percent)
  [[nodiscard]] bool empty() const { return !max_error_percent && !max_whatif_error_percent; }
};

struct DatasetManifest {
  std::string name;  // the dataset's name (default: its folder's)
  std::string description;
  DatasetTolerance tolerance;  // written as `tolerance` only when set
  std::string ssgd_version;           // of the ssgd that packed it
  std::vector<DatasetEntry> entries;  // sorted by id
  std::vector<DatasetFile> files;     // every file but the manifest, sorted by path
};

// The manifest as JSON text (two-space indent, a final newline).
std::string manifest_text(const DatasetManifest& manifest);

// Parses and checks a manifest: format and version, every field's type, the
// entries' own rules (dataset_entry.h) and links, that each entry's files
// and entry.json are listed, and that the file list holds dataset paths,
// each once, with well-formed sizes and checksums. Throws InputError naming
// `file` and the field.
DatasetManifest parse_manifest(std::string_view text, const std::string& file);

// Reads DIR/manifest.json with parse_manifest.
DatasetManifest read_manifest(const std::filesystem::path& dir);

}  // namespace ssgd::trace
