#include "traces/import/pytorch/cpu_range.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ssgd::trace {

// The entry's bytes: end, thread, size_bytes, count (8 each), the length
// of the datatype (1), the datatype, then the name.
EventSorter::Entry encode_cpu_range(const CpuRange& r) {
  EventSorter::Entry e;
  e.start_ns = r.start_ns;
  e.end_ns = -r.end_ns;
  e.kind = static_cast<std::int32_t>(r.kind);
  const auto type_length = static_cast<std::uint8_t>(std::min<std::size_t>(r.datatype.size(), 255));
  e.bytes.resize(33 + type_length + r.name.size());
  char* p = e.bytes.data();
  std::memcpy(p, &r.end_ns, 8);
  std::memcpy(p + 8, &r.thread_id, 8);
  std::memcpy(p + 16, &r.size_bytes, 8);
  std::memcpy(p + 24, &r.count, 8);
  p[32] = static_cast<char>(type_length);
  std::memcpy(p + 33, r.datatype.data(), type_length);
  std::memcpy(p + 33 + type_length, r.name.data(), r.name.size());
  return e;
}

void decode_cpu_range(const EventSorter::Entry& e, CpuRange& r) {
  const char* p = e.bytes.data();
  const std::size_t type_length = e.bytes.size() > 32 ? static_cast<std::uint8_t>(p[32]) : 0;
  if (e.bytes.size() < 33 + type_length) {
    throw std::runtime_error("CPU walk: a sorted range is cut short");
  }
  r.kind = static_cast<CpuRange::Kind>(e.kind);
  r.start_ns = e.start_ns;
  std::memcpy(&r.end_ns, p, 8);
  std::memcpy(&r.thread_id, p + 8, 8);
  std::memcpy(&r.size_bytes, p + 16, 8);
  std::memcpy(&r.count, p + 24, 8);
  r.datatype.assign(p + 33, type_length);
  r.name.assign(p + 33 + type_length, e.bytes.size() - 33 - type_length);
}

}  // namespace ssgd::trace
