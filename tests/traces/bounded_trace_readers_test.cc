// Bounded readers (docs/reliability.md): every trace-side reader fed a large
// degenerate input (tens of MB of newlines, commas, empty records, "{}," or
// "[[[", a gzip of zeros) in a child whose heap is limited
// (tests/support/heap_limit.h). Each is refused, naming the file (and its
// line or record where it has one), with its peak heap under a bound per
// byte of input. The Chakra ET's own cases are in bounded_chakra_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/degenerate_inputs.h"
#include "tests/support/heap_limit.h"
#include "tests/support/test_files.h"
#include "traces/dataset/dataset_manifest.h"
#include "traces/import/bcaffe/bcaffe_log.h"
#include "traces/import/pytorch/pytorch_import.h"
#include "traces/layer_profile.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

using ssgd::testing::gzip_bytes;
using ssgd::testing::kMiB;
using ssgd::testing::repeated;
using ssgd::testing::TempDirTest;

class BoundedTraceReaders : public TempDirTest {
 protected:
  // Refused naming the file, with `expect` in the message, the peak under
  // `per_byte` bytes a byte (tests/support/heap_limit.h).
  void expect_refused(const std::string& name, const std::string& bytes, double per_byte,
                      const std::string& expect,
                      const std::function<void(const std::filesystem::path&)>& read) {
    ssgd::testing::expect_refused_in_bounded_memory(dir_ / name, bytes, per_byte, expect, read);
  }
};

TEST_F(BoundedTraceReaders, TheTraceContainerRefusesZerosAtItsMagic) {
  const auto read = [](const std::filesystem::path& p) {
    auto reader = TraceReader::open(p);
    v1::Event e;
    while (reader.next(e)) {
    }
  };
  expect_refused("zeros.ssgdt", std::string(32 * kMiB, '\0'), 0.1, "wrong magic", read);
  expect_refused("zeros.ssgdt.gz", gzip_bytes(std::string(32 * kMiB, '\0')), 10, "wrong magic",
                 read);
}

TEST_F(BoundedTraceReaders, PackRefusesEmptyEventsAndNewlines) {
  const auto pack = [this](const std::filesystem::path& p) {
    pack_text_trace(p, dir_ / "o.ssgdt");
  };
  // protobuf's text parser holds the whole message: about 25 bytes of heap
  // per byte of "events {}" before the first event is checked.
  expect_refused("events.txt", repeated("", "events {}\n", 8 * kMiB), 40,
                 "the event has no payload", pack);
  expect_refused("zeros.txt", std::string(32 * kMiB, '\0'), 3, "control characters", pack);
}

TEST_F(BoundedTraceReaders, TheLayerCsvRefusesRunsOfCommasAndNewlines) {
  const std::string header = "layer,name,forward_ns,backward_ns,grad_bytes\n";
  const auto read = [](const std::filesystem::path& p) { read_layer_profile_csv(p); };
  // The file is read whole (read_text_file: about 3 bytes a byte, with its
  // stream's copy), then line by line.
  expect_refused("commas.csv", repeated(header, ",,,,\n", 32 * kMiB), 4, "commas.csv:2", read);
  expect_refused("newlines.csv", repeated(header, "\n", 32 * kMiB), 4, "newlines.csv", read);
  // One line of commas: split into at most 64 fields (it was one field a
  // comma, 16 bytes of memory a byte).
  expect_refused("onlycommas.csv", std::string(32 * kMiB, ','), 4, "onlycommas.csv", read);
}

TEST_F(BoundedTraceReaders, TheBcaffeLogRefusesNewlinesAndEmptyLists) {
  const auto read = [](const std::filesystem::path& p) { read_bcaffe_log(p); };
  expect_refused("newlines.log", std::string(32 * kMiB, '\n'), 4, "no bracketed lists", read);
  expect_refused("lists.log", repeated("", "[]\n", 32 * kMiB), 4, "lists.log", read);
}

TEST_F(BoundedTraceReaders, TheKinetoImportRefusesEmptyEventsDeepNestingAndZeros) {
  const auto import = [this](const std::filesystem::path& p) {
    import_pytorch(p, dir_ / "o.ssgdt");
  };
  expect_refused("objs.json", repeated("{\"traceEvents\":[", "{},", 32 * kMiB, "{}]}"), 1,
                 "traceEvents[0]", import);
  expect_refused("legacy.json", repeated("[", "{},", 32 * kMiB, "{}]"), 1, "[0]", import);
  expect_refused("deep.json", std::string(32 * kMiB, '['), 8, "deep.json", import);
  expect_refused("zeros.json.gz", gzip_bytes(std::string(64 * kMiB, '\0')), 40, "invalid JSON",
                 import);
}

TEST_F(BoundedTraceReaders, TheDatasetManifestRefusesDeepNestingAndEmptyRecords) {
  const auto read = [](const std::filesystem::path& p) {
    parse_manifest(ssgd::testing::read_file_bytes(p), p.string());
  };
  // The text is read into memory first (1 byte a byte), then scanned.
  expect_refused("deep.json", std::string(32 * kMiB, '['), 3, "nested deeper than 64", read);
  expect_refused("objs.json", repeated("[", "{},", 8 * kMiB, "{}]"), 48, "objs.json", read);
}

}  // namespace
}  // namespace ssgd::trace
