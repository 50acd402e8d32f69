// The PyTorch profile importer (traces/import/pytorch/pytorch_import.h) on CPU captures: the
// legacy profiler's files (torch <= 1.13 without Kineto) and Kineto files of
// torch 2.x on CPU, written by tests/support/torch_cpu_profile_writer.h,
// and real torch 1.13 captures of DDP over gloo (tests/data/pytorch/, made
// by the project's testbed). Golden dumps under tests/data/pytorch/ (the
// real files' gzipped), byte-identical output whatever the event order,
// the metadata marks, and a clear error for files with nothing usable.
//
// SSGD_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/gzip_stream.h"
#include "tests/support/test_files.h"
#include "tests/support/torch_cpu_profile_writer.h"
#include "traces/import/pytorch/kineto_mapping.h"
#include "traces/import/pytorch/pytorch_import.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

using ::testing::HasSubstr;
using testing::read_file_bytes;
using testing::TorchCpuProfileOptions;
using testing::write_file_bytes;
using testing::write_torch_cpu_profile;
using Writer = TorchCpuProfileOptions::Writer;

const std::filesystem::path kData = "tests/data/pytorch";

std::string gzip(const std::string& bytes) {
  std::ostringstream out;
  GzipWriter w(out);
  w.write(bytes);
  w.finish();
  return out.str();
}

std::string gunzip(const std::filesystem::path& path) {
  GzipReader r(path);
  std::string out;
  char buf[1 << 16];
  while (const std::size_t n = r.read(buf, sizeof buf)) out.append(buf, n);
  return out;
}

class PytorchImportTest : public testing::TempDirTest {
 protected:
  // Writes the generator's file with `o` and imports it; returns the .ssgdt path.
  std::filesystem::path import(const std::string& stem, TorchCpuProfileOptions o = {},
                               PytorchImportOptions io = {}) {
    std::filesystem::create_directories(dir_ / stem);
    const auto json = dir_ / stem / "rank1.json";
    write_torch_cpu_profile(json, o);
    const auto out = dir_ / stem / "rank1.ssgdt";
    summary_ = import_pytorch(json, out, io);
    return out;
  }

  static std::string dump(const std::filesystem::path& trace) {
    auto reader = TraceReader::open(trace);
    std::ostringstream s;
    dump_trace_text(reader, s);
    return s.str();
  }

  static std::string summary_text(const PytorchImportSummary& s) {
    std::ostringstream out;
    print_pytorch_import_summary(s, out);
    return out.str();
  }

  // Golden text, plain or (name ending in .gz) gzipped; a mismatch reports
  // the first line that differs.
  static void expect_golden(const std::string& actual, const std::string& golden_name) {
    const auto golden = kData / golden_name;
    const bool gz = golden.extension() == ".gz";
    if (std::getenv("SSGD_UPDATE_GOLDEN") != nullptr) {
      write_file_bytes(golden, gz ? gzip(actual) : actual);
      GTEST_SKIP() << "rewrote " << golden;
    }
    const std::string expected = gz ? gunzip(golden) : read_file_bytes(golden);
    if (actual == expected) return;
    std::istringstream a(actual), e(expected);
    std::string la, le;
    for (int line = 1;; ++line) {
      const bool ga = static_cast<bool>(std::getline(a, la));
      const bool ge = static_cast<bool>(std::getline(e, le));
      if (!ga && !ge) break;
      if (!ga || !ge || la != le) {
        ADD_FAILURE() << "golden " << golden << " differs at line " << line
                      << ":\n  expected: " << (ge ? le : "<end>")
                      << "\n  actual:   " << (ga ? la : "<end>");
        return;
      }
    }
  }

