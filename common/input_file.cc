#include "common/input_file.h"

#include <sys/stat.h>

#include <string>

#include "common/error.h"

namespace ssgd {
namespace {

// What a file that is not a regular one is, in words.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void require_regular_file(const std::filesystem::path& path, std::string_view what) {
  struct stat st {};
  // stat, not lstat: a symbolic link to a regular file is read through.
  if (::stat(path.c_str(), &st) != 0) return;  // missing or unreachable: the reader says so
  if (S_ISREG(st.st_mode)) return;
  throw InputError({path.string(), std::nullopt, std::nullopt, std::string(what)},
                   std::string("is ") + kind_of(st.st_mode) +
                       ", not a regular file: ssgd reads its inputs from regular files");
}

}  // namespace ssgd
