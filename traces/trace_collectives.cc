#include "traces/trace_collectives.h"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/logging.h"
#include "traces/collective_records.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
std::optional<CollectiveOp> modelled_op(trace::v1::Collective::Op op) {
  switch (op) {
    case trace::v1::Collective::ALL_REDUCE: return CollectiveOp::kAllReduce;
    case trace::v1::Collective::REDUCE_SCATTER: return CollectiveOp::kReduceScatter;
    case trace::v1::Collective::ALL_GATHER: return CollectiveOp::kAllGather;
    case trace::v1::Collective::BROADCAST: return CollectiveOp::kBroadcast;
    case trace::v1::Collective::ALL_TO_ALL: return CollectiveOp::kAllToAll;
    default: return std::nullopt;
  }
}

double trace_bytes_through(trace::v1::Collective::Op op, std::int64_t size_bytes,
                           std::int32_t nranks) {
  const auto bytes = static_cast<double>(size_bytes);
  switch (op) {
    case trace::v1::Collective::SEND:
    case trace::v1::Collective::RECV: return bytes;
    case trace::v1::Collective::REDUCE:
      return bytes_through_rank(CollectiveOp::kReduce, bytes, nranks);
    default: break;
  }
  const std::optional<CollectiveOp> m = modelled_op(op);
  return m ? bytes_through_rank(*m, bytes, nranks) : 0.0;
}

namespace {

namespace v1 = trace::v1;

// One collective as its ranks recorded it.
struct Instance {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t nranks = 0;
  std::int64_t size_bytes = 0;
  std::int64_t first_record = 0;
  std::int64_t last_arrival_record = 0;  // the record with the latest start
  std::map<std::int64_t, std::int64_t> record_of_rank;
  std::int64_t max_start_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t max_end_ns = std::numeric_limits<std::int64_t>::min();
};

}  // namespace

std::vector<Measurement> read_trace_collectives(const std::filesystem::path& path,
                                                bool allow_truncated) {
  const std::string file = path.string();
  auto reader = trace::TraceReader::open(path);
  // Keyed by (op, communicator, sequence number); ordered, so the output is
  // the same whatever order the ranks' events came in.
  std::map<std::tuple<int, std::uint64_t, std::uint64_t>, Instance> instances;
  std::int64_t unmodelled = 0;
  trace::CollectiveRecordSet seen;  // no record twice (traces/collective_records.h)
  v1::Event event;
  for (std::int64_t record = 0; reader.next(event); ++record) {
    if (!event.has_collective()) continue;
    const v1::Collective& c = event.collective();
    const auto at = [&](const char* field) {
      return InputLocation{file, std::nullopt, record, fmt::format("collective.{}", field)};
    };
    seen.add(c, at(""));
    const std::optional<CollectiveOp> op = modelled_op(c.op());
    if (!op) {
      ++unmodelled;
      continue;
    }
    if (c.nranks() < 1)
      throw InputError(at("nranks"), fmt::format("must be at least 1, got {}", c.nranks()));
    // A rank outside nranks, a negative size or an end before the start
    // never gets here: TraceReader applies the trace's rules
    // (traces/event_rules.h).
    const auto key =
        std::make_tuple(static_cast<int>(*op), c.communicator_id(), c.sequence_number());
    auto [it, fresh] = instances.try_emplace(key);
    Instance& in = it->second;
    if (fresh) {
      in.op = *op;
      in.nranks = c.nranks();
      in.size_bytes = c.size_bytes();
      in.first_record = record;
    } else {
      const std::string which =
          fmt::format("communicator {:#x} sequence {}", c.communicator_id(), c.sequence_number());
      if (c.nranks() != in.nranks) {
        throw InputError(at("nranks"), fmt::format("{} for {}, which record {} gives {}",
                                                   c.nranks(), which, in.first_record, in.nranks));
      }
      if (c.size_bytes() != in.size_bytes) {
        throw InputError(at("size_bytes"),
                         fmt::format("{} for {}, which record {} gives {}", c.size_bytes(), which,
                                     in.first_record, in.size_bytes));
      }
    }
    in.record_of_rank.emplace(c.rank(), record);  // once a rank: `seen` refused a second
    if (c.start_ns() > in.max_start_ns) {
      in.max_start_ns = c.start_ns();
      in.last_arrival_record = record;
    }
    in.max_end_ns = std::max(in.max_end_ns, c.end_ns());
  }
  if (reader.truncated() && !allow_truncated) {
    throw trace::truncated_trace_error(reader, "; pass --allow-truncated to fit the readable prefix");
  }

  std::vector<Measurement> out;
  std::int64_t incomplete = 0;
  std::int64_t trivial = 0;
  for (const auto& [key, in] : instances) {
    if (static_cast<std::int64_t>(in.record_of_rank.size()) < in.nranks) {
      ++incomplete;
      continue;
    }
    if (in.size_bytes == 0 || in.nranks == 1) {
      ++trivial;
      continue;
    }
    const std::int64_t time_ns = in.max_end_ns - in.max_start_ns;
    if (time_ns <= 0) {
      throw InputError(
          InputLocation{file, std::nullopt, in.last_arrival_record, "collective.end_ns"},
          "the collective takes no time after its last rank arrived");
    }
    Measurement m;
    m.op = in.op;
    m.ranks = in.nranks;
    m.bytes = static_cast<double>(in.size_bytes);  // both the whole buffer
    m.time = Duration(time_ns);
    m.source = file;
    out.push_back(std::move(m));
  }
  auto log = logger("calibration");
  if (incomplete > 0) {
    log->warn(
        "{}: {} of {} collectives lack some rank's record (a trace of part of the job, or "
        "cut short) and are left out",
        file, incomplete, instances.size());
  }
  if (trivial > 0) log->info("{}: {} collectives of 0 bytes or 1 rank left out", file, trivial);
  if (unmodelled > 0) {
    log->info("{}: {} reduce, send, receive or unknown records left out", file, unmodelled);
  }
  return out;
}

}  // namespace ssgd::trace