  // The InputError an import of `bytes` throws; checks nothing was written.
  InputError import_error(const std::string& bytes, const std::string& name = "bad.json") {
    const auto json = write_file(name, bytes);
    try {
      import_pytorch(json, dir_ / "bad.ssgdt");
    } catch (const InputError& e) {
      EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.ssgdt")) << "output left behind";
      for (const auto& f : std::filesystem::directory_iterator(dir_)) {
        EXPECT_THAT(f.path().filename().string(), ::testing::Not(HasSubstr("bad.ssgdt.")))
            << "temporary left behind";
      }
      EXPECT_EQ(e.where().file, json.string());
      return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError({}, "none");
  }

  PytorchImportSummary summary_;
};

// --- the legacy profiler -------------------------------------------------

TEST_F(PytorchImportTest, LegacyTrainingWithoutMarksMatchesGolden) {
  const auto out = import("plain");
  expect_golden(dump(out), "legacy_plain.dump.txt");
  const auto& s = summary_;
  EXPECT_EQ(s.format, ProfilerFormat::kLegacy);
  EXPECT_TRUE(s.cpu_compute);
  EXPECT_EQ(s.clock, "UNSPECIFIED");
  EXPECT_EQ(s.rank_source, "assumed");
  // Two iterations, each ending at its Optimizer.step.
  EXPECT_EQ(s.cpu.step_iterations, 2u);
  // 2 all-reduces per iteration and the first iteration's broadcast.
  EXPECT_EQ(s.cpu.collectives.collectives, 5u);
  EXPECT_EQ(s.cpu.collectives.linked, 5u);
  // fc1, act, fc2, the loss; DDP's aten::empty and aten::ones_like own no node.
  EXPECT_EQ(s.layer_source, KinetoLayerSource::kOps);
  EXPECT_EQ(s.cpu.layers.layers, 4u);
  EXPECT_EQ(s.cpu.layers.backward_ranges, 2u * 7u);
  EXPECT_EQ(s.cpu.layers.backward_unmatched, 0u);
  EXPECT_EQ(s.cpu.layers.accumulate_grad, 2u * 4u);
  // Outermost operators per iteration: zero_, empty, 2 linear, relu, loss,
  // ones_like, 11 evaluate_function, copy_bucket_to_grad, 4 add_.
  EXPECT_EQ(s.cpu.compute.kernels, 2u * 23u);
  EXPECT_THAT(s.warnings, ::testing::Contains(HasSubstr("no ssgd/clock_realtime_ns mark")));
  EXPECT_THAT(s.warnings, ::testing::Contains(HasSubstr("5 gloo collective(s) without sizes: no "
                                                        "recorded shapes")));
  EXPECT_THAT(s.warnings,
              ::testing::Contains(HasSubstr("2 iteration(s) end at each Optimizer.step")));
  const std::string text = summary_text(s);
  EXPECT_THAT(text, HasSubstr("format       legacy PyTorch profiler"));
  EXPECT_THAT(text, HasSubstr("iterations   2 from Optimizer.step ranges"));
  EXPECT_THAT(text,
              HasSubstr("layers       4 layers from ops (auto: no forward/backward annotations)"));
  EXPECT_THAT(
      text, HasSubstr("gloo         5 collectives, 5 c10d calls (FRAMEWORK API calls), 5 linked"));
}

TEST_F(PytorchImportTest, LegacyTrainingWithMarksAndMetadataMatchesGolden) {
  TorchCpuProfileOptions o;
  o.marks = true;
  o.metadata = true;
  o.iterations = 3;
  const auto out = import("marked", o);
  expect_golden(dump(out), "legacy_marked.dump.txt");
  const auto& s = summary_;
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.rank_source, "ssgd/rank mark");
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.clock, "REALTIME");
  EXPECT_EQ(s.layer_source, KinetoLayerSource::kMarks);
  EXPECT_EQ(s.layers.layers, 3u);
  EXPECT_EQ(s.mapping.iteration_marks, 3u);
  EXPECT_EQ(s.cpu.step_iterations, 0u);
  // The first iteration also broadcasts: 3 collectives, the mark lists 2.
  EXPECT_EQ(s.cpu.collectives.sized, 4u);
  ASSERT_EQ(s.cpu.collectives.size_mismatches.size(), 1u);
  EXPECT_THAT(s.cpu.collectives.size_mismatches[0], HasSubstr("iteration/0: 3 collective(s)"));
  EXPECT_TRUE(s.mapping.metadata.conflicts.empty());

  auto reader = TraceReader::open(out);
  const auto& m = reader.metadata();
  EXPECT_EQ(m.rank(), 1);
  EXPECT_EQ(m.world_size(), 2);
  EXPECT_EQ(m.hosts(0).hostname(), "host-a");
  EXPECT_EQ(m.hosts(0).clock().kind(), v1::ClockDomain::REALTIME);
  v1::Event e;
  std::map<std::string, int> grad_bytes;
  std::int64_t first_iteration_ns = -1;
  while (reader.next(e)) {
    if (!e.has_marker()) continue;
    const auto& name = e.marker().name();
    if (name.rfind("ssgd/grad_bytes/", 0) == 0) ++grad_bytes[name];
    if (name == "iteration/0") first_iteration_ns = e.marker().start_ns();
  }
  // Every one kept (each iteration repeats them): the walker takes the latest.
  ASSERT_EQ(grad_bytes.size(), 2u);
  EXPECT_GE(grad_bytes["ssgd/grad_bytes/fc1=1050624"], 2);
  EXPECT_EQ(grad_bytes["ssgd/grad_bytes/fc1=1050624"], grad_bytes["ssgd/grad_bytes/fc2=20520"]);
  // iteration/0 starts at 100 us of profile time; CLOCK_REALTIME at profile
  // time 0 is realtime_at_zero_ns.
  EXPECT_EQ(first_iteration_ns, o.realtime_at_zero_ns + 100'000);
}

