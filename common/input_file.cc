#include "common/input_file.h"

#include <sys/stat.h>

#include <string>

#include "common/error.h"
#include "common/file_type.h"

namespace ssgd {

void require_regular_file(const std::filesystem::path& path, std::string_view what) {
  struct stat st {};
  // stat, not lstat: a symbolic link to a regular file is read through.
  if (::stat(path.c_str(), &st) != 0) return;  // missing or unreachable: the reader says so
  if (S_ISREG(st.st_mode)) return;
  throw InputError({path.string(), std::nullopt, std::nullopt, std::string(what)},
                   std::string("is ") + file_type_name(st.st_mode) +
                       ", not a regular file: ssgd reads its inputs from regular files");
}

}  // namespace ssgd
