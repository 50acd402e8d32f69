#pragma once
// The discrete-event engine: simulated time in integer nanoseconds, a radix
// heap of events ordered by time then insertion order, typed handlers,
// payloads in a pool, and lazy cancellation by generation counter.
//
// Models register a handler once and schedule events carrying a 64-bit
// payload (an index into the model's own tables). Stopping is itself an
// event. The engine knows nothing of tasks: a model that finds work left
// when the queue runs dry reports a deadlock (see simulator/engine/schedule.h).

#include <cstdint>
#include <functional>
#include <vector>

#include "common/time.h"
#include "simulator/engine/event_queue.h"

namespace ssgd::sim {

class Engine;
using HandlerId = std::uint16_t;
using EventHandler = std::function<void(Engine&, std::uint64_t payload)>;

struct EventHandle {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

class Engine {
 public:
  HandlerId register_handler(EventHandler handler);

  // Schedules `handler(payload)` at `when` (not before now()). Throws
  // std::logic_error when asked to go back in time.
  EventHandle schedule(Time when, HandlerId handler, std::uint64_t payload);
  EventHandle schedule_after(Duration delay, HandlerId handler, std::uint64_t payload) {
    return schedule(now_ + delay, handler, payload);
  }
  // Cancels a pending event; a no-op if it already ran or was cancelled.
  void cancel(EventHandle handle);
  // Schedules the end of the run at `when`: events after it stay pending.
  void stop_at(Time when);

  // Runs until the queue is empty or a stop event fires.
  void run();

  // Called every `every_events` events with the engine, for progress output.
  void set_progress(std::uint64_t every_events, std::function<void(const Engine&)> callback);

  [[nodiscard]] Time now() const { return now_; }
  [[nodiscard]] std::uint64_t events_processed() const { return processed_; }
  // Counts `n` events as processed that a replayed recording of a part of
  // the run stands for (CollectiveRunner::run_alone), so the count is the
  // one the run would have reached by running them.
  void count_events(std::uint64_t n) { processed_ += n; }
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }
  void reserve(std::size_t events);

 private:
  struct Slot {
    std::uint64_t payload = 0;
    std::uint32_t generation = 0;
    HandlerId handler = 0;
  };

  std::uint32_t allocate_slot();

  EventQueue queue_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<EventHandler> handlers_;
  Time now_;
  std::uint64_t processed_ = 0;
  bool stopped_ = false;
  HandlerId stop_handler_ = 0;
  bool has_stop_handler_ = false;
  std::uint64_t progress_every_ = 0;
  std::function<void(const Engine&)> progress_;
};

}  // namespace ssgd::sim
