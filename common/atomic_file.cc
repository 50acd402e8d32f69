#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <streambuf>
#include <system_error>
#include <vector>

#include "common/file_type.h"
#include "common/write_all.h"

namespace ssgd {
namespace detail {

// An output stream's buffer over a file descriptor: a temporary file or a
// FIFO, a device or a descriptor written through. It keeps the system's
// reason for a failed write (errno), which a std::ofstream loses, and puts
// it back in errno whenever it fails, for the messages that read it.
class DescriptorBuf : public std::streambuf {
 public:
  explicit DescriptorBuf(int fd) : fd_(fd), buffer_(kBufferBytes) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  ~DescriptorBuf() override { close(); }
  DescriptorBuf(const DescriptorBuf&) = delete;
  DescriptorBuf& operator=(const DescriptorBuf&) = delete;

  // errno of the first failed write or close, 0 if none.
  [[nodiscard]] int error() const { return error_; }

  // Closes without writing what is buffered; false (error() says why) if
  // close(2) reports an earlier write's failure (NFS, some devices).
  bool close() {
    if (fd_ < 0) return true;
    const int r = ::close(fd_);
    fd_ = -1;
    if (r != 0 && errno != EINTR) return fail(errno);
    return true;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (error_ != 0) {
      fail(error_);
      return 0;
    }
    if (n <= epptr() - pptr()) {
      std::memcpy(pptr(), s, static_cast<std::size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    // More than fits: what is buffered, then the rest directly.
    if (!drain() || !write_all(s, static_cast<std::size_t>(n))) return 0;
    return n;
  }

  int sync() override { return drain() ? 0 : -1; }

 private:
  static constexpr std::size_t kBufferBytes = 64 * 1024;

  bool fail(int error) {
    if (error_ == 0) error_ = error;
    errno = error_;
    return false;
  }

  bool write_all(const char* data, std::size_t size) {
    if (error_ != 0) return fail(error_);
    if (fd_ < 0) return fail(EBADF);
    const int error = ssgd::write_all(fd_, data, size);
    return error == 0 || fail(error);
  }

  bool drain() {
    const std::size_t size = static_cast<std::size_t>(pptr() - pbase());
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return write_all(buffer_.data(), size);
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

}  // namespace detail

namespace {

std::string system_reason(int error) {
  return error != 0 ? std::string(": ") + std::strerror(error) : std::string();
}

// Opens what a kStream target names: a duplicate of the descriptor, or the
// FIFO or device itself (no O_CREAT, no O_TRUNC: nothing is made or cut).
int open_stream(const std::filesystem::path& final_path, const OutputTarget& target) {
  if (target.descriptor >= 0) {
    // What the process wrote to it so far comes first.
    if (target.descriptor == 1) std::cout.flush();
    std::fflush(nullptr);
    const int fd = ::fcntl(target.descriptor, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
      throw std::runtime_error("cannot write to '" + final_path.string() + "' (" + target.what +
                               ")" + system_reason(errno));
    }
    return fd;
  }
  int fd = -1;
  do {
    fd = ::open(target.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    throw std::runtime_error("cannot open '" + final_path.string() + "' for writing" +
                             system_reason(errno));
  }
  // Still a FIFO or a device once open: a file put in its place meanwhile
  // would be overwritten in place, not replaced whole.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
    ::close(fd);
    throw std::runtime_error("cannot write '" + final_path.string() + "': it was " + target.what +
                             " when checked and is no longer");
  }
  return fd;
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path final_path, bool /*binary: POSIX has no text mode*/)
    : final_(std::move(final_path)), target_(output_target(final_)), out_(nullptr) {
  int fd = -1;
  switch (target_.kind) {
    case OutputKind::kRefused:
      throw std::runtime_error("cannot write '" + final_.string() + "': " + target_.what);
    case OutputKind::kStream: fd = open_stream(final_, target_); break;
    case OutputKind::kFile: {
      // Unique per process and per object, so two outputs never share a
      // temporary; O_EXCL | O_NOFOLLOW: never a name someone else holds.
      static std::atomic<unsigned> counter{0};
      for (int attempt = 0; fd < 0; ++attempt) {
        temp_ = target_.path;
        temp_ += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
        fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && !((errno == EEXIST || errno == EINTR) && attempt < 16)) {
          const int error = errno;
          temp_.clear();
          throw std::runtime_error("cannot open '" + final_.string() + "' for writing" +
                                   system_reason(error));
        }
      }
      break;
    }
  }
  try {
    buf_ = std::make_unique<detail::DescriptorBuf>(fd);
  } catch (...) {
    ::close(fd);
    std::error_code ec;
    if (!temp_.empty()) std::filesystem::remove(temp_, ec);
    throw;
  }
  out_.rdbuf(buf_.get());
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  buf_->close();  // what is buffered is dropped: the run failed
  if (!temp_.empty()) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  if (committed_) return;
  const bool written = static_cast<bool>(out_) && buf_->pubsync() == 0;
  if (!written || !buf_->close()) {
    // The system's reason (no space left, file too large) when it left one.
    throw std::runtime_error("error while writing '" + final_.string() + "'" +
                             system_reason(buf_->error()));
  }
  if (writes_through()) {
    committed_ = true;
    return;
  }
  // Never renamed over anything but a regular file, even one that became
  // something else (a FIFO, a device, a link) since the output was opened.
  struct stat st {};
  if (::lstat(target_.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw std::runtime_error("cannot replace '" + target_.path.string() + "': it is now " +
                             file_type_name(st.st_mode) +
                             ", not a regular file; nothing was written");
  }
  std::error_code ec;
  std::filesystem::rename(temp_, target_.path, ec);
  if (ec) {
    throw std::runtime_error("cannot rename '" + temp_.string() + "' to '" + target_.path.string() +
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
