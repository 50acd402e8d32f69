#pragma once
// Degenerate inputs for the bounded-reader tests (docs/reliability.md): a
// pattern repeated to a size, and gzip of bytes, generated in the test.

#include <sstream>
#include <string>
#include <string_view>

#include "common/gzip_stream.h"

namespace ssgd::testing {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;

// `head`, then `unit` repeated until the text is at least `size` bytes, then
// `tail`.
inline std::string repeated(std::string_view head, std::string_view unit, std::size_t size,
                            std::string_view tail = {}) {
  std::string text(head);
  text.reserve(size + unit.size() + tail.size());
  while (text.size() < size) text += unit;
  text += tail;
  return text;
}

// `level` 1 is deflate's fastest; 9 its best (about 1000 times for zeros).
inline std::string gzip_bytes(const std::string& bytes, int level = 1) {
  std::ostringstream out;
  GzipWriter gz(out, level);
  gz.write(bytes);
  gz.finish();
  return out.str();
}

}  // namespace ssgd::testing
