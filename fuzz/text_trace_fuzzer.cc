// Fuzz target: the text trace `ssgd pack` reads (pack_text_trace in
// traces/trace_dump.h).
//
// Promise: pack_text_trace writes a trace or throws an InputError naming the
// text file, leaving no output. An accepted text packs, dumps (`ssgd info
// --dump`) and packs again to the same bytes, and the two dumps are equal;
// it has no collective of an unknown op or recorded twice, and the replay's
// reading of it returns a profile or an InputError naming it
// (fuzz/collective_check.h).

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/collective_check.h"
#include "fuzz/fuzz_support.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace {

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

std::string dump(const std::string& trace) {
  ssgd::trace::TraceReader reader = ssgd::trace::TraceReader::open(trace);
  std::ostringstream text;
  ssgd::trace::dump_trace_text(reader, text);
  return text.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.txtpb", data, size).string();
  const std::string packed = ssgd::fuzz::scratch("packed.ssgdt").string();
  if (!ssgd::fuzz::accepts("pack_text_trace", {in},
                           [&] { ssgd::trace::pack_text_trace(in, packed); })) {
    ssgd::fuzz::expect_scratch_files("a rejected text trace", {"in.txtpb"});
    return 0;
  }
  ssgd::fuzz::check_trace_collectives("a packed text trace", packed);
  ssgd::fuzz::check_trace_replay_input("a packed text trace", packed);
  std::string first_dump;
  must("dumping the packed trace", [&] { first_dump = dump(packed); });
  const std::string again = ssgd::fuzz::write_scratch("again.txtpb", first_dump).string();
  const std::string repacked = ssgd::fuzz::scratch("repacked.ssgdt").string();
  must("packing the dump of an accepted text trace",
       [&] { ssgd::trace::pack_text_trace(again, repacked); });
  if (ssgd::fuzz::read_bytes(packed) != ssgd::fuzz::read_bytes(repacked)) {
    finding("packing the dump gives a different trace than packing the text; the dump:\n" +
            first_dump);
  }
  std::string second_dump;
  must("dumping the repacked trace", [&] { second_dump = dump(repacked); });
  if (first_dump != second_dump) {
    finding("the dump of the repacked trace differs:\n" + first_dump + "\nagain:\n" + second_dump);
  }
  return 0;
}
