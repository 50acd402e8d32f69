#include "traces/dataset/dataset_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/sha256.h"
#include "common/utf8.h"

namespace ssgd::trace {
namespace fs = std::filesystem;

namespace {

InputLocation at_file(const fs::path& file, std::string field = "") {
  return InputLocation{file.string(), std::nullopt, std::nullopt, std::move(field)};
}

void sort_by_file(std::vector<InputError>& problems) {
  std::stable_sort(problems.begin(), problems.end(), [](const InputError& a, const InputError& b) {
    return a.where().file < b.where().file;
  });
}

}  // namespace

bool is_hidden_dataset_path(const std::string& path) {
  for (const fs::path& part : fs::path(path)) {
    const std::string name = part.string();
    if (!name.empty() && name.front() == '.' && name != "." && name != "..") return true;
  }
  return false;
}

std::string resolve_dataset_path(const std::string& base, const std::string& given,
                                 const InputLocation& where) {
  if (given.empty()) throw InputError(where, "is empty: expected a path to a file");
  const fs::path g(given);
  if (g.has_root_path()) {
    throw InputError(where, fmt::format("'{}' is absolute; paths in a dataset are relative to "
                                        "the entry's folder",
                                        given));
  }
  std::string normal = (base.empty() ? g : fs::path(base) / g).lexically_normal().generic_string();
  while (!normal.empty() && normal.back() == '/') normal.pop_back();
  if (normal.empty() || normal == ".") {
    throw InputError(where, fmt::format("'{}' names a folder, not a file", given));
  }
  if (normal == ".." || normal.starts_with("../")) {
    throw InputError(where, fmt::format("'{}' leaves the dataset folder", given));
  }
  if (is_hidden_dataset_path(normal)) {
    throw InputError(where, fmt::format("'{}' is hidden (a name starting with '.'); hidden files "
                                        "are not part of a dataset",
                                        given));
  }
  if (normal == kDatasetManifestName) {
    throw InputError(where, fmt::format("'{}' is the dataset's manifest", given));
  }
  return normal;
}

void check_dataset_path(const std::string& path, const InputLocation& where) {
  const std::string normal = resolve_dataset_path("", path, where);
  if (normal != path) {
    throw InputError(where, fmt::format("'{}' is not a dataset path in normal form (expected '{}')",
                                        path, normal));
  }
}

void check_dataset_file(const fs::path& dir, const std::string& path, const InputLocation& where) {
  fs::path at = dir;
  const fs::path rel(path);
  for (auto part = rel.begin(); part != rel.end(); ++part) {
    at /= *part;
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(at, ec);
    if (!fs::exists(st)) {
      throw InputError(where, fmt::format("'{}' does not exist", at.string()));
    }
    if (fs::is_symlink(st)) {
      throw InputError(where, fmt::format("'{}' is a symbolic link; a dataset holds regular files "
                                          "only",
                                          at.string()));
    }
    const bool last = std::next(part) == rel.end();
    if (last && !fs::is_regular_file(st)) {
      throw InputError(where, fmt::format("'{}' is not a regular file", at.string()));
    }
    if (!last && !fs::is_directory(st)) {
      throw InputError(where, fmt::format("'{}' is not a folder", at.string()));
    }
  }
}

std::string dataset_path_of(const fs::path& dir, const fs::path& file, const InputLocation& where) {
  const fs::path rel = file.lexically_normal().lexically_relative(dir.lexically_normal());
  const std::string s = rel.generic_string();
  if (rel.empty() || s == ".." || s.starts_with("../")) {
    throw InputError(
        where, fmt::format("'{}' is outside the dataset folder '{}'", file.string(), dir.string()));
  }
  return resolve_dataset_path("", s, where);
}

DatasetScan scan_dataset(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(at_file(dir), fs::exists(dir, ec) ? "is not a folder" : "no such folder");
  }
  DatasetScan scan;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    const fs::file_status st = it->symlink_status();
    if (!name.empty() && name.front() == '.') {
      if (fs::is_directory(st)) it.disable_recursion_pending();
      continue;
    }
    if (fs::is_symlink(st)) {
      scan.problems.emplace_back(at_file(p),
                                 "is a symbolic link; a dataset holds regular files "
                                 "only, so that nothing in it points outside");
    } else if (fs::is_regular_file(st)) {
      const std::string rel = p.lexically_relative(dir).generic_string();
      if (std::string why = utf8_problem(rel); !why.empty()) {
        // The manifest is JSON, which is UTF-8: the name could not be listed.
        scan.problems.emplace_back(at_file(p), "its name " + why + "; rename it");
      } else if (rel != kDatasetManifestName) {
        scan.files.push_back(rel);
      }
    } else if (!fs::is_directory(st)) {
      scan.problems.emplace_back(at_file(p),
                                 "is not a regular file (a dataset holds regular "
                                 "files only)");
    }
  }
  std::sort(scan.files.begin(), scan.files.end());
  sort_by_file(scan.problems);
  return scan;
}

std::vector<DatasetFile> hash_dataset_files(const fs::path& dir,
                                            const std::vector<std::string>& paths) {
  std::vector<DatasetFile> files;
  files.reserve(paths.size());
  for (const std::string& path : paths) {
    DatasetFile f;
    f.path = path;
    f.sha256 = sha256_file_hex(dir / path, &f.size_bytes);
    files.push_back(std::move(f));
  }
  return files;
}

std::vector<InputError> check_dataset_files(const fs::path& dir, const std::string& manifest,
                                            const std::vector<DatasetFile>& listed,
                                            const DatasetScan& scan) {
  std::vector<InputError> problems = scan.problems;
  const std::set<std::string> present(scan.files.begin(), scan.files.end());
  std::set<std::string> listed_paths;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const DatasetFile& f = listed[i];
    listed_paths.insert(f.path);
    const fs::path file = dir / f.path;
    if (!present.contains(f.path)) {
      std::error_code ec;
      const fs::file_status st = fs::symlink_status(file, ec);
      if (!fs::exists(st)) {
        problems.emplace_back(at_file(file),
                              fmt::format("missing: {} lists it (files[{}])", manifest, i));
      } else if (fs::is_directory(st)) {
        problems.emplace_back(at_file(file), fmt::format("is a folder; {} lists a file there "
                                                         "(files[{}])",
                                                         manifest, i));
      }
      // Otherwise it is a link, or lies behind one, and the scan named the link.
      continue;
    }
    std::error_code ec;
    const auto size = static_cast<std::int64_t>(fs::file_size(file, ec));
    if (ec) {
      problems.emplace_back(at_file(file), "cannot read its size: " + ec.message());
      continue;
    }
    if (size != f.size_bytes) {
      problems.emplace_back(at_file(file, "size_bytes"),
                            fmt::format("changed: {} bytes, {} says {} (files[{}])", size, manifest,
                                        f.size_bytes, i));
      continue;
    }
    const std::string sha256 = sha256_file_hex(file);
    if (sha256 != f.sha256) {
      problems.emplace_back(at_file(file, "sha256"),
                            fmt::format("changed: its SHA-256 is {}, {} says {} (files[{}])",
                                        sha256, manifest, f.sha256, i));
    }
  }
  for (const std::string& path : scan.files) {
    if (!listed_paths.contains(path)) {
      problems.emplace_back(at_file(dir / path),
                            fmt::format("not listed in {}: added after the dataset was packed "
                                        "(remove it, or run `ssgd dataset pack` again)",
                                        manifest));
    }
  }
  sort_by_file(problems);
  return problems;
}

}  // namespace ssgd::trace
