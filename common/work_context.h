#pragma once
// What this thread is doing, for the message of a failure that cannot say it
// itself: an out-of-memory exit ("out of memory while reading 'x.et' (Chakra
// ET, record 123)"). A reader or a command opens a WorkContext for the life
// of a stage; a stage that advances record by record updates its count.
//
// Contexts nest (a stack per thread). When one is left by an exception, the
// innermost such context is remembered, described as it was at that moment
// (with its record), in a fixed buffer: by the time main() catches a
// std::bad_alloc every guard is gone, and describing then must not allocate.
// A context opened later forgets what an earlier, handled failure left.

#include <cstdint>
#include <string>
#include <string_view>

namespace ssgd {

class WorkContext {
 public:
  // "reading 'FILE' (WHAT, UNIT N)"; `what` may be empty, `unit` is
  // "record", "line", "event", ... and shown once set_position() was called.
  WorkContext(std::string_view action, std::string_view file, std::string_view what = {},
              std::string_view unit = "record");
  ~WorkContext();
  WorkContext(const WorkContext&) = delete;
  WorkContext& operator=(const WorkContext&) = delete;

  void set_position(std::int64_t n) { position_ = n; }

  // This context as a phrase: "reading 'x.et' (Chakra ET, record 123)".
  [[nodiscard]] std::string describe() const;

 private:
  std::string action_;
  std::string file_;
  std::string what_;
  std::string unit_;
  std::int64_t position_ = -1;
  WorkContext* outer_;
  int exceptions_;
};

// What the innermost context was doing when an exception last left it, or
// else the innermost context open now; empty when there is neither. Does
// not allocate beyond the returned string's own (the phrase is kept in a
// fixed buffer of this thread, cut at 512 bytes).
[[nodiscard]] std::string work_context_at_failure();

}  // namespace ssgd
