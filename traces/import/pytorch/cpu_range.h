#pragma once
// One range of a PyTorch profile's CPU timeline (an operator, an annotation,
// a collective's launch or execution), as the CPU walk
// (traces/import/pytorch/cpu_profile_walk.h) reads it, whichever profiler wrote it.
// Times are the file's (before any base is added), in ns.

#include <cstdint>
#include <string>

#include "traces/event_sorter.h"

namespace ssgd::trace {

struct CpuRange {
  // The sort order breaks ties on start and end by kind: annotations first,
  // so that an operator with the same span as an annotation counts as
  // inside it (annotations are transparent).
  enum class Kind : std::int32_t {
    // Not work: marks (iteration/, forward/, ssgd/...), ProfilerStep#N,
    // record_function ranges and Python wrappers (Kineto user_annotation
    // and python_function; legacy names without "::"). Transparent: the
    // ranges inside them are read as if it were not there.
    kAnnotation = 0,
    // c10d's, gloo's and NCCL's ranges (traces/collective_names.h): never
    // compute, and neither is anything inside them.
    kCommunication = 1,
    // An operator (Kineto cpu_op; legacy names with "::"): compute when no
    // other operator or communication range of its thread holds it.
    kOperator = 2,
  };
  Kind kind = Kind::kOperator;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t thread_id = 0;
  std::string name;
  // A communication range's tensors, when the profiler recorded their
  // shapes and types (Kineto with record_shapes): bytes, elements and the
  // trace's datatype ("" when mixed or unknown); 0 when not recorded.
  std::int64_t size_bytes = 0;
  std::int64_t count = 0;
  std::string datatype;
};

// A range as an EventSorter entry, ordered by start, then longest first
// (an enclosing range before the ranges it holds), then kind, then bytes.
EventSorter::Entry encode_cpu_range(const CpuRange& range);
// Throws std::runtime_error when the entry is cut short.
void decode_cpu_range(const EventSorter::Entry& entry, CpuRange& range);

}  // namespace ssgd::trace
