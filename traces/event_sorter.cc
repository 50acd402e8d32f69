#include "traces/event_sorter.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

namespace ssgd::trace {
namespace {

bool before(const EventSorter::Entry& a, const EventSorter::Entry& b) {
  return std::tie(a.start_ns, a.end_ns, a.kind, a.bytes) <
         std::tie(b.start_ns, b.end_ns, b.kind, b.bytes);
}

// A run file is a sequence of records: start_ns, end_ns (int64), kind,
// length (uint32), then the serialized event; native byte order, since it
// never leaves this process.
void write_entry(std::ofstream& out, const EventSorter::Entry& e) {
  const auto len = static_cast<std::uint32_t>(e.bytes.size());
  out.write(reinterpret_cast<const char*>(&e.start_ns), sizeof e.start_ns);
  out.write(reinterpret_cast<const char*>(&e.end_ns), sizeof e.end_ns);
  out.write(reinterpret_cast<const char*>(&e.kind), sizeof e.kind);
  out.write(reinterpret_cast<const char*>(&len), sizeof len);
  out.write(e.bytes.data(), static_cast<std::streamsize>(len));
}

class RunCursor {
 public:
  explicit RunCursor(const std::filesystem::path& path) : in_(path, std::ios::binary) {
    if (!in_) throw std::runtime_error("cannot read sort run " + path.string());
    in_.rdbuf()->pubsetbuf(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    path_ = path.string();
  }
  // Loads the next entry; false at the end of the run.
  bool next() {
    std::uint32_t len = 0;
    if (!in_.read(reinterpret_cast<char*>(&entry.start_ns), sizeof entry.start_ns)) return false;
    in_.read(reinterpret_cast<char*>(&entry.end_ns), sizeof entry.end_ns);
    in_.read(reinterpret_cast<char*>(&entry.kind), sizeof entry.kind);
    in_.read(reinterpret_cast<char*>(&len), sizeof len);
    entry.bytes.resize(len);
    in_.read(entry.bytes.data(), static_cast<std::streamsize>(len));
    if (!in_) throw std::runtime_error("sort run " + path_ + " is cut short");
    return true;
  }
  EventSorter::Entry entry;

 private:
  std::vector<char> buffer_ = std::vector<char>(std::size_t{1} << 20);
  std::ifstream in_;
  std::string path_;
};

void append_entry(TraceWriter& out, const EventSorter::Entry& e, v1::Event& scratch,
                  const std::function<void(v1::Event&)>& amend) {
  if (!scratch.ParseFromString(e.bytes)) throw std::runtime_error("sort: event does not parse back");
  if (amend) amend(scratch);
  out.append(scratch);
}

}  // namespace

EventSorter::EventSorter(std::filesystem::path spill_dir, std::size_t run_bytes)
    : spill_dir_(std::move(spill_dir)), run_bytes_(std::max<std::size_t>(run_bytes, 1)) {}

EventSorter::~EventSorter() {
  if (!runs_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(spill_dir_, ec);
  }
}

void EventSorter::add(const v1::Event& event) {
  Entry e;
  if (!event_time_span(event, e.start_ns, e.end_ns)) {
    e.start_ns = e.end_ns = std::numeric_limits<std::int64_t>::min();
  }
  e.kind = static_cast<std::int32_t>(event.payload_case());
  event.SerializeToString(&e.bytes);
  add_entry(std::move(e));
}

void EventSorter::add_entry(Entry e) {
  held_bytes_ += e.bytes.size() + sizeof(Entry);
  entries_.push_back(std::move(e));
  ++events_;
  if (held_bytes_ >= run_bytes_) spill();
}

void EventSorter::spill() {
  if (entries_.empty()) return;
  std::sort(entries_.begin(), entries_.end(), before);
  if (runs_.empty()) std::filesystem::create_directories(spill_dir_);
  const auto path = spill_dir_ / ("run-" + std::to_string(runs_.size()));
  runs_.push_back(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& e : entries_) write_entry(out, e);
  out.close();
  if (!out) throw std::runtime_error("cannot write sort run " + path.string());
  entries_.clear();
  entries_.shrink_to_fit();
  held_bytes_ = 0;
}

void EventSorter::write_to(TraceWriter& out, const std::function<void(v1::Event&)>& amend) {
  v1::Event scratch;
  for_each([&](const Entry& e) { append_entry(out, e, scratch, amend); });
}

void EventSorter::for_each(const std::function<void(const Entry&)>& visit) {
  if (runs_.empty()) {
    std::sort(entries_.begin(), entries_.end(), before);
    for (const auto& e : entries_) visit(e);
    entries_.clear();
    return;
  }
  spill();
  std::vector<std::unique_ptr<RunCursor>> cursors;
  auto later = [&](std::size_t a, std::size_t b) { return before(cursors[b]->entry, cursors[a]->entry); };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(later)> heap(later);
  for (const auto& path : runs_) {
    cursors.push_back(std::make_unique<RunCursor>(path));
    if (cursors.back()->next()) heap.push(cursors.size() - 1);
  }
  while (!heap.empty()) {
    const std::size_t i = heap.top();
    heap.pop();
    visit(cursors[i]->entry);
    if (cursors[i]->next()) heap.push(i);
  }
}

}  // namespace ssgd::trace
