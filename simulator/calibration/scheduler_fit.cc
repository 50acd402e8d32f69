#include "simulator/calibration/scheduler_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "common/error.h"
#include "traces/trace_reader.h"

namespace ssgd::sim {
namespace {

namespace v1 = trace::v1;

struct Interval {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

struct Launch {
  Interval at;
  bool launches_collective = false;
};

struct CollectiveRecord {
  Interval at;
  std::uint64_t correlation = 0;
};

using RankThread = std::pair<std::int32_t, std::uint64_t>;

// Nearest-rank percentile of sorted samples.
Duration percentile(const std::vector<std::int64_t>& sorted, int percent) {
  const std::size_t n = sorted.size();
  std::size_t rank = (static_cast<std::size_t>(percent) * n + 99) / 100;
  rank = std::clamp<std::size_t>(rank, 1, n);
  return Duration(sorted[rank - 1]);
}

SampleSummary summarize(std::vector<std::int64_t> samples) {
  std::sort(samples.begin(), samples.end());
  SampleSummary s;
  s.samples = static_cast<std::int64_t>(samples.size());
  s.median = percentile(samples, 50);
  s.p10 = percentile(samples, 10);
  s.p90 = percentile(samples, 90);
  return s;
}

// True when some start in the sorted list lies in (after, before).
bool starts_between(const std::vector<std::int64_t>& sorted_starts, std::int64_t after,
                    std::int64_t before) {
  const auto it = std::upper_bound(sorted_starts.begin(), sorted_starts.end(), after);
  return it != sorted_starts.end() && *it < before;
}

}  // namespace

SchedulerFit fit_scheduler_costs(const std::filesystem::path& path, bool allow_truncated) {
  const std::string file = path.string();
  auto reader = trace::TraceReader::open(path);
  // Host calls by (rank, correlation id); the first one wins, later ones with
  // the same id (a tracer's nested runtime and driver calls) are other work.
  std::map<std::pair<std::int32_t, std::uint64_t>, std::pair<RankThread, std::size_t>> call_of;
  std::map<RankThread, std::vector<Launch>> calls;           // every API call, per thread
  std::map<RankThread, std::vector<std::int64_t>> cpu_work;  // CPU operators' starts
  std::map<std::pair<std::int32_t, std::uint32_t>, std::vector<CollectiveRecord>> streams;
  SchedulerFit fit;
  v1::Event event;
  while (reader.next(event)) {
    if (event.has_api_call()) {
      const v1::ApiCall& a = event.api_call();
      const RankThread key{event.rank(), a.thread_id()};
      auto& list = calls[key];
      list.push_back(Launch{{a.start_ns(), a.end_ns()}, false});
      if (a.correlation_id() != 0) {
        call_of.try_emplace({event.rank(), a.correlation_id()}, key, list.size() - 1);
      }
    } else if (event.has_kernel() && event.kernel().device() < 0) {
      const v1::Kernel& k = event.kernel();
      cpu_work[{event.rank(), k.stream()}].push_back(k.start_ns());
    } else if (event.has_collective()) {
      const v1::Collective& c = event.collective();
      ++fit.collectives;
      streams[{event.rank(), c.stream()}].push_back(
          CollectiveRecord{{c.start_ns(), c.end_ns()}, c.correlation_id()});
    }
  }
  if (reader.truncated() && !allow_truncated) {
    throw trace::truncated_trace_error(reader,
                                       "; pass --allow-truncated to fit the readable prefix");
  }

  // Scheduling delay: each linked collective against its launch and the
  // collective before it on its stream.
  std::vector<std::int64_t> delays;
  std::set<std::int32_t> ranks;
  for (auto& [key, list] : streams) {
    std::stable_sort(list.begin(), list.end(),
                     [](const CollectiveRecord& a, const CollectiveRecord& b) {
                       return a.at.start < b.at.start;
                     });
    std::optional<std::int64_t> previous_end;
    for (const CollectiveRecord& c : list) {
      const auto link =
          c.correlation == 0 ? call_of.end() : call_of.find({key.first, c.correlation});
      if (link != call_of.end()) {
        Launch& launch = calls[link->second.first][link->second.second];
        launch.launches_collective = true;
        std::int64_t ready = launch.at.end;
        if (previous_end) ready = std::max(ready, *previous_end);
        delays.push_back(std::max<std::int64_t>(0, c.at.start - ready));
        ranks.insert(key.first);
      }
      previous_end = std::max(previous_end.value_or(c.at.end), c.at.end);
    }
  }
  fit.partitions = static_cast<std::int64_t>(delays.size());
  fit.ranks = static_cast<std::int64_t>(ranks.size());
  if (delays.empty()) {
    throw InputError(
        InputLocation{file, std::nullopt, std::nullopt, "collective.correlation_id"},
        fmt::format("none of its {} collective(s) is linked to the host call that launched it "
                    "(an ApiCall of the same rank with the same correlation_id): scheduler costs "
                    "need a capture with API calls (ssgd trace) or a PyTorch profile with its "
                    "c10d calls (ssgd import pytorch)",
                    fit.collectives));
  }
  fit.schedule_overhead = summarize(std::move(delays));

  // Host time per partition: spacing of launches inside bursts.
  std::vector<std::int64_t> spacings;
  for (auto& [key, list] : calls) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Launch& a, const Launch& b) { return a.at.start < b.at.start; });
    // What else the thread did: its other API calls (not those nested in a
    // launch, such as a runtime call's driver call) and its CPU operators.
    std::vector<Interval> launches;
    for (const Launch& l : list) {
      if (l.launches_collective) launches.push_back(l.at);
    }
    std::vector<std::int64_t> other;
    for (const Launch& l : list) {
      if (l.launches_collective) continue;
      const auto after =
          std::upper_bound(launches.begin(), launches.end(), l.at.start,
                           [](std::int64_t t, const Interval& i) { return t < i.start; });
      const bool nested = after != launches.begin() && std::prev(after)->end >= l.at.end;
      if (!nested) other.push_back(l.at.start);
    }
    if (const auto it = cpu_work.find(key); it != cpu_work.end()) {
      other.insert(other.end(), it->second.begin(), it->second.end());
    }
    std::sort(other.begin(), other.end());
    bool in_burst = false;
    for (std::size_t i = 1; i < launches.size(); ++i) {
      const Interval& previous = launches[i - 1];
      const Interval& next = launches[i];
      if (next.start >= previous.end && !starts_between(other, previous.end, next.start)) {
        if (!in_burst) ++fit.bursts;
        in_burst = true;
        spacings.push_back(next.start - previous.start);
      } else {
        in_burst = false;
      }
    }
  }
  if (!spacings.empty()) fit.partition_overhead = summarize(std::move(spacings));
  return fit;
}

}  // namespace ssgd::sim
