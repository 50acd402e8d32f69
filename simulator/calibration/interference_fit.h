#pragma once
// The interference factors of simulator/perturb/interference.h, fitted on
// ssgd traces (.ssgdt): the same work timed alone and beside the other kind.
//
// Compute: a GPU's kernels (NCCL's own left out) when the traces hold any,
// else the host's operators (CPU records; those of communication left out,
// traces/collective_names.h), only those with no other operator of their
// thread inside them (an operator that holds others is a wrapper, timed by
// what it holds). Each is matched with the records of the same name: those
// that overlap no collective of their rank are alone, those of which a
// collective of their rank covers at least half (phi) are overlapped. An
// overlapped record of time d, with the name's alone time a (the median of
// at least three), gives the factor the model's rate implies:
//     a = d (1 - phi) + d phi / (1 + f)   =>   f = d phi / (a - d (1 - phi)) - 1
// (one where a <= d (1 - phi) says nothing and is skipped). GPU kernels are
// split by class into memory-bound (traces/kernel_class.h: elementwise,
// norm, reduce, copy) and the rest.
//
// Communication: each collective matched with those of the same operation
// and size on the same way, alone where no compute record of its rank
// overlaps it, overlapped where compute covers at least half of it.
//
// Concurrent (host only, with a calibration): a host library runs several
// collectives of a rank at once on its worker threads; the replay runs them
// one at a time, each that waited behind another taking 1 + f times its
// calibrated time (interference.host.concurrent). Each busy period of a rank
// (its collectives' times from their last arrival, merged where they touch)
// that holds n >= 2 collectives, and that its rank's compute covers at most
// half of, took B; one at a time they would take the sum of their calibrated
// times a, plus f times that of the n - 1 that wait behind the first:
// f = (B - sum a) / (sum a - a_first), weighted by sum a - a_first.
//
// CPU a byte (host only; the model demand's interference.host.cpu_per_byte):
// each overlapped operator record's factor f says its thread lost
// u = f / (1 + f) of the CPU while overlapped; the collectives of its rank
// moved R bytes a ns through it meanwhile (each one's bytes through the rank,
// trace::trace_bytes_through, over its time from its last arrival, times its
// overlap with the record, over the overlapped time): c = u / R ns a byte.
//
// Each factor is the median of its samples weighted by their alone time
// (long work counts more), with the weighted 10th and 90th percentiles. The
// traces may be one capture (work alone and overlapped within it) or
// several of the same model (one with overlap off gives the alone times).
// Errors name the file: no trace readable, a trace cut short (unless
// allow_truncated), no compute record, no collective.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "simulator/calibration/network_calibration.h"

namespace ssgd::sim {

struct FactorFit {
  std::int64_t samples = 0;  // overlapped records that gave a factor
  std::int64_t names = 0;    // distinct names (or collective sizes) among them
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  // The spread of the alone records of the same names: the median over
  // names of (p90 - p10) / median, the noise the factor stands against.
  double alone_spread = 0;
};

struct InterferenceFit {
  bool gpu = false;                 // GPU kernels fitted (interference.gpu.*), else host
  std::int64_t compute_records = 0;  // compute records used (leaves, communication left out)
  std::int64_t collectives = 0;
  std::int64_t ranks = 0;
  std::optional<FactorFit> compute;  // gpu: SM-bound kernels; host: the operators
  std::optional<FactorFit> memory;   // gpu only: memory-bound kernels
  std::optional<FactorFit> comm;
  // host only, with a calibration: collectives run beside others of their
  // rank (a busy period of two or more) against running them one at a time.
  std::optional<FactorFit> concurrent;
  // host only: the CPU ns a byte through the rank takes (model demand); its
  // median and percentiles are ns, not a factor.
  std::optional<FactorFit> cpu_per_byte;
  std::int64_t concurrent_collectives = 0;  // collectives in the periods used
  bool comm_from_calibration = false;  // comm's alone times are the calibration's
  std::vector<std::string> notes;    // why a factor is missing, what was left out
};

// `alone` (optional): a network calibration of the same network, measured
// where nothing else ran (ssgd calibrate on a sweep): each collective that
// compute covered at least half of is then compared with the calibration's
// time for its operation, ranks and size instead of with alone records of
// its size in the traces, which overlapped and non-overlapped runs rarely
// share (DDP's buckets against one all-reduce).
InterferenceFit fit_interference(const std::vector<std::filesystem::path>& traces,
                                 bool allow_truncated = false,
                                 const NetworkCalibration* alone = nullptr);

}  // namespace ssgd::sim