// rank, world size and host name must agree; grad bytes may change (the
// helper learns which modules run during its first marked iteration), are
// all kept, and the walker takes the latest (walk/trace_walk.h).
TEST_F(PytorchImportTest, DisagreeingRepeatedMarksWarnAndTheFirstWins) {
  const auto json = dir_ / "t.json";
  testing::TorchCpuProfileWriter w({.marks = true, .metadata = true});
  w.training();
  w.range("ssgd/rank=3", 1, 1050, 1, true);
  w.range("ssgd/grad_bytes/fc1=5", 1, 1051, 1, true);
  w.write(json);
  const auto s = import_pytorch(json, dir_ / "t.ssgdt");
  EXPECT_EQ(s.rank, 1);
  EXPECT_THAT(s.warnings, ::testing::Contains(HasSubstr("ssgd/rank=3 (event ")));
  EXPECT_THAT(s.warnings, ::testing::Contains(HasSubstr("disagrees with the first ssgd/rank=1")));
  EXPECT_THAT(s.warnings, ::testing::Not(::testing::Contains(HasSubstr("ssgd/grad_bytes"))));
}

TEST_F(PytorchImportTest, RankFlagAndLayersOpsOverTheMarks) {
  TorchCpuProfileOptions o;
  o.marks = true;
  o.metadata = true;
  PytorchImportOptions io;
  io.rank = 0;
  io.layers = KinetoLayerSource::kOps;
  import("ops", o, io);
  EXPECT_EQ(summary_.rank, 0);
  EXPECT_EQ(summary_.rank_source, "--rank");
  EXPECT_EQ(summary_.layer_source, KinetoLayerSource::kOps);
  EXPECT_EQ(summary_.cpu.layers.layers, 4u);
  EXPECT_EQ(summary_.mapping.skipped.at("forward/backward annotation (--layers ops)"), 2u * 6u);
}

TEST_F(PytorchImportTest, TheCppWritersSpellingIsLegacyToo) {
  TorchCpuProfileOptions o;
  o.writer = Writer::kLegacyCpp;
  import("cpp", o);
  EXPECT_EQ(summary_.format, ProfilerFormat::kLegacy);
  EXPECT_EQ(summary_.cpu.layers.layers, 4u);
  EXPECT_EQ(summary_.cpu.collectives.collectives, 5u);
}

TEST_F(PytorchImportTest, LegacyOutputIsTheSameWhateverTheOrderCompressionAndSpills) {
  const std::string reference = read_file_bytes(import("ref"));
  TorchCpuProfileOptions shuffled;
  shuffled.shuffle = true;
  EXPECT_EQ(read_file_bytes(import("shuffled", shuffled)), reference);

  write_torch_cpu_profile(dir_ / "plain.json");
  std::filesystem::create_directories(dir_ / "gz");
  write_file_bytes(dir_ / "gz" / "rank1.json", gzip(read_file_bytes(dir_ / "plain.json")));
  import_pytorch(dir_ / "gz" / "rank1.json", dir_ / "gz" / "rank1.ssgdt");
  EXPECT_EQ(read_file_bytes(dir_ / "gz" / "rank1.ssgdt"), reference);

  PytorchImportOptions tiny;
  tiny.sort_run_bytes = 2000;
  import("spilled", shuffled, tiny);
  EXPECT_GT(summary_.cpu.sort_runs, 1u);
  EXPECT_EQ(read_file_bytes(dir_ / "spilled" / "rank1.ssgdt"), reference);
}

