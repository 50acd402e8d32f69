#pragma once
// The collectives of an ssgd trace (.ssgdt, traces/README.md) as
// measurements.
//
// Each rank records its own Collective event. The records of one collective
// are grouped by (op, communicator_id, sequence_number), which NCCL makes
// equal on every member rank. One instance takes
//
//   time = max over its ranks of end_ns  -  max over its ranks of start_ns
//
// the time from the arrival of the last rank to the end of the last: a rank
// that arrives early waits for the others inside the kernel, and that wait is
// load imbalance, not network. (The traces' clocks must be aligned across
// hosts, as `ssgd merge` leaves them.) nranks and size_bytes come from the
// records and must agree between the ranks of an instance; M is size_bytes,
// the whole buffer (trace_events.proto: an all-gather's gathered output).
//
// Skipped, with a warning giving their number: instances missing some rank's
// record (a trace of part of the job, or cut short), 0-byte or 1-rank
// instances, and the ops ssgd has no model of (reduce, send, receive).
// Errors, naming the record (the 0-based event index) and the field: a
// negative size, end before start, nranks < 1, a rank outside 0..nranks-1,
// one rank recorded twice, ranks of one instance that disagree, and an
// instance that takes no time.

#include <filesystem>
#include <optional>
#include <vector>

#include "traces/measurement.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// A trace cut short is refused unless `allow_truncated`, which fits its
// readable prefix (the reader warns).
std::vector<Measurement> read_trace_collectives(const std::filesystem::path& path,
                                                bool allow_truncated = false);

// The operation a trace's collective record stands for in the models; none
// for those they do not model (send, receive, reduce, unknown).
std::optional<CollectiveOp> modelled_op(trace::v1::Collective::Op op);

// The bytes a rank moves through its network stack in a trace's collective
// (ssgd::bytes_through_rank of the record's size, the whole buffer:
// trace_events.proto); a send or a receive its own bytes; 0 for an unknown
// operation or group size.
double trace_bytes_through(trace::v1::Collective::Op op, std::int64_t size_bytes,
                           std::int32_t nranks);

}  // namespace ssgd::trace
