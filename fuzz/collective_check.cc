#include "fuzz/collective_check.h"

#include <cstdint>
#include <set>
#include <tuple>

#include "walk/trace_profile.h"
#include "fuzz/fuzz_support.h"
#include "traces/trace_reader.h"

namespace ssgd::fuzz {

void check_trace_collectives(std::string_view what, const std::string& path) {
  must(std::string(what) + ": reading its collectives", [&] {
    trace::TraceReader reader = trace::TraceReader::open(path);
    std::set<std::tuple<int, std::uint64_t, std::uint64_t, std::int32_t>> seen;
    trace::v1::Event e;
    for (std::int64_t record = 0; reader.next(e); ++record) {
      if (!e.has_collective()) continue;
      const auto& c = e.collective();
      if (!trace::v1::Collective::Op_IsValid(c.op())) {
        finding(std::string(what) + ": record " + std::to_string(record) + " is a collective of op " +
                std::to_string(static_cast<int>(c.op())) + ", outside the format's enum");
      }
      if (!seen.emplace(static_cast<int>(c.op()), c.communicator_id(), c.sequence_number(), c.rank())
               .second) {
        finding(std::string(what) + ": record " + std::to_string(record) +
                " is a collective recorded twice (op, communicator, sequence, rank)");
      }
    }
  });
}

void check_trace_replay_input(std::string_view what, const std::string& path) {
  bool replayed = false;
  if (accepts(std::string(what) + ": profile_from_trace", {path}, [&] {
        trace::TraceReader reader = trace::TraceReader::open(path);
        (void)walk::profile_from_trace(reader, path);
        replayed = true;
      }) &&
      replayed) {
    check_trace_collectives(std::string(what) + " (replayed)", path);
  }
}

}  // namespace ssgd::fuzz
