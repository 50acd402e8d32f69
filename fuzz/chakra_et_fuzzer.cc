// Fuzz target: Chakra execution traces (traces/chakra/et_file.h) and their
// import (traces/import/chakra/chakra_import.h) into a graph that replays
// (dag/execution_graph.h, dag/execution_dag.h).
//
// Promise: read_execution_trace reads the file or throws an InputError
// naming it. What it read, written again, reads back to the same bytes. The
// import of the file as rank 0 of a job writes a trace, or throws an
// InputError naming the file and leaves no output; the trace it writes
// reads as an execution graph whose task graph builds, or is refused with an
// InputError naming that trace.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/gzip_stream.h"
#include "dag/execution_dag.h"
#include "dag/execution_graph.h"
#include "fuzz/fuzz_support.h"
#include "traces/chakra/et_file.h"
#include "traces/import/chakra/chakra_import.h"
#include "traces/trace_reader.h"
#include "walk/execution_graph_reader.h"

namespace {

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("job.0.et", data, size).string();
  const std::string copy = ssgd::fuzz::scratch("copy.0.et").string();

  ssgd::chakra::ExecutionTrace et;
  if (!ssgd::fuzz::accepts("read_execution_trace", {in},
                           [&] { et = ssgd::chakra::read_execution_trace(in); })) {
    return 0;
  }
  // Bounded readers (issue 33): what was read holds at most kBytesPerByte
  // bytes for each byte of the file, uncompressed. The reader refuses empty
  // nodes, reused ids and repeated attributes, so a node costs at least 3
  // bytes of file and an attribute 5; before that, a run of zero bytes was
  // a node (about 330 bytes) per byte, which libFuzzer's limits (1 GiB at
  // once, 2.5 GiB in all) never saw on inputs of a few KB.
  must("the memory of what was read", [&] {
    constexpr std::uint64_t kBytesPerByte = 160;
    std::uint64_t file_bytes = 0;
    ssgd::GzipReader gz(in);
    char buffer[1 << 14];
    while (const std::size_t n = gz.read(buffer, sizeof buffer)) file_bytes += n;
    std::uint64_t held = sizeof(et.metadata);
    const auto attributes = [&held](const std::vector<ssgd::chakra::Attribute>& attrs) {
      for (const auto& a : attrs) {
        held += sizeof a + a.name.size() + a.text.size() + 8 * a.list_bits.size() +
                8 * a.list_reals.size();
        for (const auto& t : a.list_texts) held += sizeof t + t.size();
      }
    };
    attributes(et.metadata.attrs);
    for (const auto& n : et.nodes) {
      held += sizeof n + n.name.size() + 8 * (n.ctrl_deps.size() + n.data_deps.size());
      attributes(n.attrs);
    }
    if (held > kBytesPerByte * file_bytes + 4096) {
      finding("an ET of " + std::to_string(file_bytes) + " bytes was read into about " +
              std::to_string(held) + " bytes of memory: more than " +
              std::to_string(kBytesPerByte) + " a byte");
    }
  });
  must("writing back an ET read", [&] { ssgd::chakra::write_execution_trace(copy, et); });
  must("reading back the ET written", [&] {
    const auto back = ssgd::chakra::read_execution_trace(copy);
    if (ssgd::chakra::serialize_execution_trace(back) !=
        ssgd::chakra::serialize_execution_trace(et)) {
      finding("the ET written back reads differently");
    }
  });
  std::filesystem::remove(copy);

  const std::string out = ssgd::fuzz::scratch("graph.ssgdt").string();
  const bool imported = ssgd::fuzz::accepts(
      "import_chakra", {in}, [&] { ssgd::trace::import_chakra({std::filesystem::path(in)}, out); });
  if (!imported) {
    ssgd::fuzz::expect_scratch_files("a rejected import's output", {"job.0.et"});
    return 0;
  }
  // A graph that cannot run as one job (a send to a rank it does not have)
  // is an InputError naming the trace; a cycle the import let through, or
  // any other exception, is a finding.
  ssgd::fuzz::accepts("building the imported graph", {out}, [&] {
    auto reader = ssgd::trace::TraceReader::open(out);
    const auto graph = ssgd::walk::read_execution_graph(reader, out);
    const auto dag = ssgd::dag::build_execution_dag(
        graph,
        [](const ssgd::dag::GraphCommCall& call) -> std::optional<ssgd::Duration> {
          return ssgd::Duration(call.bytes);
        },
        out);
    if (dag.graph.task_count() == 0) finding("an imported graph has no task");
  });
  return 0;
}
