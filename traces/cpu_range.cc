#include "traces/cpu_range.h"

#include <cstring>
#include <stdexcept>

namespace ssgd::trace {

EventSorter::Entry encode_cpu_range(const CpuRange& r) {
  EventSorter::Entry e;
  e.start_ns = r.start_ns;
  e.end_ns = -r.end_ns;
  e.kind = static_cast<std::int32_t>(r.kind);
  e.bytes.resize(16 + r.name.size());
  std::memcpy(e.bytes.data(), &r.end_ns, 8);
  std::memcpy(e.bytes.data() + 8, &r.thread_id, 8);
  std::memcpy(e.bytes.data() + 16, r.name.data(), r.name.size());
  return e;
}

void decode_cpu_range(const EventSorter::Entry& e, CpuRange& r) {
  if (e.bytes.size() < 16) throw std::runtime_error("CPU walk: a sorted range is cut short");
  r.kind = static_cast<CpuRange::Kind>(e.kind);
  r.start_ns = e.start_ns;
  std::memcpy(&r.end_ns, e.bytes.data(), 8);
  std::memcpy(&r.thread_id, e.bytes.data() + 8, 8);
  r.name.assign(e.bytes.data() + 16, e.bytes.size() - 16);
}

}  // namespace ssgd::trace
