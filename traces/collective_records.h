#pragma once
// What makes a collective record one of a kind, and the one check that no
// record is there twice, shared by every reader that adds collectives up:
// the walker behind `ssgd simulate` and `ssgd diff` (walk/trace_walk.h),
// `ssgd calibrate` (traces/trace_collectives.h) and `ssgd
// pack` (traces/trace_dump.h).
//
// A collective is one operation of one communicator: NCCL numbers the
// operations of each kind on a communicator 0, 1, ... (its profiler's
// seqNumber), and each member rank records it once. So (op, communicator_id,
// sequence_number, rank in the communicator) names one record; a second
// record with the same four is the same operation counted twice (a file
// concatenated with itself, a rank merged twice), which would double the
// communication every consumer adds up.
//
// Memory: one entry a collective record, about 64 bytes.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "common/error.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// A collective's kind, for messages: "ALL_REDUCE", "SEND"; "op 99" for a
// value outside the format's enum.
std::string collective_op_label(int op);

class CollectiveRecordSet {
 public:
  // Records `c`, found at `where` (file, record; the field is set here).
  // Throws InputError at `where`, field collective.sequence_number, when the
  // same (op, communicator, sequence number, rank) was added before, naming
  // the first record.
  void add(const v1::Collective& c, InputLocation where);

  [[nodiscard]] std::size_t size() const { return first_record_.size(); }

 private:
  struct Key {
    int op;
    std::uint64_t communicator;
    std::uint64_t sequence;
    std::int32_t rank;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  std::unordered_map<Key, std::int64_t, KeyHash> first_record_;
};

}  // namespace ssgd::trace