// export_chrome_trace with use_cuda: kernels under "CUDA functions" (tid =
// the device) and flow pairs; a remote event's tid is a string.
TEST_F(PytorchImportTest, LegacyCudaKernelsMakeItAGpuTrace) {
  write_file_bytes(
      dir_ / "cuda.json",
      R"([{"name": "ProfilerStep#3", "ph": "X", "ts": 0, "dur": 100, "tid": 1, "pid": "CPU functions", "args": {}}, )"
      R"({"name": "aten::mm", "ph": "X", "ts": 10, "dur": 5, "tid": 1, "pid": "CPU functions", "args": {}}, )"
      R"({"name": "aten::mm", "ph": "s", "ts": 10, "tid": 1, "pid": "CPU functions", "id": 0, "cat": "cpu_to_cuda", "args": {}}, )"
      R"({"name": "volta_sgemm", "ph": "f", "ts": 20, "tid": 1, "pid": "CUDA functions", "id": 0, "cat": "cpu_to_cuda", "args": {}}, )"
      R"({"name": "volta_sgemm", "ph": "X", "ts": 20, "dur": 30, "tid": 1, "pid": "CUDA functions", "args": {}}, )"
      R"({"name": "aten::add", "ph": "X", "ts": 60, "dur": 5, "tid": " node_id:1, thread_id:2 ", "pid": "CPU functions", "args": {}}])");
  const auto s = import_pytorch(dir_ / "cuda.json", dir_ / "cuda.ssgdt");
  EXPECT_EQ(s.format, ProfilerFormat::kLegacy);
  EXPECT_FALSE(s.cpu_compute);
  EXPECT_EQ(s.mapping.kernels, 1u);
  EXPECT_EQ(s.mapping.iteration_marks, 1u);
  EXPECT_EQ(s.mapping.ignored_fields.at("legacy event tid"), 1u);
  auto reader = TraceReader::open(dir_ / "cuda.ssgdt");
  v1::Event e;
  int kernels = 0;
  while (reader.next(e)) {
    if (!e.has_kernel()) continue;
    ++kernels;
    EXPECT_EQ(e.kernel().name(), "volta_sgemm");
    EXPECT_EQ(e.kernel().device(), 1);
    EXPECT_EQ(e.kernel().start_ns(), 20'000);
  }
  EXPECT_EQ(kernels, 1);
}

// --- Kineto on CPU (torch 2.x) -------------------------------------------

TEST_F(PytorchImportTest, KinetoCpuTrainingMatchesGolden) {
  TorchCpuProfileOptions o;
  o.writer = Writer::kKineto;
  const auto out = import("kineto", o);
  expect_golden(dump(out), "kineto_cpu.dump.txt");
  const auto& s = summary_;
  EXPECT_EQ(s.format, ProfilerFormat::kKineto);
  EXPECT_EQ(s.rank_source, "distributedInfo.rank");
  EXPECT_TRUE(s.cpu_compute);
  EXPECT_EQ(s.cpu.compute.kernels, 2u * 23u);
  EXPECT_EQ(s.mapping.skipped.count("cat cpu_op (not a mark)"), 0u);  // they became kernels
  EXPECT_EQ(s.cpu.step_iterations, 2u);
  EXPECT_EQ(s.cpu.collectives.collectives, 5u);
  EXPECT_EQ(s.cpu.collectives.linked, 5u);
  // Layers from sequence numbers, per iteration of Optimizer.step.
  EXPECT_EQ(s.layer_source, KinetoLayerSource::kOps);
  EXPECT_EQ(s.layers.layers, 4u);
  EXPECT_EQ(s.layers.backward_ranges, 2u * 7u);
  EXPECT_EQ(s.layers.backward_unmatched, 0u);
}

TEST_F(PytorchImportTest, KinetoCpuWithProfilerStepsAndMarks) {
  TorchCpuProfileOptions o;
  o.writer = Writer::kKineto;
  o.profiler_steps = true;
  o.marks = true;
  o.metadata = true;
  import("steps", o);
  const auto& s = summary_;
  EXPECT_EQ(s.cpu.step_iterations, 0u);
  EXPECT_EQ(s.mapping.iteration_marks, 4u);  // ProfilerStep#N and iteration/N
  EXPECT_EQ(s.cpu.iterations, 2u);           // one inside the other: the same
  EXPECT_EQ(s.layer_source, KinetoLayerSource::kMarks);
  EXPECT_EQ(s.clock, "REALTIME");
  EXPECT_EQ(s.rank_source, "distributedInfo.rank");
  EXPECT_EQ(s.mapping.metadata.grad_bytes.size(), 2u);
}

// torch 2.x with record_shapes=True: gloo's ranges list their tensors.
TEST_F(PytorchImportTest, KinetoCpuRecordedShapesSizeTheCollectives) {
  TorchCpuProfileOptions o;
  o.writer = Writer::kKineto;
  o.record_shapes = true;
  const auto out = import("shapes", o);
  EXPECT_EQ(summary_.cpu.collectives.sized_from_shapes, 5u);
  std::vector<std::int64_t> sizes;
  auto reader = TraceReader::open(out);
  v1::Event e;
  while (reader.next(e)) {
    if (!e.has_collective()) continue;
    sizes.push_back(e.collective().size_bytes());
    EXPECT_EQ(e.collective().datatype(), "float32");
    EXPECT_EQ(e.collective().count() * 4, e.collective().size_bytes());
  }
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{4000, 20520, 1050624, 20520, 1050624}));
  EXPECT_THAT(summary_text(summary_), HasSubstr("sizes: 5 from recorded shapes"));
}

