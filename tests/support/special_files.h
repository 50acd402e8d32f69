#pragma once
// Files that are not regular ones, for the tests of outputs written through
// or refused (docs/reliability.md): a FIFO's reader, character devices and
// sockets of the test's own, and what a path is.

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace ssgd::testing {

// The type of what `path` names, links not followed (S_IFREG, S_IFLNK,
// S_IFIFO...); 0 when there is nothing.
inline mode_t file_type_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & S_IFMT;
}

// The names in `folder`, sorted.
inline std::vector<std::string> sorted_names(const std::filesystem::path& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A character device of the test's own: major 1 is the memory devices
// (3 /dev/null, 7 /dev/full). False when this process may not make one
// (mknod needs root).
inline bool make_char_device(const std::filesystem::path& path, unsigned minor) {
  return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
}

// A Unix socket bound at `path`: its descriptor, to close when done, or -1.
inline int bind_unix_socket(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = path.string();
  if (name.size() >= sizeof addr.sun_path) return -1;
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return -1;
  std::strcpy(addr.sun_path, name.c_str());
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(s);
    return -1;
  }
  return s;
}

// Everything a FIFO's writer sends until it closes, read without ever
// blocking: a writer that never comes (the FIFO replaced by a file instead
// of written through) fails the test after a timeout instead of hanging it.
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
