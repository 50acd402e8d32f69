#pragma once
// Everything a FIFO's writer sends until it closes, read without ever
// blocking: a writer that never comes (the FIFO replaced by a file instead
// of written through, docs/reliability.md) fails the test after a timeout
// instead of hanging it.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace ssgd::testing {

class FifoReader {
 public:
  // Opened non-blocking, so that a reader is there before the writer opens
  // and the writer's open does not wait.
  explicit FifoReader(const std::filesystem::path& fifo)
      : fd_(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK)) {}
  ~FifoReader() {
    if (fd_ >= 0) ::close(fd_);
  }
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;

  [[nodiscard]] bool opened() const { return fd_ >= 0; }

  // The bytes up to the writer's close; `done` false if it did not close in
  // time.
  std::string read_all(bool& done, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::string got;
    done = false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 && (p.revents & POLLHUP)) {
        done = true;  // a writer came and went
        return got;
      }
    }
    return got;
  }

 private:
  int fd_ = -1;
};

}  // namespace ssgd::testing
