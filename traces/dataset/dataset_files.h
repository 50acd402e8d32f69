#pragma once
// The files of a dataset folder (docs/datasets.md): how a path inside it is
// written, which files count, and their sizes and SHA-256 checksums.
//
// A dataset path is relative to the dataset's folder, written with '/', in
// normal form (no '.', '..' or empty components). Files and folders whose
// name starts with '.' are hidden: they are not part of the dataset (so an
// editor's swap file or a .gitattributes does not break `verify`), and an
// entry may not name one. Every other file must be a regular file: a
// symbolic link or a special file anywhere in the folder is refused, so that
// nothing the manifest describes can point outside the folder.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"

namespace ssgd::trace {

// The manifest's own name; it is the one file the manifest does not list.
inline constexpr const char* kDatasetManifestName = "manifest.json";
// The name of the file that makes a folder an entry.
inline constexpr const char* kDatasetEntryName = "entry.json";

// One file of the dataset as the manifest lists it.
struct DatasetFile {
  std::string path;  // dataset path
  std::int64_t size_bytes = 0;
  std::string sha256;  // 64 lower-case hex digits

  friend bool operator==(const DatasetFile&, const DatasetFile&) = default;
};

// True when a component of the dataset path `path` starts with '.'.
bool is_hidden_dataset_path(const std::string& path);

// The dataset path of `given`, a path relative to the folder `base` (itself
// a dataset path, "" for the dataset's root). Fails at `where` when `given`
// is empty or absolute, names the folder itself, leaves the dataset through
// '..', or is hidden or the manifest.
std::string resolve_dataset_path(const std::string& base, const std::string& given,
                                 const InputLocation& where);

// Fails at `where` unless `path` is a dataset path as resolve_dataset_path
// writes it (for paths read back from a manifest).
void check_dataset_path(const std::string& path, const InputLocation& where);

// Fails at `where` unless the dataset path `path` is a regular file under
// `dir`, reached without a symbolic link.
void check_dataset_file(const std::filesystem::path& dir, const std::string& path,
                        const InputLocation& where);

// The dataset path of `file` (a path that starts with `dir`, as the scenario
// reader builds the paths it reads), checked as resolve_dataset_path does;
// relative paths are compared lexically, so `dir` and `file` are given as
// the scenario saw them.
std::string dataset_path_of(const std::filesystem::path& dir, const std::filesystem::path& file,
                            const InputLocation& where);

// What is in a dataset folder: the dataset paths of its regular files (not
// hidden, not the manifest), sorted by byte value, and one problem per
// symbolic link or special file found.
struct DatasetScan {
  std::vector<std::string> files;
  std::vector<InputError> problems;
};
DatasetScan scan_dataset(const std::filesystem::path& dir);

// Sizes and SHA-256 of `paths` under `dir`. Throws std::runtime_error when a
// file cannot be read.
std::vector<DatasetFile> hash_dataset_files(const std::filesystem::path& dir,
                                            const std::vector<std::string>& paths);

// Compares the folder with the files the manifest lists: each listed file
// must be there with its size and checksum, and no other file may be. One
// problem per difference, each naming the file (under `dir`) and the field,
// in path order; the scan's own problems come first. `manifest` names the
// manifest file in messages.
std::vector<InputError> check_dataset_files(const std::filesystem::path& dir,
                                            const std::string& manifest,
                                            const std::vector<DatasetFile>& listed,
                                            const DatasetScan& scan);

}  // namespace ssgd::trace
