#include "common/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace ssgd {

AtomicFile::AtomicFile(std::filesystem::path final_path, bool binary)
    : final_(std::move(final_path)) {
  temp_ = final_;
  // Unique per process and per object, so two outputs never share a temporary.
  static std::atomic<unsigned> counter{0};
  temp_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  out_.open(temp_, binary ? std::ios::out | std::ios::binary | std::ios::trunc
                          : std::ios::out | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error("cannot open '" + final_.string() + "' for writing: " +
                             std::strerror(errno));
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  if (out_) errno = 0;  // else errno may still hold why an earlier write failed
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail()) {
    // The system's reason (no space left, file too large) when it left one.
    const int error = errno;
    throw std::runtime_error("error while writing '" + final_.string() + "'" +
                             (error != 0 ? std::string(": ") + std::strerror(error) : ""));
  }
  std::error_code ec;
  std::filesystem::rename(temp_, final_, ec);
  if (ec) {
    throw std::runtime_error("cannot rename '" + temp_.string() + "' to '" + final_.string() +
                             "': " + ec.message());
  }
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  AtomicFile f(path, /*binary=*/true);
  f.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  f.commit();
}

}  // namespace ssgd