TEST_F(PytorchImportTest, KinetoCpuOutputIsTheSameWhateverTheOrder) {
  TorchCpuProfileOptions o;
  o.writer = Writer::kKineto;
  const std::string reference = read_file_bytes(import("ref", o));
  o.shuffle = true;
  EXPECT_EQ(read_file_bytes(import("shuffled", o)), reference);
}

// --- real captures (torch 1.13, DDP over gloo, 2 ranks) -------------------

TEST_F(PytorchImportTest, RealCapturesWithoutMarksMatchGolden) {
  for (const std::string rank : {"0", "1"}) {
    const auto out = dir_ / ("rank" + rank + ".ssgdt");
    const auto s = import_pytorch(kData / ("pilot_rank" + rank + ".json.gz"), out);
    expect_golden(dump(out), "pilot_rank" + rank + ".dump.txt.gz");
    EXPECT_EQ(s.format, ProfilerFormat::kLegacy);
    EXPECT_GT(s.events_read, 2000u);
    EXPECT_EQ(s.cpu.step_iterations, 6u);
    EXPECT_EQ(s.cpu.collectives.collectives, 23u);  // 21 all-reduces, 2 broadcasts
    EXPECT_EQ(s.cpu.collectives.linked, 23u);
    EXPECT_EQ(s.cpu.layers.layers, 10u);  // 5 linear, 4 relu, the loss
    EXPECT_EQ(s.cpu.layers.backward_unmatched, 0u);
  }
}

TEST_F(PytorchImportTest, RealMarkedCaptureMatchesGoldenAndOpsAgreeWithMarks) {
  const auto out = dir_ / "marked.ssgdt";
  const auto s = import_pytorch(kData / "marked_mlp_on_rank0.json.gz", out);
  expect_golden(dump(out), "marked_mlp_on_rank0.dump.txt.gz");
  EXPECT_EQ(s.layer_source, KinetoLayerSource::kMarks);
  EXPECT_EQ(s.layers.layers, 17u);
  EXPECT_EQ(s.clock, "REALTIME");
  EXPECT_EQ(s.rank_source, "ssgd/rank mark");
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.cpu.collectives.collectives, 32u);
  EXPECT_EQ(s.cpu.collectives.sized, 32u);
  EXPECT_TRUE(s.mapping.metadata.conflicts.empty());

  PytorchImportOptions ops;
  ops.layers = KinetoLayerSource::kOps;
  const auto o = import_pytorch(kData / "marked_mlp_on_rank0.json.gz", dir_ / "ops.ssgdt", ops);
  // The 17 marked modules (8 linear + 8 ReLU + head) and the loss.
  EXPECT_EQ(o.cpu.layers.layers, 18u);
  EXPECT_EQ(o.cpu.layers.backward_unmatched, 0u);
}

// --- nothing usable is an error -------------------------------------------

TEST_F(PytorchImportTest, EmptyTraceEventsIsAnError) {
  const InputError e = import_error(R"({"traceEvents": []})");
  EXPECT_THAT(e.what(), HasSubstr("nothing to import: traceEvents holds no events"));
}

TEST_F(PytorchImportTest, EmptyArrayIsAnError) {
  const InputError e = import_error("[]");
  EXPECT_THAT(e.what(), HasSubstr("nothing to import: the JSON array holds no events"));
}

TEST_F(PytorchImportTest, AnArrayOfNeitherShapeIsAnError) {
  const InputError e = import_error(
      R"([{"name": "x", "ph": "X", "ts": 1, "dur": 2, "pid": 7, "tid": 1}, {"name": "y", "ph": "i", "ts": 3}])");
  EXPECT_THAT(e.what(), HasSubstr("not a PyTorch profiler trace: none of the 2 events of its JSON "
                                  "array is a complete event"));
}

TEST_F(PytorchImportTest, GzipOfWhitespaceIsAnError) {
  const InputError e = import_error(gzip("  \n\t\n  "), "blank.json.gz");
  EXPECT_THAT(e.what(), HasSubstr("no JSON value: the file is empty or holds only whitespace "
                                  "(7 bytes uncompressed)"));
}

