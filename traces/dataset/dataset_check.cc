#include "traces/dataset/dataset_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ssgd::trace {

DatasetCheck check_dataset(const std::filesystem::path& dir) {
  DatasetCheck check{read_manifest(dir), {}};
  const std::string manifest = (dir / kDatasetManifestName).string();
  const DatasetScan scan = scan_dataset(dir);
  check.problems = check_dataset_files(dir, manifest, check.manifest.files, scan);

  // Each intact entry.json must say what the manifest says of it: an entry
  // edited in the manifest alone is caught here, not by the checksums.
  std::set<std::string> damaged;
  for (const InputError& p : check.problems) damaged.insert(p.where().file);
  const auto& entries = check.manifest.entries;
  for (const DatasetFile& f : check.manifest.files) {
    if (std::filesystem::path(f.path).filename() != kDatasetEntryName) continue;
    if (damaged.contains((dir / f.path).string())) continue;
    const auto inline_entry = std::find_if(entries.begin(), entries.end(),
                                           [&](const auto& e) { return e.entry_file == f.path; });
    const auto index = static_cast<std::size_t>(inline_entry - entries.begin());
    try {
      const DatasetEntry on_disk = read_dataset_entry(dir, f.path);
      if (inline_entry == entries.end()) {
        check.problems.emplace_back(
            InputLocation{manifest, std::nullopt, std::nullopt, "entries"},
            fmt::format("no entry for {}, which the manifest lists", f.path));
      } else if (entry_manifest_json(on_disk) != entry_manifest_json(*inline_entry)) {
        check.problems.emplace_back(
            InputLocation{manifest, std::nullopt, std::nullopt, fmt::format("entries[{}]", index)},
            fmt::format("differs from {}: the manifest was edited after packing (run `ssgd "
                        "dataset pack` again)",
                        f.path));
      }
    } catch (const InputError& e) {
      check.problems.push_back(e);
    }
  }
  return check;
}

}  // namespace ssgd::trace
