#include "traces/collective_records.h"

#include <fmt/format.h>

#include <utility>

namespace ssgd::trace {

std::string collective_op_label(int op) {
  if (v1::Collective::Op_IsValid(op)) {
    return v1::Collective::Op_Name(static_cast<v1::Collective::Op>(op));
  }
  return fmt::format("op {}", op);
}

std::size_t CollectiveRecordSet::KeyHash::operator()(const Key& k) const {
  // splitmix64 over the four fields.
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    return h;
  };
  std::uint64_t h = mix(0, static_cast<std::uint64_t>(k.op));
  h = mix(h, k.communicator);
  h = mix(h, k.sequence);
  h = mix(h, static_cast<std::uint32_t>(k.rank));
  return static_cast<std::size_t>(h);
}

void CollectiveRecordSet::add(const v1::Collective& c, InputLocation where) {
  const Key key{static_cast<int>(c.op()), c.communicator_id(), c.sequence_number(), c.rank()};
  const std::int64_t record = where.record.value_or(-1);
  const auto [it, fresh] = first_record_.try_emplace(key, record);
  if (fresh) return;
  where.field = "collective.sequence_number";
  throw InputError(
      std::move(where),
      fmt::format("{} sequence {} of communicator {:#x}, rank {}, is recorded twice (first at "
                  "record {}): the same collective counted twice would double its communication",
                  collective_op_label(key.op), c.sequence_number(), c.communicator_id(), c.rank(),
                  it->second));
}

}  // namespace ssgd::trace
