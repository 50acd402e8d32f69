#pragma once
// A file's type in the words every message about inputs and outputs uses:
// "a folder", "a FIFO (named pipe)", "a character device"...

#include <sys/types.h>

namespace ssgd {

// `mode` as stat or lstat give it; "not a file" for a type none of these is.
[[nodiscard]] const char* file_type_name(mode_t mode);

}  // namespace ssgd