TEST_F(PytorchImportTest, OnlyUnknownEventsIsAnError) {
  const InputError e = import_error(
      R"({"traceEvents": [{"ph": "X", "cat": "strange", "name": "x", "ts": 1, "dur": 1},)"
      R"( {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 1}]})");
  EXPECT_THAT(e.what(), HasSubstr("nothing to import from this Kineto trace of 2 events: no "
                                  "iteration"));
  EXPECT_THAT(e.what(), HasSubstr("no layer"));
  EXPECT_THAT(e.what(), HasSubstr("no collective"));
}

TEST_F(PytorchImportTest, LegacyFileOfOperatorsOnlyIsAnError) {
  const InputError e = import_error(
      R"([{"name": "aten::add", "ph": "X", "ts": 1, "dur": 2, "tid": 1, "pid": "CPU functions", "args": {}}])");
  EXPECT_THAT(e.what(), HasSubstr("nothing to import from this legacy profiler trace of 1 events"));
}

TEST_F(PytorchImportTest, MalformedMetadataMarkNamesTheEventAndTheMark) {
  const InputError e = import_error(
      R"([{"name": "iteration/0", "ph": "X", "ts": 1, "dur": 20, "tid": 1, "pid": "CPU functions", "args": {}},)"
      R"( {"name": "ssgd/world_size=two", "ph": "X", "ts": 2, "dur": 1, "tid": 1, "pid": "CPU functions", "args": {}}])");
  EXPECT_EQ(e.where().record, 1);
  EXPECT_EQ(e.where().field, "traceEvents[1].name");
  EXPECT_THAT(e.what(), HasSubstr("metadata mark 'ssgd/world_size=two': world size 'two' is not a "
                                  "non-negative integer"));
}

// --- per-op marks: collectives of several process groups ------------------

// A legacy profile (torch 1.13, export_chrome_trace) of rank 1 of 4 running
// HSDP by hand over gloo: all-gathers on its shard group of 2 (gloo's
// worker thread 2) and all-reduces on its replica group of 2 (thread 3),
// which interleave one way in iteration 0 and another in iteration 1, and a
// broadcast on the world in iteration 0. Each iteration starts with
// `marks` (ssgd/ and the rest of the name).
std::string hsdp_legacy_json(const std::vector<std::string>& marks) {
  std::vector<std::string> events;
  auto range = [&](const std::string& name, int tid, std::int64_t ts, std::int64_t dur) {
    events.push_back("{\"name\": \"" + name + "\", \"ph\": \"X\", \"ts\": " + std::to_string(ts) +
                     ", \"dur\": " + std::to_string(dur) + ", \"tid\": " + std::to_string(tid) +
                     ", \"pid\": \"CPU functions\", \"args\": {}}");
  };
  auto collective = [&](const char* call, const char* run, int tid, std::int64_t ts) {
    range(call, 1, ts, 2);
    range(run, tid, ts + 3, 40);
  };
  auto all_gather = [&](std::int64_t ts) {
    collective("c10d::allgather_", "gloo:all_gather", 2, ts);
  };
  auto all_reduce = [&](std::int64_t ts) {
    collective("c10d::allreduce_", "gloo:all_reduce", 3, ts);
  };
  for (int i = 0; i < 2; ++i) {
    const std::int64_t S = 1000 * i;
    range("iteration/" + std::to_string(i), 1, S, 1000);
    for (std::size_t k = 0; k < marks.size(); ++k) {
      range("ssgd/" + marks[k], 1, S + 1 + static_cast<std::int64_t>(k), 1);
    }
    if (i == 0) {  // AG AG AR AR, then a broadcast
      all_gather(S + 100);
      all_gather(S + 200);
      all_reduce(S + 300);
      all_reduce(S + 400);
      collective("c10d::broadcast_", "gloo:broadcast", 2, S + 500);
    } else {  // AG AR AG AR
      all_gather(S + 100);
      all_reduce(S + 200);
      all_gather(S + 300);
      all_reduce(S + 400);
    }
  }
  std::string out = "[";
  for (std::size_t i = 0; i < events.size(); ++i)
    out += events[i] + (i + 1 < events.size() ? ", " : "");
  return out + "]";
}

const std::vector<std::string> kHsdpMarks = {"rank=1",
                                             "world_size=4",
                                             "collective_bytes=7",
                                             "collective_bytes/all_gather=100,200",
                                             "collective_bytes/all_reduce=50,60",
                                             "collective_ranks/all_gather=2",
                                             "collective_ranks/all_reduce=2"};

