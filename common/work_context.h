#pragma once
// What this thread is doing, for the message of a failure that cannot say it
// itself: an out-of-memory exit ("out of memory while reading 'x.ssgdt'
// (ssgd trace, chunk 3, event 1200)"). A reader or a command's stage opens a
// WorkContext for its life; a stage that advances record by record updates
// its position (a plain store: nothing is allocated or formatted until a
// failure is described).
//
// A context holds a static phrase (a string literal, kept by pointer), the
// file it works on (copied into the guard, cut to kMaxEchoBytes: opening one
// allocates nothing) and up to two positions ("chunk 3, event 1200").
//
// Contexts nest (a stack per thread). A context without a file borrows the
// nearest outer context's: "building the task graph" inside "replaying
// 'x.ssgdt'" reads "building the task graph of 'x.ssgdt'". When a context is
// left by an exception, the innermost such context is remembered, described
// with its positions at that moment and followed by each outer context that
// names another file ("reading 'rank-3.ssgdt' (ssgd trace, chunk 2) for
// merging 'run'"), in a fixed buffer of the thread: by the time main()
// catches a std::bad_alloc every guard is gone. Describing writes into that
// buffer and allocates nothing. A context opened later, or one closed
// normally, forgets what an earlier, handled failure left.
//
// A context belongs to the thread that opened it. It may be moved (a reader
// that holds one is returned by value): the moved-to guard takes its place in
// the stack. Work done for this thread on another one carries its phrase
// back with the exception (carry_work_context_failure).

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace ssgd {

class WorkContext {
 public:
  static constexpr std::size_t kMaxFileBytes = 200;  // common/error.h's kMaxEchoBytes

  // Opens nothing (a member opened later by assignment).
  WorkContext() noexcept = default;
  // "ACTION 'FILE' (WHAT, UNIT N, INNER_UNIT M)": `action`, `what` and the
  // units are string literals (kept by pointer); `what` may be null; a
  // position is shown once it was set.
  explicit WorkContext(const char* action, std::string_view file = {},
                       const char* what = nullptr, const char* unit = "record",
                       const char* inner_unit = nullptr) noexcept;
  ~WorkContext();
  WorkContext(WorkContext&& other) noexcept;
  WorkContext& operator=(WorkContext&& other) noexcept;
  WorkContext(const WorkContext&) = delete;
  WorkContext& operator=(const WorkContext&) = delete;

  void set_position(std::int64_t n) noexcept { position_ = n; }
  void set_inner_position(std::int64_t n) noexcept { inner_position_ = n; }

  // This context and the outer ones as the failure message says them:
  // "reading 'x.et' (Chakra ET, record 123)".
  [[nodiscard]] std::string describe() const;

 private:
  friend struct WorkContextAccess;
  void link() noexcept;
  void unlink() noexcept;
  void take_place_of(WorkContext& other) noexcept;

  const char* action_ = nullptr;  // null: not open
  const char* what_ = nullptr;
  const char* unit_ = nullptr;
  const char* inner_unit_ = nullptr;
  std::int64_t position_ = -1;
  std::int64_t inner_position_ = -1;
  std::size_t file_size_ = 0;  // of the whole path
  std::size_t file_kept_ = 0;  // its first bytes, in file_
  char file_[kMaxFileBytes + 1] = {};
  WorkContext* outer_ = nullptr;
  WorkContext* inner_ = nullptr;
  void* owner_ = nullptr;  // the stack of the thread that opened it
  int exceptions_ = 0;  // std::uncaught_exceptions() when opened
};

// What the innermost context was doing when an exception last left it, or
// else what the contexts open now are doing; empty when there is neither.
// The phrase is cut at 1024 bytes.
[[nodiscard]] std::string work_context_at_failure();

// What the contexts open now are doing (no failure's phrase); empty when none.
[[nodiscard]] std::string work_context_now();

// ssgd's out-of-memory message: "out of memory while reading 'x.et' (Chakra
// ET, record 12); see docs/performance.md for what a run needs" (the stage
// from work_context_at_failure; "out of memory; see ..." without one).
[[nodiscard]] std::string out_of_memory_message();

// The message of a failure caught as a std::exception: out_of_memory_message()
// for a std::bad_alloc, else e.what().
[[nodiscard]] std::string failure_message(const std::exception& e);

// For a failure caught on a worker thread and rethrown on this one: sets the
// phrase this thread reports (work_context_at_failure) to `phrase`, unless
// `phrase` is empty.
void carry_work_context_failure(std::string_view phrase) noexcept;

}  // namespace ssgd
