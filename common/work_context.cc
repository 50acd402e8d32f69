#include "common/work_context.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <new>

namespace ssgd {
namespace {

constexpr std::size_t kPhraseBytes = 1024;

struct ThreadState {
  WorkContext* top = nullptr;
  char failed[kPhraseBytes] = {};  // NUL-terminated; empty when none
};

thread_local ThreadState state;

// Appends to a fixed buffer, cutting what does not fit; never allocates.
class Phrase {
 public:
  Phrase(char* buffer, std::size_t size) : buffer_(buffer), size_(size) { buffer_[0] = '\0'; }

  Phrase& operator<<(std::string_view text) {
    const std::size_t room = size_ - 1 - length_;
    const std::size_t n = std::min(text.size(), room);
    if (n > 0) std::memcpy(buffer_ + length_, text.data(), n);
    length_ += n;
    buffer_[length_] = '\0';
    return *this;
  }
  Phrase& operator<<(std::int64_t n) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    return *this << std::string_view(digits, static_cast<std::size_t>(end - digits));
  }

 private:
  char* buffer_;
  std::size_t size_;
  std::size_t length_ = 0;
};

}  // namespace

struct WorkContextAccess {
  static const WorkContext* file_owner(const WorkContext* c) {
    for (; c != nullptr; c = c->outer_) {
      if (c->file_size_ > 0) return c;
    }
    return nullptr;
  }

  static std::string_view file(const WorkContext& c) {
    return {c.file_, c.file_kept_};
  }

  static bool same_file(const WorkContext& a, const WorkContext& b) {
    return a.file_size_ == b.file_size_ && file(a) == file(b);
  }

  // WHAT, UNIT N, INNER M: what is set of them.
  static void parts(const WorkContext& c, const char*& sep, Phrase& out) {
    const auto part = [&](const char* text) {
      out << sep << text;
      sep = ", ";
    };
    if (c.what_ != nullptr && *c.what_ != '\0') part(c.what_);
    if (c.position_ >= 0 && c.unit_ != nullptr) {
      part(c.unit_);
      out << " " << c.position_;
    }
    if (c.inner_position_ >= 0 && c.inner_unit_ != nullptr) {
      part(c.inner_unit_);
      out << " " << c.inner_position_;
    }
  }

  // "ACTION 'FILE' (WHAT, UNIT N, INNER M)"; "ACTION of 'FILE' (...)" with
  // an outer context's file, and that context's parts after its own (the
  // reader's chunk and event under "building the task graph").
  static void phrase(const WorkContext& c, const WorkContext* owner, Phrase& out) {
    out << c.action_;
    if (owner != nullptr) {
      out << (owner == &c ? " '" : " of '") << file(*owner);
      if (owner->file_size_ > WorkContext::kMaxFileBytes) {
        out << "... (" << static_cast<std::int64_t>(owner->file_size_) << " bytes)";
      }
      out << "'";
    }
    const char* sep = " (";
    parts(c, sep, out);
    if (owner != nullptr && owner != &c) parts(*owner, sep, out);
    if (*sep == ',') out << ")";
  }

  // `c`, then each outer context that names a file not named yet.
  static void chain(const WorkContext& c, Phrase& out) {
    const WorkContext* owner = file_owner(&c);
    phrase(c, owner, out);
    const WorkContext* named[8] = {owner};
    std::size_t count = owner != nullptr ? 1 : 0;
    for (const WorkContext* o = c.outer_; o != nullptr; o = o->outer_) {
      if (o->file_size_ == 0) continue;
      const bool seen = std::any_of(named, named + count,
                                    [&](const WorkContext* n) { return same_file(*n, *o); });
      if (seen) continue;
      out << " for ";
      phrase(*o, o, out);
      if (count < std::size(named)) named[count++] = o;
    }
  }
};

