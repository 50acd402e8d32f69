// Fuzz target: the .ssgdt container and its events (traces/trace_reader.h),
// and what `ssgd info` makes of them (traces/trace_dump.h).
//
// Promise: TraceReader reads the file (possibly cut short) or throws an
// InputError naming it. What it read, written again by TraceWriter, reads
// back to the same metadata, events and footer counters; the summary and
// the text dump of an accepted trace succeed. The replay's reading of it
// (walk/trace_profile.h) returns a profile or an InputError naming it, and a
// trace it replays has no collective of an unknown op or recorded twice
// (fuzz/collective_check.h).

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/collective_check.h"
#include "fuzz/fuzz_support.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace {

using ssgd::fuzz::finding;
using ssgd::fuzz::must;
using ssgd::trace::TraceReader;
using ssgd::trace::TraceWriter;
namespace v1 = ssgd::trace::v1;

void compare_read_back(const std::string& in, const std::string& out) {
  TraceReader original = TraceReader::open(in);
  TraceReader copy = TraceReader::open(out);
  if (original.metadata().SerializeAsString() != copy.metadata().SerializeAsString()) {
    finding("the metadata read back differs:\n" + original.metadata().ShortDebugString() +
            "\nread back:\n" + copy.metadata().ShortDebugString());
  }
  v1::Event a;
  v1::Event b;
  for (std::uint64_t i = 0;; ++i) {
    const bool more_a = original.next(a);
    const bool more_b = copy.next(b);
    if (more_a != more_b) {
      finding("the trace read back has " + std::string(more_b ? "more" : "fewer") +
              " events than the one read: they differ at event " + std::to_string(i));
    }
    if (!more_a) break;
    if (a.SerializeAsString() != b.SerializeAsString()) {
      finding("event " + std::to_string(i) + " read back differs:\n" + a.ShortDebugString() +
              "\nread back:\n" + b.ShortDebugString());
    }
  }
  if (copy.truncated()) finding("the trace written back reads as cut short");
  if (copy.footer() == nullptr) finding("the trace written back has no footer");
  if (original.footer() != nullptr &&
      (original.footer()->dropped_records() != copy.footer()->dropped_records() ||
       original.footer()->invalid_timestamps() != copy.footer()->invalid_timestamps())) {
    finding("the footer's counters read back differ: " + original.footer()->ShortDebugString() +
            "\nread back:\n" + copy.footer()->ShortDebugString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.ssgdt", data, size).string();
  const std::string out = ssgd::fuzz::scratch("out.ssgdt").string();

  // Read every event, writing each again as it comes.
  const bool accepted = ssgd::fuzz::accepts("TraceReader", {in}, [&] {
    TraceReader reader = TraceReader::open(in);
    TraceWriter writer(out, reader.metadata());
    v1::Event event;
    while (reader.next(event)) {
      must("TraceWriter::append of an event TraceReader accepted", [&] { writer.append(event); });
    }
    if (const v1::Footer* footer = reader.footer()) {
      writer.add_dropped(footer->dropped_records());
      writer.add_invalid_timestamps(footer->invalid_timestamps());
    }
    must("TraceWriter::close", [&] { writer.close(); });
  });
  if (!accepted) {
    ssgd::fuzz::expect_scratch_files("a rejected trace's copy", {"in.ssgdt"});
    return 0;
  }
  must("reading back the trace written", [&] { compare_read_back(in, out); });

  // `ssgd info` and `ssgd info --dump` on the accepted trace.
  must("summarize_trace of an accepted trace", [&] {
    TraceReader reader = TraceReader::open(in);
    std::ostringstream text;
    ssgd::trace::print_summary(ssgd::trace::summarize_trace(reader), text);
  });
  must("dump_trace_text of an accepted trace", [&] {
    TraceReader reader = TraceReader::open(in);
    std::ostringstream text;
    ssgd::trace::dump_trace_text(reader, text);
  });
  ssgd::fuzz::check_trace_replay_input("an accepted trace", in);
  return 0;
}
