#include "simulator/calibration/interference_fit.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/intervals.h"
#include "traces/collective_names.h"
#include "traces/kernel_class.h"
#include "traces/kernel_names.h"
#include "traces/marker_names.h"
#include "simulator/calibration/band_fit.h"
#include "traces/trace_collectives.h"
#include "traces/trace_reader.h"

namespace ssgd::sim {
namespace {

namespace v1 = trace::v1;

// A record of work: compute (kind 0 SM-bound or host, 1 memory-bound) or a
// collective (kind 2), with the share of it the other kind covered.
struct Work {
  std::size_t file = 0;
  std::int32_t rank = 0;
  std::uint64_t thread = 0;  // host operators: their thread; else unused
  std::size_t name = 0;      // interned
  int kind = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
  double phi = 0;
  // When it was issued, which places it in an iteration: a kernel's launch
  // on the host (its ApiCall, by correlation id), where the trace has it, as
  // the GPU may run an iteration's kernels after the host has marked the
  // next one; else its start.
  std::int64_t issued = 0;
  std::uint64_t correlation = 0;  // kernels: their launch's id, 0 if none
};

constexpr int kMemory = 1;
constexpr int kComm = 2;
constexpr double kAlone = 0.01;       // at most this share covered: alone
constexpr double kOverlapped = 0.5;   // at least this share covered: overlapped
constexpr std::size_t kMinAlone = 3;  // alone records a name needs
constexpr double kMaxAloneSpread = 0.5;  // their (p90 - p10) / median at most

using RankKey = std::pair<std::size_t, std::int32_t>;

double weighted_quantile(const std::vector<std::pair<double, double>>& sorted, double q) {
  double total = 0;
  for (const auto& [v, w] : sorted) total += w;
  double cum = 0;
  for (const auto& [v, w] : sorted) {
    cum += w;
    if (cum >= q * total) return v;
  }
  return sorted.back().first;
}

double quantile(std::vector<std::int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return static_cast<double>(v[std::min(i, v.size() - 1)]);
}

// The factor one overlapped record of time d, a share phi of it overlapped,
// implies against the alone time a; none where it says nothing.
std::optional<double> implied_factor(double a, double d, double phi) {
  const double denominator = a - d * (1 - phi);
  if (a <= 0 || denominator <= 0) return std::nullopt;
  return d * phi / denominator - 1;
}

// The weighted median and 10th-90th percentiles of (factor, weight) samples;
// `noise`: one figure per name, of which the median is taken.
FactorFit summarized(std::vector<std::pair<double, double>> samples, std::size_t names,
                     std::vector<double> noise) {
  std::sort(samples.begin(), samples.end());
  std::sort(noise.begin(), noise.end());
  FactorFit f;
  f.samples = static_cast<std::int64_t>(samples.size());
  f.names = static_cast<std::int64_t>(names);
  f.median = weighted_quantile(samples, 0.5);
  f.p10 = weighted_quantile(samples, 0.1);
  f.p90 = weighted_quantile(samples, 0.9);
  f.alone_spread = noise.empty() ? 0.0 : noise[noise.size() / 2];
  return f;
}

// What an overlapped record's factor stands for: the factor itself, or
// (the CPU a byte) a value derived from it; none where it says nothing.
using SampleOf = std::function<std::optional<double>(const Work&, double)>;

// The factor of one kind over every name that has alone and overlapped records.
std::optional<FactorFit> fit_kind(const std::vector<Work>& works, int kind, std::int64_t& skipped,
                                  const SampleOf& sample_of = {}) {
  std::map<std::size_t, std::vector<const Work*>> by_name;
  for (const Work& w : works) {
    if (w.kind == kind) by_name[w.name].push_back(&w);
  }
  std::vector<std::pair<double, double>> samples;  // (factor, weight)
  std::vector<double> spreads;
  std::set<std::size_t> names;
  for (const auto& [name, list] : by_name) {
    std::vector<std::int64_t> alone;
    for (const Work* w : list) {
      if (w->phi <= kAlone) alone.push_back(w->end - w->start);
    }
    if (alone.size() < kMinAlone) continue;
    const double a = quantile(alone, 0.5);
    if (a <= 0) continue;
    // Alone records this far apart are not one piece of work (a name's
    // ordinal that differs between iterations or captures): no reference.
    const double spread = (quantile(alone, 0.9) - quantile(alone, 0.1)) / a;
    if (spread > kMaxAloneSpread) {
      ++skipped;
      continue;
    }
    bool used = false;
    for (const Work* w : list) {
      if (w->phi < kOverlapped) continue;
      auto f = implied_factor(a, static_cast<double>(w->end - w->start), w->phi);
      if (f && sample_of) f = sample_of(*w, *f);
      if (!f) continue;
      samples.emplace_back(*f, a);
      used = true;
    }
    if (used) {
      names.insert(name);
      spreads.push_back(spread);
    }
  }
  if (samples.empty()) return std::nullopt;
  return summarized(std::move(samples), names.size(), std::move(spreads));
}

// A collective record: its op, size and ranks, for a calibration's time.
struct CollectiveKey {
  v1::Collective::Op op = v1::Collective::UNKNOWN;
  std::int64_t bytes = 0;
  std::int32_t nranks = 0;
};

// A collective's time alone by the calibration, and the median error of the
// band it falls in; none where the calibration has no fit for its
// operation and ranks, or it has no size.
struct CalibratedTime {
  double ns = 0;
  double median_error = 0;
};

std::optional<CalibratedTime> calibrated_time(const CollectiveKey& k,
                                              const NetworkCalibration& cal) {
  const auto op = trace::modelled_op(k.op);
  const CalibratedCollective* fit = op && k.nranks > 1 ? cal.find(*op, k.nranks) : nullptr;
  if (fit == nullptr || k.bytes <= 0) return std::nullopt;
  // A trace's size and a calibration's are both the whole buffer.
  const auto bytes = static_cast<double>(k.bytes);
  return CalibratedTime{static_cast<double>(predict(*fit, k.nranks, bytes).ns()),
                        fit->band_for(bytes).median_error};
}

// The comm factor against a calibration's times: every overlapped record of
// a collective the calibration has a fit for; the spread is the fitted
// bands' median error.
std::optional<FactorFit> fit_comm_against(const std::vector<Work>& comm,
                                          const std::vector<CollectiveKey>& keys,
                                          const NetworkCalibration& cal,
                                          std::int64_t& without_fit) {
  std::vector<std::pair<double, double>> samples;
  std::set<std::size_t> names;
  std::vector<double> errors;
  for (const Work& w : comm) {
    if (w.phi < kOverlapped) continue;
    const auto alone = calibrated_time(keys[w.name], cal);
    if (!alone) {
      ++without_fit;
      continue;
    }
    const auto f = implied_factor(alone->ns, static_cast<double>(w.end - w.start), w.phi);
    if (!f) continue;
    samples.emplace_back(*f, alone->ns);
    names.insert(w.name);
    errors.push_back(alone->median_error);
  }
  if (samples.empty()) return std::nullopt;
  return summarized(std::move(samples), names.size(), std::move(errors));
}

// interference.host.concurrent from the busy periods of each rank's
// collectives (timed from their last arrival) that hold two or more and
// that compute covers at most half of (interference_fit.h).
std::optional<FactorFit> fit_concurrent(const std::vector<Work>& comm,
                                        const std::vector<CollectiveKey>& keys,
                                        const NetworkCalibration& cal,
                                        const std::map<RankKey, Intervals>& compute_at,
                                        std::int64_t& collectives, std::int64_t& beside_compute,
                                        std::int64_t& comm_in_company) {
  std::vector<const Work*> order;
  for (const Work& w : comm) order.push_back(&w);
  std::sort(order.begin(), order.end(), [](const Work* a, const Work* b) {
    return std::tie(a->file, a->rank, a->start, a->end) <
           std::tie(b->file, b->rank, b->start, b->end);
  });
  std::vector<std::pair<double, double>> samples;
  std::set<std::size_t> names;
  std::vector<double> errors;
  const auto period = [&](std::size_t from, std::size_t to, std::int64_t end) {
    if (to - from < 2) return;
    for (std::size_t i = from; i < to; ++i) {
      if (order[i]->phi >= kOverlapped) ++comm_in_company;
    }
    const Work& first = *order[from];
    const std::int64_t start = first.start;
    const auto it = compute_at.find({first.file, first.rank});
    if (it != compute_at.end() && 2 * covered_ns(it->second, start, end) > end - start) {
      beside_compute += static_cast<std::int64_t>(to - from);
      return;
    }
    double sum = 0;
    double first_a = 0;
    for (std::size_t i = from; i < to; ++i) {
      const auto a = calibrated_time(keys[order[i]->name], cal);
      if (!a) return;
      errors.push_back(a->median_error);
      sum += a->ns;
      if (i == from) first_a = a->ns;
    }
    const double queued = sum - first_a;
    if (!(queued > 0)) return;
    samples.emplace_back((static_cast<double>(end - start) - sum) / queued, queued);
    for (std::size_t i = from; i < to; ++i) names.insert(order[i]->name);
    collectives += static_cast<std::int64_t>(to - from);
  };
  std::size_t from = 0;
  std::int64_t end = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Work& w = *order[i];
    const bool joins =
        i > from && w.file == order[from]->file && w.rank == order[from]->rank && w.start <= end;
    if (!joins) {
      if (i > 0) period(from, i, end);
      from = i;
      end = w.end;
    } else {
      end = std::max(end, w.end);
    }
  }
  if (!order.empty()) period(from, order.size(), end);
  if (samples.empty()) return std::nullopt;
  return summarized(std::move(samples), names.size(), std::move(errors));
}

// Operators with another of their thread inside them are wrappers: only
// the innermost are kept.
void keep_leaves(std::vector<Work>& host) {
  std::sort(host.begin(), host.end(), [](const Work& a, const Work& b) {
    return std::tie(a.file, a.rank, a.thread, a.start, b.end) <
           std::tie(b.file, b.rank, b.thread, b.start, a.end);
  });
  std::vector<Work> leaves;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const bool holds = i + 1 < host.size() && host[i + 1].file == host[i].file &&
                       host[i + 1].rank == host[i].rank && host[i + 1].thread == host[i].thread &&
                       host[i + 1].start < host[i].end;
    if (!holds) leaves.push_back(host[i]);
  }
  host = std::move(leaves);
}

