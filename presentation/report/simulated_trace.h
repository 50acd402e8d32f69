#pragma once
// A simulated run written as an ssgd trace (`ssgd simulate --trace-out`), in
// the vocabulary that walk/trace_profile.h reads, so that a simulated run can
// be exported (traces/export/perfetto/perfetto_export.h), compared with a
// measured one (walk/iteration_diff.h) or replayed again.
//
// Per written rank r (the worker; device r mod gpus_per_node on host
// "sim-node<r / gpus_per_node>") and iteration i:
//   iteration/<i>      MarkerRange on the main host thread (kMainThread),
//                      from the first start to the last end of (r, i)'s
//                      tasks, the collectives of iteration i included, but
//                      no later than the start of (r, i+1)'s first compute
//                      task (per-group updates let it start early), so that
//                      iterations never share work
//   forward/<layer>    MarkerRange over f(r,i,l), and a Kernel "<layer>
//   backward/<layer>   forward" (or "backward") on the compute stream
//   io                 MarkerRange on the loader thread (kLoaderThread)
//   h2d                Memcpy HTOD on the copy stream (size unknown: 0)
//   update             MarkerRange "update" and a Kernel "optimizer update"
//   all-reduce         ApiCall "ncclAllReduce" at the start of the backward
//                      of the collective's layer (so that the profile
//                      attributes it to that layer, as it would a measured
//                      one), linked by correlation id to a Collective
//                      ALL_REDUCE on the network stream: size, nranks = P,
//                      communicator kCommunicatorId, sequence numbers in the
//                      order the collectives started (ties by task id)
// Tasks of zero duration get their marker (layers must keep their order)
// but no kernel, copy or collective. Times are the schedule's, from 0.
//
// A folded run (ReplayResult::ranks_simulated == 1 with more workers) is
// written rank by rank from its one rank, which stands for all: the file is
// the same as the unfolded run's. Events are sorted by (start, rank, the
// task's position in its rank's list) and the writer is a TraceWriter, so
// the file is deterministic and never half-written.

#include <cstdint>
#include <filesystem>
#include <string>

#include "simulator/replay/replay.h"

namespace ssgd::report {

inline constexpr std::uint64_t kMainThread = 1;
inline constexpr std::uint64_t kLoaderThread = 2;
inline constexpr std::uint32_t kComputeStream = 7;
inline constexpr std::uint32_t kCopyStream = 8;
inline constexpr std::uint32_t kNetworkStream = 9;
inline constexpr std::uint64_t kCommunicatorId = 1;

struct SimulatedTraceOptions {
  std::int64_t max_ranks = 0;      // ranks 0..max_ranks-1 are written; <= 0 means all
  std::int64_t gpus_per_node = 1;  // places ranks on hosts and devices
  std::string provenance;          // "analytical: simulated by ssgd from ..."
  std::string framework;           // the input's model, if known
};

// Needs a result made with ReplayOptions::keep_schedule. Throws
// std::invalid_argument without one, std::runtime_error on an I/O error
// (nothing is left at `path` then).
void write_simulated_trace(const sim::ReplayResult& result, const SimulatedTraceOptions& options,
                           const std::filesystem::path& path);

}  // namespace ssgd::report
