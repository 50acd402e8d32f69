#include "fuzz/import_check.h"

#include <sstream>

#include "fuzz/collective_check.h"
#include "fuzz/fuzz_support.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::fuzz {

void check_imported_trace(std::string_view what, const std::string& input_name,
                          const std::filesystem::path& out, std::uint64_t events_written) {
  expect_scratch_files(what, {input_name, out.filename().string()});
  if (events_written == 0) finding(std::string(what) + ": accepted and wrote no events");
  must("reading back the imported trace", [&] {
    trace::TraceReader reader = trace::TraceReader::open(out);
    const trace::TraceSummary read = trace::summarize_trace(reader);
    std::ostringstream text;
    trace::print_summary(read, text);
    if (read.truncated) finding("the imported trace reads as cut short");
    if (read.events != events_written) {
      finding("the imported trace holds " + std::to_string(read.events) +
              " events, the import said " + std::to_string(events_written));
    }
  });
  check_trace_collectives(what, out.string());
  check_trace_replay_input(what, out.string());
}

}  // namespace ssgd::fuzz