// Names made specific: "name#k", the k-th record of that name on its thread
// (a GPU's stream) in its rank's iteration (the same layer's work in every iteration and in every capture of
// the model); records before the first iteration mark are dropped. A rank
// without marks keeps plain names (returns false).
bool by_iteration_ordinal(std::vector<Work>& works,
                          const std::map<RankKey, std::vector<std::int64_t>>& iterations,
                          const std::vector<std::string>& names,
                          const std::function<std::size_t(std::string)>& intern) {
  std::sort(works.begin(), works.end(), [](const Work& a, const Work& b) {
    return std::tie(a.file, a.rank, a.issued, a.start, a.end) <
           std::tie(b.file, b.rank, b.issued, b.start, b.end);
  });
  bool all_marked = true;
  std::map<std::tuple<std::size_t, std::int32_t, std::uint64_t, std::size_t, std::size_t>,
           std::int64_t>
      seen;
  std::vector<Work> kept;
  for (Work w : works) {
    const auto it = iterations.find({w.file, w.rank});
    if (it == iterations.end()) {
      all_marked = false;
      kept.push_back(w);
      continue;
    }
    const auto& starts = it->second;
    const auto after = std::upper_bound(starts.begin(), starts.end(), w.issued);
    if (after == starts.begin()) continue;
    const auto iteration = static_cast<std::size_t>(after - starts.begin() - 1);
    const std::int64_t k = seen[{w.file, w.rank, w.thread, iteration, w.name}]++;
    w.name = intern(fmt::format("{}#{}", names[w.name], k));
    kept.push_back(w);
  }
  works = std::move(kept);
  return all_marked;
}

