#pragma once
// Puts a stream of events into one canonical order in bounded memory: by
// start time, then end time, then payload kind, then serialized bytes. Two
// inputs holding the same events in any order therefore give the same
// sequence, and so a byte-identical trace (the Kineto importer relies on
// it: Kineto writes events grouped by kind and thread, not by time).
//
// External merge sort: events are held serialized until `run_bytes` of
// them have been added, then sorted and spilled to a run file in
// `spill_dir`; write_to() merges the runs (a heap over one cursor per run).
// With a single run nothing is spilled. Run files are removed by the
// destructor, whatever happens.
//
// Besides events, it sorts raw entries (add_entry / for_each): the Kineto
// importer puts the CPU operator ranges it derives layers from through a
// second sorter, with its own keys and bytes (traces/import/pytorch/kineto_layers.h).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "traces/proto/trace_events.pb.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {

class EventSorter {
 public:
  // `spill_dir` is created on the first spill and removed with its files.
  explicit EventSorter(std::filesystem::path spill_dir,
                       std::size_t run_bytes = std::size_t{128} << 20);
  ~EventSorter();
  EventSorter(const EventSorter&) = delete;
  EventSorter& operator=(const EventSorter&) = delete;

  void add(const v1::Event& event);

  struct Entry {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;  // the second key; any value the caller orders by
    std::int32_t kind = 0;    // Event::payload_case() for events
    std::string bytes;        // the serialized Event, or the caller's record
  };
  // Adds an entry as it is; entries sort by (start_ns, end_ns, kind, bytes).
  void add_entry(Entry entry);
  // Calls `visit` with every entry, in order. Call once, and not with
  // write_to(). Throws std::runtime_error when a run cannot be read back.
  void for_each(const std::function<void(const Entry&)>& visit);
  // Appends every event, in order, to `out`, after `amend` (when given) has
  // changed it in a way that keeps the order (the Kineto importer sets the
  // rank and adds the base time there). Call once. Throws
  // std::runtime_error when a run file cannot be written or read back.
  void write_to(TraceWriter& out, const std::function<void(v1::Event&)>& amend = {});

  [[nodiscard]] std::size_t runs_spilled() const { return runs_.size(); }
  [[nodiscard]] std::uint64_t events() const { return events_; }

 private:
  void spill();

  std::filesystem::path spill_dir_;
  std::size_t run_bytes_;
  std::vector<Entry> entries_;
  std::size_t held_bytes_ = 0;
  std::vector<std::filesystem::path> runs_;
  std::uint64_t events_ = 0;
};

}  // namespace ssgd::trace