WorkContext::WorkContext(const char* action, std::string_view file, const char* what,
                         const char* unit, const char* inner_unit) noexcept
    : action_(action != nullptr ? action : ""),
      what_(what),
      unit_(unit),
      inner_unit_(inner_unit),
      file_size_(file.size()),
      exceptions_(std::uncaught_exceptions()) {
  std::size_t n = std::min(file.size(), kMaxFileBytes);
  // Cut at the first byte of a UTF-8 character (continuation bytes are 10xxxxxx).
  if (n < file.size()) {
    while (n > 0 && (static_cast<unsigned char>(file[n]) & 0xC0) == 0x80) --n;
  }
  if (n > 0) std::memcpy(file_, file.data(), n);  // an empty view may hold no pointer
  file_[n] = '\0';
  file_kept_ = n;
  link();
  state.failed[0] = '\0';  // a new stage: an earlier failure was handled
}

WorkContext::~WorkContext() {
  if (action_ == nullptr) return;
  if (std::uncaught_exceptions() > exceptions_) {
    // Left by an exception: the innermost context keeps what it was doing.
    if (state.failed[0] == '\0') {
      Phrase out(state.failed, sizeof state.failed);
      WorkContextAccess::chain(*this, out);
    }
  } else {
    state.failed[0] = '\0';  // closed normally: a failure inside it was handled
  }
  unlink();
}

WorkContext::WorkContext(WorkContext&& other) noexcept { take_place_of(other); }

WorkContext& WorkContext::operator=(WorkContext&& other) noexcept {
  if (this != &other) {
    if (action_ != nullptr) unlink();
    take_place_of(other);
  }
  return *this;
}

void WorkContext::link() noexcept {
  owner_ = &state;
  outer_ = state.top;
  inner_ = nullptr;
  if (outer_ != nullptr) outer_->inner_ = this;
  state.top = this;
}

void WorkContext::unlink() noexcept {
  if (outer_ != nullptr) outer_->inner_ = inner_;
  if (inner_ != nullptr) inner_->outer_ = outer_;
  // Closed on another thread than its own (a Python object's reader): still
  // taken off its own thread's stack.
  auto* owner = static_cast<ThreadState*>(owner_);
  if (owner != nullptr && owner->top == this) owner->top = outer_;
  outer_ = inner_ = nullptr;
  action_ = nullptr;
}

void WorkContext::take_place_of(WorkContext& other) noexcept {
  action_ = other.action_;
  what_ = other.what_;
  unit_ = other.unit_;
  inner_unit_ = other.inner_unit_;
  position_ = other.position_;
  inner_position_ = other.inner_position_;
  file_size_ = other.file_size_;
  file_kept_ = other.file_kept_;
  std::memcpy(file_, other.file_, sizeof file_);
  exceptions_ = other.exceptions_;
  outer_ = other.outer_;
  inner_ = other.inner_;
  owner_ = other.owner_;
  if (action_ == nullptr) return;  // `other` was not open
  if (outer_ != nullptr) outer_->inner_ = this;
  if (inner_ != nullptr) inner_->outer_ = this;
  auto* owner = static_cast<ThreadState*>(owner_);
  if (owner != nullptr && owner->top == &other) owner->top = this;
  other.action_ = nullptr;
  other.outer_ = other.inner_ = nullptr;
}

std::string WorkContext::describe() const {
  if (action_ == nullptr) return {};
  char buffer[kPhraseBytes];
  Phrase out(buffer, sizeof buffer);
  WorkContextAccess::chain(*this, out);
  return buffer;
}

std::string work_context_at_failure() {
  if (state.failed[0] != '\0') return std::string(state.failed);
  return work_context_now();
}

std::string work_context_now() {
  return state.top != nullptr ? state.top->describe() : std::string();
}

std::string out_of_memory_message() {
  const std::string during = work_context_at_failure();
  return "out of memory" + (during.empty() ? std::string() : " while " + during) +
         "; see docs/performance.md for what a run needs";
}

std::string failure_message(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return out_of_memory_message();
  return e.what();
}

void carry_work_context_failure(std::string_view phrase) noexcept {
  if (phrase.empty()) return;
  const std::size_t n = std::min(phrase.size(), kPhraseBytes - 1);
  std::memcpy(state.failed, phrase.data(), n);
  state.failed[n] = '\0';
}

}  // namespace ssgd