// A collective makes progress only once every rank has joined it: each
// record's time from the latest start of the same collective (the k-th of its
// operation and size on every rank of its file).
void from_last_arrival(std::vector<Work>& comm) {
  std::sort(comm.begin(), comm.end(), [](const Work& a, const Work& b) {
    return std::tie(a.file, a.rank, a.name, a.start) < std::tie(b.file, b.rank, b.name, b.start);
  });
  std::map<std::tuple<std::size_t, std::int32_t, std::size_t>, std::int64_t> seen;
  std::vector<std::int64_t> index(comm.size());
  std::map<std::tuple<std::size_t, std::size_t, std::int64_t>, std::int64_t> last;
  for (std::size_t i = 0; i < comm.size(); ++i) {
    const Work& w = comm[i];
    index[i] = seen[{w.file, w.rank, w.name}]++;
    auto& l = last[{w.file, w.name, index[i]}];
    l = std::max(l, w.start);
  }
  std::vector<Work> kept;
  for (std::size_t i = 0; i < comm.size(); ++i) {
    Work w = comm[i];
    w.start = std::max(w.start, last[{w.file, w.name, index[i]}]);
    if (w.end > w.start) kept.push_back(w);
  }
  comm = std::move(kept);
}

}  // namespace

InterferenceFit fit_interference(const std::vector<std::filesystem::path>& traces,
                                 bool allow_truncated, const NetworkCalibration* alone) {
  InterferenceFit fit;
  std::map<std::string, std::size_t, std::less<>> interned;
  std::vector<std::string> names;
  const std::function<std::size_t(std::string)> intern = [&](std::string name) {
    const auto [it, added] = interned.try_emplace(std::move(name), interned.size());
    if (added) names.push_back(it->first);
    return it->second;
  };
  std::map<RankKey, std::vector<std::int64_t>> iterations;
  std::vector<Work> gpu, host, comm;
  std::vector<CollectiveKey> keys;  // by interned name, for collectives' names
  std::set<RankKey> ranks;
  // Kernels' launches on the host: (file, rank, correlation id) -> start.
  std::map<std::tuple<std::size_t, std::int32_t, std::uint64_t>, std::int64_t> launches;
  for (std::size_t file = 0; file < traces.size(); ++file) {
    auto reader = trace::TraceReader::open(traces[file]);
    v1::Event event;
    std::int64_t collectives = 0;
    while (reader.next(event)) {
      if (event.has_kernel()) {
        const v1::Kernel& k = event.kernel();
        if (k.end_ns() <= k.start_ns()) continue;
        Work w{file, event.rank(), k.stream(),        0, 0, k.start_ns(), k.end_ns(),
               0,    k.start_ns(), k.correlation_id()};
        if (k.device() >= 0) {
          if (trace::is_nccl_kernel(k.name())) continue;
          w.kind = trace::is_memory_class(trace::classify_kernel(k.name())) ? kMemory : 0;
          // One piece of work: the name at one launch shape, where the trace
          // has it (a name at other shapes in forward and backward is not).
          w.name = intern(k.grid_x() > 0 ? fmt::format("{} <<<{},{},{} x {},{},{}>>>", k.name(),
                                                       k.grid_x(), k.grid_y(), k.grid_z(),
                                                       k.block_x(), k.block_y(), k.block_z())
                                         : k.name());
          gpu.push_back(w);
        } else {
          if (trace::is_communication_op(k.name())) continue;
          w.name = intern(k.name());
          host.push_back(w);
        }
      } else if (event.has_api_call()) {
        const v1::ApiCall& a = event.api_call();
        if (a.correlation_id() != 0 && a.api() != v1::ApiCall::FRAMEWORK) {
          launches.try_emplace({file, event.rank(), a.correlation_id()}, a.start_ns());
        }
      } else if (event.has_marker()) {
        const std::string& name = event.marker().name();
        if (name.starts_with(trace::kIterationMarkPrefix) || trace::profiler_step_number(name)) {
          iterations[{file, event.rank()}].push_back(event.marker().start_ns());
        }
      } else if (event.has_collective()) {
        const v1::Collective& c = event.collective();
        if (c.end_ns() <= c.start_ns()) continue;
        ++collectives;
        ranks.insert({file, event.rank()});
        const std::string key = fmt::format("{}:{}:{}", static_cast<int>(c.op()), c.size_bytes(),
                                            c.nranks());
        const std::size_t name = intern(key);
        if (keys.size() <= name) keys.resize(name + 1);
        keys[name] = CollectiveKey{c.op(), c.size_bytes(), c.nranks()};
        comm.push_back(
            Work{file, event.rank(), 0, name, kComm, c.start_ns(), c.end_ns(), 0, c.start_ns()});
      }
    }
    if (reader.truncated() && !allow_truncated) {
      throw trace::truncated_trace_error(reader,
                                         "; pass --allow-truncated to fit the readable prefix");
    }
    if (collectives == 0) {
      throw InputError({traces[file].string(), {}, {}, "collective"},
                       "the trace has no collective records: nothing to overlap its compute");
    }
  }
  for (Work& w : gpu) {
    if (w.correlation == 0) continue;
    const auto it = launches.find({w.file, w.rank, w.correlation});
    if (it != launches.end() && it->second <= w.start) w.issued = it->second;
  }
  fit.gpu = !gpu.empty();
  std::vector<Work>& compute = fit.gpu ? gpu : host;
  if (!fit.gpu) {
    keep_leaves(host);
  } else if (!host.empty()) {
    fit.notes.push_back(fmt::format(
        "{} host operator(s) left out: the traces hold GPU kernels, whose factors these are",
        host.size()));
  }
  for (auto& [k, v] : iterations) std::sort(v.begin(), v.end());
  if (!by_iteration_ordinal(compute, iterations, names, intern)) {
    fit.notes.push_back("a rank has no iteration marks: its records are matched by name alone "
                        "(a name's records may be of layers of different sizes)");
  }
  from_last_arrival(comm);
  if (compute.empty()) {
    throw InputError({traces.front().string(), {}, {}, "kernel"},
                     "no compute record (kernel or host operator) in the trace(s)");
  }
  // What covers each record: the collectives of its rank, or its rank's compute.
  std::map<RankKey, Intervals> comm_at, compute_at;
  for (const Work& w : comm) comm_at[{w.file, w.rank}].emplace_back(w.start, w.end);
  for (const Work& w : compute) compute_at[{w.file, w.rank}].emplace_back(w.start, w.end);
  for (auto& [k, v] : comm_at) v = merged_intervals(std::move(v));
  for (auto& [k, v] : compute_at) v = merged_intervals(std::move(v));
  const auto share = [](const std::map<RankKey, Intervals>& at, const Work& w) {
    const auto it = at.find({w.file, w.rank});
    if (it == at.end()) return 0.0;
    return static_cast<double>(covered_ns(it->second, w.start, w.end)) /
           static_cast<double>(w.end - w.start);
  };
  for (Work& w : compute) w.phi = share(comm_at, w);
  for (Work& w : comm) w.phi = share(compute_at, w);
  fit.compute_records = static_cast<std::int64_t>(compute.size());
  fit.collectives = static_cast<std::int64_t>(comm.size());
  fit.ranks = static_cast<std::int64_t>(ranks.size());
  std::int64_t skipped = 0;
  fit.compute = fit_kind(compute, 0, skipped);
  if (!fit.gpu) {
    // The bytes a ns each rank's collectives moved through it, from their
    // last arrival.
    std::map<RankKey, RatedIntervals> flows;
    for (const Work& w : comm) {
      const CollectiveKey& k = keys[w.name];
      const double through = trace::trace_bytes_through(k.op, k.bytes, k.nranks);
      if (through > 0) {
        flows[{w.file, w.rank}].add(w.start, w.end, through / static_cast<double>(w.end - w.start));
      }
    }
    for (auto& [key, f] : flows) f.seal();
    const SampleOf cpu_per_byte = [&](const Work& w, double f) -> std::optional<double> {
      const auto it = flows.find({w.file, w.rank});
      if (it == flows.end()) return std::nullopt;
      const double bytes = it->second.amount(w.start, w.end);
      const double overlapped = w.phi * static_cast<double>(w.end - w.start);
      if (bytes <= 0 || overlapped <= 0) return std::nullopt;
      // No slowdown (or a speed-up: noise) is a sample of no CPU, kept so
      // that the median is not pushed up.
      if (f <= 0) return 0.0;
      return f / (1 + f) / (bytes / overlapped);
    };
    std::int64_t unused = 0;
    fit.cpu_per_byte = fit_kind(compute, 0, unused, cpu_per_byte);
  }
  if (fit.gpu) fit.memory = fit_kind(compute, kMemory, skipped);
  if (alone != nullptr) {
    std::int64_t without_fit = 0;
    fit.comm = fit_comm_against(comm, keys, *alone, without_fit);
    fit.comm_from_calibration = true;
    if (!fit.gpu) {
      std::int64_t beside_compute = 0;
      std::int64_t in_company = 0;  // host.comm's collectives beside another of their rank
      fit.concurrent = fit_concurrent(comm, keys, *alone, compute_at, fit.concurrent_collectives,
                                      beside_compute, in_company);
      if (beside_compute > 0) {
        fit.notes.push_back(fmt::format(
            "concurrent: {} collective(s) left out, in busy periods that compute covers more "
            "than half of (their slowdown is interference.host.comm's)",
            beside_compute));
      }
      if (fit.concurrent && fit.comm && in_company > 0) {
        fit.notes.push_back(fmt::format(
            "comm: {} of the collectives beside compute also ran beside another collective of "
            "their rank: with interference.host.concurrent set too, a replayed collective that "
            "does both counts both",
            in_company));
      }
      if (!fit.concurrent) {
        fit.notes.push_back(
            "concurrent: no busy period of two or more collectives of a rank "
            "with compute covering at most half of it");
      }
    }
    if (without_fit > 0) {
      fit.notes.push_back(fmt::format(
          "{} overlapped collective(s) left out: the calibration has no fit for their operation "
          "and ranks (or they have no size)",
          without_fit));
    }
  } else {
    fit.comm = fit_kind(comm, kComm, skipped);
  }
  if (skipped > 0) {
    fit.notes.push_back(fmt::format(
        "{} name(s) left out: their records alone vary by more than {:.0f}% (p90 - p10 against "
        "the median), so they are not one piece of work",
        skipped, 100 * kMaxAloneSpread));
  }
  const char* what = fit.gpu ? "kernel" : "operator";
  if (!fit.compute) {
    fit.notes.push_back(fmt::format(
        "{}compute: no {} ran both alone (at least {} times) and mostly beside a collective: "
        "give a capture of the same model with overlap off too",
        fit.gpu ? "SM-bound " : "", what, kMinAlone));
  }
  if (fit.gpu && !fit.memory) {
    fit.notes.push_back(fmt::format(
        "memory-bound compute: no such kernel ran both alone (at least {} times) and mostly "
        "beside a collective",
        kMinAlone));
  }
  if (!fit.comm && alone == nullptr) {
    fit.notes.push_back(fmt::format(
        "comm: no collective of one operation and size ran both alone (at least {} times) and "
        "mostly beside compute: a network calibration of the same network gives the alone "
        "times (--calibration)",
        kMinAlone));
  } else if (!fit.comm) {
    fit.notes.push_back("comm: no collective the calibration has a fit for ran mostly beside "
                        "compute");
  }
  // A median below 0 is written as 0 (the scenario's keys are at least 0):
  // within the same names' own spread alone that is noise; beyond it no
  // interference explains it, and the records beside and alone are not one
  // piece of work (one kernel name at other shapes, as forward and backward
  // run it).
  const std::string cls = fit.gpu ? "gpu" : "host";
  for (const auto& [key, f] :
       {std::pair{cls + ".compute", &fit.compute}, std::pair{cls + ".memory", &fit.memory},
        std::pair{cls + ".comm", &fit.comm}, std::pair{cls + ".concurrent", &fit.concurrent}}) {
    if (!*f || (*f)->median >= 0) continue;
    const double m = -100 * (*f)->median;
    const double spread = 100 * (*f)->alone_spread;
    if (m <= spread) {
      fit.notes.push_back(fmt::format(
          "{}: -{:.1f}% (faster beside the other kind), within the spread it stands against "
          "({:.1f}%): noise, written as 0",
          key, m, spread));
    } else if (f == &fit.compute || f == &fit.memory) {
      fit.notes.push_back(fmt::format(
          "{}: -{:.1f}%, faster beside the other kind than alone by more than the spread it "
          "stands against ({:.1f}%): written as 0, but no interference explains it; the records "
          "beside and alone are likely not the same work (one {} name at other shapes, as "
          "forward and backward run it), so these traces do not measure this factor",
          key, m, spread, what));
    } else {
      fit.notes.push_back(fmt::format(
          "{}: -{:.1f}%, the collectives faster than their alone times by more than the spread "
          "those stand against ({:.1f}%): written as 0, but no interference explains it; the "
          "alone times are not these collectives' ({}), so this factor is not measured",
          key, m, spread,
          fit.comm_from_calibration ? "likely: the calibration's sweep ran slower than the "
                                      "capture's network did"
                                    : "likely: the records alone ran at other moments"));
    }
  }
  return fit;
}

}  // namespace ssgd::sim
