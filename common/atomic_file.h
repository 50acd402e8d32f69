#pragma once
// Output files are written under a temporary name in the same folder and
// renamed into place on commit(), so a failed run never leaves a half-written
// output. A file not committed is removed when the object is destroyed.

#include <filesystem>
#include <fstream>
#include <string>

namespace ssgd {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path final_path, bool binary = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, checks for write errors and renames into place. Throws
  // std::runtime_error naming the file on failure.
  void commit();

  [[nodiscard]] const std::filesystem::path& path() const { return final_; }
  // The temporary name written to until commit(): `<path>.tmp.<pid>.<n>`.
  [[nodiscard]] const std::filesystem::path& temporary_path() const { return temp_; }

 private:
  std::filesystem::path final_;
  std::filesystem::path temp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Writes `content` to `path` through an AtomicFile.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace ssgd
