#pragma once
// Every output file ssgd writes goes through an AtomicFile, which writes it
// as common/output_target.h decides from what the path is:
//
// - a regular file, or a name not taken yet (kFile): written under a
//   temporary name in the same folder (`<name>.tmp.<pid>.<n>`) and renamed
//   into place on commit(), so a failed run never leaves a half-written
//   output; a file not committed is removed when the object is destroyed.
//   For a symbolic link, the file at the end of the link is the one
//   replaced: the link stays a link (rename(2) would otherwise put a
//   regular file in the link's place).
// - a FIFO, a character device (/dev/null, a terminal) or /dev/stdout and
//   its kin (kStream): written through, streamed into what is there and
//   never renamed over, truncated or removed; commit() flushes and reports
//   a failed write (ENOSPC of /dev/full) naming the path. What was written
//   before a failure has reached the reader: it cannot be taken back.
// - anything else (a folder, a block device, a socket): refused, by the
//   constructor, with std::runtime_error naming the path.
//
// This is the last defence: the commands check their outputs the same way
// before any work (tools/ssgd/cli_options.h, check_outputs), and commit()
// looks again before it renames, so that a path turned into something else
// meanwhile (a FIFO, a device, a link) is refused instead of replaced.

#include <filesystem>
#include <fstream>  // for the files that include this header for it
#include <memory>
#include <ostream>
#include <string>

#include "common/output_target.h"

namespace ssgd {

namespace detail {
class DescriptorBuf;
}

class AtomicFile {
 public:
  // Opens the output (a FIFO: waits for its reader). Throws
  // std::runtime_error naming the path when it cannot, or may not, write it.
  explicit AtomicFile(std::filesystem::path final_path, bool binary = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  // Flushes, checks for write errors and (a file) renames into place.
  // Throws std::runtime_error naming the file on failure.
  void commit();

  [[nodiscard]] const std::filesystem::path& path() const { return final_; }
  // Whether the output is written through (a FIFO, a device, a descriptor)
  // rather than renamed into place: such an output cannot be removed again.
  [[nodiscard]] bool writes_through() const { return target_.kind == OutputKind::kStream; }
  // The file renamed over on commit(): path(), or the file a link leads to.
  [[nodiscard]] const std::filesystem::path& replaced_path() const { return target_.path; }
  // The temporary name written to until commit(): `<name>.tmp.<pid>.<n>`
  // beside replaced_path(); empty when written through.
  [[nodiscard]] const std::filesystem::path& temporary_path() const { return temp_; }

 private:
  std::filesystem::path final_;
  OutputTarget target_;
  std::filesystem::path temp_;
  std::unique_ptr<detail::DescriptorBuf> buf_;
  std::ostream out_;
  bool committed_ = false;
};

// Writes `content` to `path` through an AtomicFile.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace ssgd