std::vector<v1::Collective> collectives_of(const std::filesystem::path& trace) {
  auto reader = TraceReader::open(trace);
  std::vector<v1::Collective> out;
  v1::Event e;
  while (reader.next(e)) {
    if (e.has_collective()) out.push_back(e.collective());
  }
  std::sort(out.begin(), out.end(), [](const v1::Collective& a, const v1::Collective& b) {
    return a.start_ns() < b.start_ns();
  });
  return out;
}

TEST_F(PytorchImportTest, PerOpMarksSizeEachOpInItsOwnOrderWhateverTheInterleaving) {
  const auto json = write_file("hsdp.json", hsdp_legacy_json(kHsdpMarks));
  const auto out = dir_ / "hsdp.ssgdt";
  const PytorchImportSummary s = import_pytorch(json, out);
  const auto c = collectives_of(out);
  ASSERT_EQ(c.size(), 9u);
  std::vector<std::int64_t> sizes;
  std::vector<v1::Collective::Op> ops;
  for (const auto& x : c) {
    sizes.push_back(x.size_bytes());
    ops.push_back(x.op());
  }
  const auto AG = v1::Collective::ALL_GATHER, AR = v1::Collective::ALL_REDUCE,
             B = v1::Collective::BROADCAST;
  EXPECT_EQ(ops, (std::vector<v1::Collective::Op>{AG, AG, AR, AR, B, AG, AR, AG, AR}));
  // Iteration 0: AG AG AR AR B; iteration 1: AG AR AG AR. The broadcast has
  // no per-op mark: the plain list sizes it.
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{100, 200, 50, 60, 7, 100, 50, 200, 60}));
  EXPECT_EQ(s.cpu.collectives.sized, 9u);
  EXPECT_EQ(s.cpu.collectives.sized_per_op.at("all_gather"), 4u);
  EXPECT_EQ(s.cpu.collectives.sized_per_op.at("all_reduce"), 4u);
  EXPECT_TRUE(s.cpu.collectives.size_mismatches.empty())
      << ::testing::PrintToString(s.cpu.collectives.size_mismatches);
  // Each call paired with its own op's execution: the two groups' queues.
  EXPECT_EQ(s.cpu.collectives.linked, 9u);
  EXPECT_EQ(s.cpu.collectives.kind_mismatches, 0u);
  const std::string text = summary_text(s);
  EXPECT_THAT(text, HasSubstr("9 from ssgd/collective_bytes marks (of them by op, "
                              "ssgd/collective_bytes/<op>: 4 all_gather, 4 all_reduce)"));
  EXPECT_THAT(text, HasSubstr("collective_bytes (2 marks), collective_bytes/<op> (4 marks), "
                              "collective_ranks/<op> (4 marks)"));
}

