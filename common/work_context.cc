#include "common/work_context.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd {
namespace {

constexpr std::size_t kFailedBytes = 512;

struct ThreadState {
  WorkContext* top = nullptr;
  char failed[kFailedBytes] = {};  // NUL-terminated; empty when none
};

thread_local ThreadState state;

void remember(std::string_view text) {
  const std::size_t n = std::min(text.size(), kFailedBytes - 1);
  std::memcpy(state.failed, text.data(), n);
  state.failed[n] = '\0';
}

}  // namespace

WorkContext::WorkContext(std::string_view action, std::string_view file, std::string_view what,
                         std::string_view unit)
    : action_(action),
      file_(bounded(file)),
      what_(what),
      unit_(unit),
      outer_(state.top),
      exceptions_(std::uncaught_exceptions()) {
  state.top = this;
  state.failed[0] = '\0';  // a new stage: an earlier failure was handled
}

WorkContext::~WorkContext() {
  if (std::uncaught_exceptions() > exceptions_ && state.failed[0] == '\0') {
    // Left by an exception: keep what this (the innermost) context was doing.
    // Formatting may allocate; memory is being given back by the unwinding,
    // and if it cannot, the phrase is simply not kept.
    try {
      remember(describe());
    } catch (...) {
      remember(action_);
    }
  }
  if (state.top == this) state.top = outer_;
}

std::string WorkContext::describe() const {
  std::string text = fmt::format("{} '{}'", action_, file_);
  if (!what_.empty() || position_ >= 0) {
    text += " (";
    text += what_;
    if (position_ >= 0) text += fmt::format("{}{} {}", what_.empty() ? "" : ", ", unit_, position_);
    text += ")";
  }
  return text;
}

std::string work_context_at_failure() {
  if (state.failed[0] != '\0') return std::string(state.failed);
  if (state.top != nullptr) return state.top->describe();
  return {};
}

}  // namespace ssgd
