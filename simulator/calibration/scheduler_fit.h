#pragma once
// The costs of a partitioning scheduler (ByteScheduler's family), measured in
// an ssgd trace (.ssgdt) where every partition is a collective of its own:
// the two `priority` policy keys of simulator/policy/policy_params.h.
//
// A partition is a Collective record linked to the host call that launched
// it: the ApiCall of the same rank with the same correlation_id (a PyTorch
// profile's c10d call, FRAMEWORK; the CUDA launch of the NCCL kernel in a
// tracer's capture, RUNTIME or DRIVER).
//
// policy.partition_overhead, host time each partition costs the thread that
// launches it. Consecutive launches on one thread of one rank form a burst
// when that thread does nothing else between them: no other API call and no
// CPU operator (a kernel on device -1, whose stream is its thread) starts
// after the first launch ends and before the next one starts. Each
// consecutive pair inside a burst gives one sample, next start - this start:
// the launch itself and the framework's work around it (cutting the tensor,
// futures, bookkeeping). A burst's first launch is not a sample (it carries
// the release of the whole bucket or layer), so a trace whose bursts hold one
// partition each measures nothing here.
//
// policy.schedule_overhead, time from a partition being free to start to its
// bytes starting to move: for each linked collective, its start minus the
// later of its launch call's end and the end of the collective before it on
// the same stream of the same rank (a GPU stream, or the gloo worker thread
// that ran it); a collective that starts earlier gives 0. In a GPU capture a
// stream also runs other work, so the figure is an upper bound there.
//
// Each figure is the median of its samples (nearest rank), with the 10th and
// 90th percentiles for spread. Errors, naming the file: a trace cut short
// (unless allow_truncated), and no collective linked to a launch call.

#include <cstdint>
#include <filesystem>
#include <optional>

#include "common/time.h"

namespace ssgd::sim {

struct SampleSummary {
  std::int64_t samples = 0;
  Duration median;
  Duration p10;
  Duration p90;
};

struct SchedulerFit {
  std::int64_t collectives = 0;                     // collective records read
  std::int64_t partitions = 0;                      // of them, linked to a launch call
  std::int64_t ranks = 0;                           // ranks with a linked collective
  std::int64_t bursts = 0;                          // bursts of two or more launches
  std::optional<SampleSummary> partition_overhead;  // none: no burst of two launches
  SampleSummary schedule_overhead;                  // one sample a partition
};

SchedulerFit fit_scheduler_costs(const std::filesystem::path& trace, bool allow_truncated = false);

}  // namespace ssgd::sim