TEST_F(PytorchImportTest, PerOpRanksMarksGiveTheGroupAndACommunicatorOfItsOwn) {
  const auto json = write_file("hsdp.json", hsdp_legacy_json(kHsdpMarks));
  const auto out = dir_ / "hsdp.ssgdt";
  const PytorchImportSummary s = import_pytorch(json, out);
  std::map<v1::Collective::Op, std::set<std::uint64_t>> communicators;
  std::map<v1::Collective::Op, std::vector<std::uint64_t>> sequences;
  for (const auto& x : collectives_of(out)) {
    EXPECT_EQ(x.nranks(), x.op() == v1::Collective::BROADCAST ? 4 : 2) << x.DebugString();
    EXPECT_EQ(x.rank(), 1) << x.DebugString();  // 1 of the world; 1 % 2 in a group of 2
    communicators[x.op()].insert(x.communicator_id());
    sequences[x.op()].push_back(x.sequence_number());
  }
  ASSERT_EQ(communicators.size(), 3u);
  for (const auto& [op, ids] : communicators) EXPECT_EQ(ids.size(), 1u) << op;
  std::set<std::uint64_t> all;
  for (const auto& [op, ids] : communicators) all.insert(*ids.begin());
  EXPECT_EQ(all.size(), 3u);  // world, the all-gathers', the all-reduces'
  EXPECT_TRUE(all.count(kineto_communicator_id("world")));
  EXPECT_EQ(sequences[v1::Collective::ALL_REDUCE], (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(sequences[v1::Collective::ALL_GATHER], (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_THAT(summary_text(s), HasSubstr("all_reduce over 2 ranks (ssgd/collective_ranks)"));
  // A count alone is taken as consecutive ranks, and said once per op.
  EXPECT_THAT(s.warnings, ::testing::Contains(HasSubstr(
                              "metadata mark 'ssgd/collective_ranks/all_reduce=2' gives its "
                              "group's size only: its ranks are taken as consecutive (this rank 1 "
                              "of 2")));
}

// HSDP's groups by their members (rank 1 of 4, shard groups {0,1} and
// {2,3}, replicas {0,2} and {1,3}): rank 1 is 1 of its shard group and 0 of
// its replicas, and each group's communicator is the one its other member
// names too.
TEST_F(PytorchImportTest, PerOpRanksMarksByTheirMembersGiveEachRanksPlace) {
  std::vector<std::string> marks = kHsdpMarks;
  marks[5] = "collective_ranks/all_gather=0,1";
  marks[6] = "collective_ranks/all_reduce=1,3";
  const auto out = dir_ / "hsdp.ssgdt";
  const PytorchImportSummary s =
      import_pytorch(write_file("hsdp.json", hsdp_legacy_json(marks)), out);
  int gathers = 0, reduces = 0;
  for (const auto& x : collectives_of(out)) {
    if (x.op() == v1::Collective::ALL_GATHER) {
      ++gathers;
      EXPECT_EQ(x.rank(), 1);
      EXPECT_EQ(x.communicator_id(), kineto_communicator_id("ranks/all_gather/0,1"));
    } else if (x.op() == v1::Collective::ALL_REDUCE) {
      ++reduces;
      EXPECT_EQ(x.rank(), 0);  // rank mod 2 would say 1
      EXPECT_EQ(x.nranks(), 2);
      EXPECT_EQ(x.communicator_id(), kineto_communicator_id("ranks/all_reduce/1,3"));
    }
  }
  EXPECT_EQ(gathers, 4);
  EXPECT_EQ(reduces, 4);
  for (const auto& w : s.warnings)
    EXPECT_THAT(w, ::testing::Not(HasSubstr("taken as consecutive")));
}

TEST_F(PytorchImportTest, PerOpMarksThatDisagreeWithTheCollectivesWarnNamingTheOp) {
  std::vector<std::string> marks = kHsdpMarks;
  marks[4] = "collective_bytes/all_reduce=50";  // two all-reduces an iteration
  const auto json = write_file("hsdp.json", hsdp_legacy_json(marks));
  const PytorchImportSummary s = import_pytorch(json, dir_ / "hsdp.ssgdt");
  EXPECT_THAT(s.warnings, ::testing::Contains(
                              "collective sizes left 0 for iteration/0: 2 all_reduce "
                              "collective(s), its ssgd/collective_bytes/all_reduce mark lists 1"));
  EXPECT_EQ(s.cpu.collectives.sized, 5u);  // the all-gathers and the broadcast
}

TEST_F(PytorchImportTest, BadPerOpMarksAreInputErrorsNamingTheMark) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"collective_bytes/allreduce=1",
       "collective_bytes op 'allreduce' is not one of all_reduce, all_gather, reduce, broadcast, "
       "reduce_scatter"},
      {"collective_bytes/all_gather=100,x", "collective size 'x' is not a non-negative integer"},
      {"collective_ranks/all_reduce=0", "ranks 0"},
      {"collective_ranks/all_reduce=-2", "ranks '-2' is not a non-negative integer"},
      {"collective_ranks/all_reduce=two", "ranks 'two' is not a non-negative integer"},
      {"collective_ranks/gather=2", "collective_ranks op 'gather' is not one of"},
      {"collective_ranks=2", "collective_ranks names no op"},
      {"collective_ranks/all_reduce=8", "8 ranks, above the world size 4"},
      {"collective_ranks/all_reduce=1,1", "rank 1 is listed twice"},
      {"collective_ranks/all_reduce=1,x", "rank 'x' is not a non-negative integer"},
      {"collective_ranks/all_reduce=1,5", "rank 5 is not below the world size 4"},
      {"collective_ranks/all_reduce=0,2", "the group does not hold this file's rank 1"},
  };
  for (const auto& [mark, problem] : cases) {
    const InputError e =
        import_error(hsdp_legacy_json({"rank=1", "world_size=4", mark}), "bad.json");
    EXPECT_THAT(e.what(), HasSubstr("metadata mark 'ssgd/" + mark + "': " + problem)) << mark;
    EXPECT_EQ(e.where().field, "traceEvents[" + std::to_string(*e.where().record) + "].name")
        << mark;
  }
}

}  // namespace
}  // namespace ssgd::trace
