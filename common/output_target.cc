#include "common/output_target.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

#include "common/file_type.h"

namespace ssgd {
namespace {

namespace fs = std::filesystem;

// The descriptor a path names by itself: /dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N.
std::optional<int> descriptor_of(const fs::path& path) {
  const std::string p = path.lexically_normal().string();
  if (p == "/dev/stdout") return 1;
  if (p == "/dev/stderr") return 2;
  if (p == "/dev/stdin") return 0;
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!p.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(p).substr(prefix.size());
    int fd = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) return fd;
  }
  return std::nullopt;
}

OutputTarget refused(std::string why) { return {OutputKind::kRefused, {}, -1, std::move(why)}; }

OutputTarget through_descriptor(const fs::path& path, int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return refused("names descriptor " + std::to_string(fd) + ", which is not open");
  if ((flags & O_ACCMODE) == O_RDONLY) {
    return refused("names descriptor " + std::to_string(fd) + ", which is not open for writing");
  }
  return {OutputKind::kStream, path, fd, "descriptor " + std::to_string(fd)};
}

// Why a file of this type cannot be an output, or "" when it can.
std::string refusal(mode_t mode) {
  if (S_ISREG(mode) || S_ISFIFO(mode) || S_ISCHR(mode)) return "";
  if (S_ISBLK(mode))
    return std::string("is ") + file_type_name(mode) + " (ssgd writes no disk directly)";
  if (S_ISDIR(mode) || S_ISSOCK(mode)) return std::string("is ") + file_type_name(mode);
  return "is not a regular file, a FIFO or a character device";
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

OutputTarget output_target(const fs::path& path) {
  // The chain of links, followed by name: the name at its end is what a
  // file's rename replaces, so that a link stays a link; a link to one of
  // the process's descriptors is that descriptor.
  fs::path at = path;
  bool loop = false;
  for (int hops = 0;; ++hops) {
    if (const auto fd = descriptor_of(at)) return through_descriptor(path, *fd);
    struct stat link {};
    if (::lstat(at.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) break;
    if (hops == 40) {
      loop = true;
      break;
    }
    std::error_code ec;
    const fs::path to = fs::read_symlink(at, ec);
    if (ec) return refused("is a symbolic link that cannot be read: " + ec.message());
    at = to.is_absolute() ? to : at.parent_path() / to;
  }

  // What the path leads to, links followed.
  struct stat final_stat {};
  const bool exists = ::stat(path.c_str(), &final_stat) == 0;
  if (!exists && (loop || errno == ELOOP)) return refused("is a loop of symbolic links");
  if (!exists && errno != ENOENT) {
    // ENOTDIR, EACCES: the open says why, naming the path.
    return {OutputKind::kFile, path, -1, ""};
  }
  if (exists) {
    if (std::string why = refusal(final_stat.st_mode); !why.empty()) return refused(why);
    if (S_ISFIFO(final_stat.st_mode) || S_ISCHR(final_stat.st_mode)) {
      return {OutputKind::kStream, path, -1, file_type_name(final_stat.st_mode)};
    }
  }
  // A regular file or a name not taken yet. The name reached must be the
  // file the path leads to: a /proc link to a deleted file, or to no name at
  // all, is not.
  struct stat end {};
  const bool end_exists = ::lstat(at.c_str(), &end) == 0;
  if (exists ? !end_exists || !same_file(end, final_stat) : end_exists) {
    return refused("is a link that does not lead to a file's name (a /proc link?)");
  }
  return {OutputKind::kFile, at, -1, ""};
}

}  // namespace ssgd
