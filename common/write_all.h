#pragma once
// Writes a whole buffer to a file descriptor, the way every output that
// keeps the system's reason for a failure writes (AtomicFile's buffer, the
// sweep's results file).

#include <cstddef>

namespace ssgd {

// Writes `size` bytes of `data` to `fd`, again after a signal interrupts a
// write and on through short writes. 0 when all was written, else the errno
// of the failure (EIO for a write that wrote nothing).
[[nodiscard]] int write_all(int fd, const char* data, std::size_t size);

}  // namespace ssgd
