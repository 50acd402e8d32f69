#include "simulator/engine/engine.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace ssgd::sim {

HandlerId Engine::register_handler(EventHandler handler) {
  if (handlers_.size() >= std::numeric_limits<HandlerId>::max()) {
    throw std::length_error("too many event handlers");
  }
  handlers_.push_back(std::move(handler));
  return static_cast<HandlerId>(handlers_.size() - 1);
}

void Engine::reserve(std::size_t events) {
  slots_.reserve(events);
}

std::uint32_t Engine::allocate_slot() {
  if (!free_slots_.empty()) {
    const auto s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  slots_.emplace_back();
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

EventHandle Engine::schedule(Time when, HandlerId handler, std::uint64_t payload) {
  if (when < now_) {
    throw std::logic_error("event scheduled in the past: at " + std::to_string(when.ns()) +
                           " ns, now " + std::to_string(now_.ns()) + " ns");
  }
  if (handler >= handlers_.size()) throw std::logic_error("event for an unknown handler");
  const auto slot = allocate_slot();
  Slot& s = slots_[slot];
  s.payload = payload;
  s.handler = handler;
  queue_.push({when.ns(), slot, s.generation});
  return {slot, s.generation};
}

void Engine::cancel(EventHandle handle) {
  if (handle.slot >= slots_.size()) return;
  Slot& s = slots_[handle.slot];
  if (s.generation == handle.generation) ++s.generation;  // the queued entry is now stale
}

void Engine::stop_at(Time when) {
  if (!has_stop_handler_) {
    stop_handler_ = register_handler([](Engine& e, std::uint64_t) { e.stopped_ = true; });
    has_stop_handler_ = true;
  }
  schedule(when, stop_handler_, 0);
}

void Engine::set_progress(std::uint64_t every_events, std::function<void(const Engine&)> callback) {
  progress_every_ = every_events;
  progress_ = std::move(callback);
}

void Engine::run() {
  stopped_ = false;
  std::uint64_t next_progress = progress_every_ > 0 ? processed_ + progress_every_ : 0;
  while (!queue_.empty() && !stopped_) {
    const QueuedEvent e = queue_.pop();
    Slot& s = slots_[e.slot];
    if (s.generation != e.generation) {  // cancelled: the slot is free only now
      free_slots_.push_back(e.slot);
      continue;
    }
    ++s.generation;  // consumed: later cancels of this handle are no-ops
    const HandlerId handler = s.handler;
    const std::uint64_t payload = s.payload;
    free_slots_.push_back(e.slot);
    now_ = Time(e.time_ns);
    ++processed_;
    handlers_[handler](*this, payload);
    if (next_progress != 0 && processed_ >= next_progress) {
      progress_(*this);
      // (Past events counted at once, count_events(), not every one after.)
      next_progress = processed_ + progress_every_;
    }
  }
}

}  // namespace ssgd::sim
