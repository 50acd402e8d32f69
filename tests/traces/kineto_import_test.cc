// The Kineto importer (traces/import/pytorch/pytorch_import.h) on Kineto JSON files written
// by tests/support/kineto_json_writer.h: golden text dumps under
// tests/data/kineto/, byte-identical output across event order, metadata
// position, gzip and spilled sorting, clear errors on truncated and
// malformed files, and the layer times the generator put in, read back by
// walk::profile_from_trace.
//
// SSGD_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.

#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "common/error.h"
#include "common/gzip_stream.h"
#include "tests/support/kineto_json_writer.h"
#include "tests/support/test_files.h"
#include "traces/import/pytorch/kineto_json_reader.h"
#include "traces/import/pytorch/pytorch_import.h"
#include "traces/trace_dump.h"
#include "walk/trace_profile.h"

namespace ssgd::trace {
namespace {

using ::testing::HasSubstr;
using testing::KinetoJsonOptions;
using testing::read_file_bytes;
using testing::write_file_bytes;
using testing::write_plain_training;
using testing::write_two_step_training;

class KinetoImportTest : public testing::TempDirTest {
 protected:
  // Writes the generator's file with `o` and imports it; returns the .ssgdt path.
  std::filesystem::path import(const std::string& stem, KinetoJsonOptions o = {},
                               PytorchImportOptions io = {}, bool plain = false) {
    // The same file name in each folder: the provenance names it.
    std::filesystem::create_directories(dir_ / stem);
    const auto json = dir_ / stem / "rank1.json";
    if (plain) {
      write_plain_training(json, o);
    } else {
      write_two_step_training(json, o);
    }
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

  static void expect_golden(const std::string& actual, const std::string& golden_name) {
    const auto golden = std::filesystem::path("tests/data/kineto") / golden_name;
    if (std::getenv("SSGD_UPDATE_GOLDEN") != nullptr) {
      write_file_bytes(golden, actual);
      GTEST_SKIP() << "rewrote " << golden;
    }
    EXPECT_EQ(actual, read_file_bytes(golden)) << "golden " << golden << " differs";
  }

  // The InputError an import of `text` throws.
  InputError import_error(const std::string& text, const std::string& name = "bad.json") {
    const auto json = write_file(name, text);
    try {
      import_pytorch(json, dir_ / "bad.ssgdt");
    } catch (const InputError& e) {
      EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.ssgdt")) << "half-written output left";
      return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError({}, "none");
  }

  // The default-settings trace of tests/support/kineto_json_writer.h.
  std::filesystem::path import_plain(const std::string& stem, KinetoJsonOptions o = {},
                                     PytorchImportOptions io = {}) {
    return import(stem, o, io, true);
  }

  PytorchImportSummary summary_;
};

std::string gzip(const std::string& bytes) {
  std::ostringstream out;
  GzipWriter w(out);
  w.write(bytes);
  w.finish();
  return out.str();
}

TEST(KinetoTime, MicrosecondTextBecomesExactNanoseconds) {
  EXPECT_EQ(parse_microseconds_ns("12.345"), 12345);
  EXPECT_EQ(parse_microseconds_ns("0.001"), 1);
  EXPECT_EQ(parse_microseconds_ns("7"), 7000);
  EXPECT_EQ(parse_microseconds_ns("-1.5"), -1500);
  EXPECT_EQ(parse_microseconds_ns("1e3"), 1'000'000);
  EXPECT_EQ(parse_microseconds_ns("2.5E-3"), 2);
  EXPECT_EQ(parse_microseconds_ns("1.2349"), 1234);  // below a nanosecond: dropped
  // 19 significant digits: exact, where a double would round.
  EXPECT_EQ(parse_microseconds_ns("1700000000000000.123"), 1'700'000'000'000'000'123);
  EXPECT_EQ(parse_microseconds_ns("abc"), std::nullopt);
  EXPECT_EQ(parse_microseconds_ns("1.2.3"), std::nullopt);
  EXPECT_EQ(parse_microseconds_ns(""), std::nullopt);
  EXPECT_EQ(parse_microseconds_ns("99999999999999999999"), std::nullopt);
}

TEST(KinetoNcclName, OperationAlgorithmProtocolAndTypeFromTheKernelName) {
  auto n = parse_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(n.op, v1::Collective::ALL_REDUCE);
  EXPECT_EQ(n.algorithm, "RING");
  EXPECT_EQ(n.protocol, "LL");
  EXPECT_EQ(n.datatype, "float32");
  n = parse_nccl_kernel_name("ncclKernel_AllGather_RING_LL128_Sum_int8_t(ncclWorkElem)");
  EXPECT_EQ(n.op, v1::Collective::ALL_GATHER);
  EXPECT_EQ(n.protocol, "LL128");
  EXPECT_EQ(n.datatype, "int8");
  n = parse_nccl_kernel_name("ncclDevKernel_ReduceScatter_Sum_bf16_COLLNET_DIRECT_SIMPLE");
  EXPECT_EQ(n.op, v1::Collective::REDUCE_SCATTER);
  EXPECT_EQ(n.algorithm, "COLLNET_DIRECT");
  EXPECT_EQ(n.protocol, "SIMPLE");
  n = parse_nccl_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(n.op, v1::Collective::UNKNOWN);
  EXPECT_EQ(n.algorithm, "");
  EXPECT_TRUE(is_nccl_kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"));
  EXPECT_FALSE(is_nccl_kernel("void at::native::nccl_like_kernel"));
}

TEST(KinetoCommunicator, IdIsFnv1aOfTheGroupKey) {
  // FNV-1a 64 of the empty string is its offset basis.
  EXPECT_EQ(kineto_communicator_id(""), 14695981039346656037ull);
  EXPECT_EQ(kineto_communicator_id("pg:0"), kineto_communicator_id("pg:0"));
  EXPECT_NE(kineto_communicator_id("pg:0"), kineto_communicator_id("pg:1"));
}

TEST_F(KinetoImportTest, TwoStepsWithNcclKernelsMatchGolden) {
  const auto out = import("two_steps");
  expect_golden(dump(out), "two_steps.dump.txt");
  const auto& m = summary_.mapping;
  EXPECT_EQ(m.kernels, 10u);  // 4 layer kernels + 1 optimizer kernel, per step
  EXPECT_EQ(m.collectives, 4u);
  EXPECT_EQ(m.memcpys, 2u);
  EXPECT_EQ(m.memsets, 2u);
  EXPECT_EQ(m.api_calls, 18u);
  EXPECT_EQ(m.markers, 10u);  // ProfilerStep + 4 layer ranges, per step
  EXPECT_EQ(m.collectives_without_metadata, 0u);
  EXPECT_EQ(m.collectives_numbered, 0u);
  EXPECT_EQ(m.skipped.at("cat cpu_op (not a mark)"), 8u);  // aten::addmm, AddmmBackward0
  EXPECT_EQ(m.skipped.at("cat Trace"), 1u);
  EXPECT_EQ(m.skipped.at("ph M (not a complete event)"), 1u);
  EXPECT_EQ(m.skipped.at("ph s (not a complete event)"), 4u);
  EXPECT_EQ(summary_.rank, 1);
  EXPECT_EQ(summary_.rank_source, "distributedInfo.rank");
  EXPECT_EQ(summary_.world_size, 2);
  EXPECT_TRUE(summary_.warnings.empty()) << summary_.warnings.front();
}

TEST_F(KinetoImportTest, EventOrderDoesNotChangeTheOutput) {
  KinetoJsonOptions shuffled;
  shuffled.shuffle = true;
  EXPECT_EQ(read_file_bytes(import("ordered")), read_file_bytes(import("shuffled", shuffled)));
}

TEST_F(KinetoImportTest, MetadataAfterTraceEventsGivesTheSameTrace) {
  KinetoJsonOptions after;
  after.metadata_after_events = true;
  const auto a = read_file_bytes(import("before"));
  const auto b = read_file_bytes(import("after", after));
  EXPECT_EQ(summary_.rank, 1);
  EXPECT_EQ(a, b);
}

TEST_F(KinetoImportTest, NcclMetadataFromRecordParamCommsOnly) {
  KinetoJsonOptions old_style;
  old_style.nccl_meta_on_kernels = false;
  EXPECT_EQ(read_file_bytes(import("on_kernels")), read_file_bytes(import("param_comms", old_style)));
  EXPECT_EQ(summary_.mapping.collectives_without_metadata, 0u);
}

TEST_F(KinetoImportTest, GzipInputGivesTheSameTrace) {
  const auto plain = read_file_bytes(import("plain"));
  std::filesystem::create_directories(dir_ / "z");
  write_file_bytes(dir_ / "z" / "rank1.json", gzip(read_file_bytes(dir_ / "plain" / "rank1.json")));
  const auto s = import_pytorch(dir_ / "z" / "rank1.json", dir_ / "z" / "rank1.ssgdt");
  EXPECT_TRUE(s.compressed);  // recognised by its magic bytes, not its name
  EXPECT_EQ(s.json_bytes, read_file_bytes(dir_ / "plain" / "rank1.json").size());
  EXPECT_EQ(plain, read_file_bytes(dir_ / "z" / "rank1.ssgdt"));
}

TEST_F(KinetoImportTest, SpilledSortRunsGiveTheSameTrace) {
  PytorchImportOptions tiny;
  tiny.sort_run_bytes = 2048;
  KinetoJsonOptions shuffled;
  shuffled.shuffle = true;
  const auto in_memory = read_file_bytes(import("memory"));
  EXPECT_EQ(summary_.sort_runs, 0u);
  const auto spilled = read_file_bytes(import("spilled", shuffled, tiny));
  EXPECT_GT(summary_.sort_runs, 2u);
  EXPECT_EQ(in_memory, spilled);
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "spilled")) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".sort.")));
  }
}

// An output written through (a FIFO, a device, /dev/fd/N) has no folder of
// its own to spill beside: the runs go to the temporary folder.
TEST_F(KinetoImportTest, SortRunsOfAnOutputWrittenThroughSpillToTheTemporaryFolder) {
  PytorchImportOptions tiny;
  tiny.sort_run_bytes = 2048;
  const auto in_memory = read_file_bytes(import("memory"));
  const int fd = ::open((dir_ / "sink").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  summary_ = import_pytorch(dir_ / "memory" / "rank1.json", "/dev/fd/" + std::to_string(fd), tiny);
  ::close(fd);
  EXPECT_GT(summary_.sort_runs, 2u);
  EXPECT_EQ(read_file_bytes(dir_ / "sink"), in_memory);
}

TEST_F(KinetoImportTest, MissingOptionalFieldsMatchGolden) {
  KinetoJsonOptions sparse;
  sparse.drop_optional = true;
  sparse.with_distributed_info = false;
  const auto out = import("sparse", sparse);
  expect_golden(dump(out), "missing_optional.dump.txt");
  // Without Seq, the collectives of the one communicator are numbered by start.
  EXPECT_EQ(summary_.mapping.collectives_numbered, 4u);
  EXPECT_EQ(summary_.rank, 0);
  EXPECT_EQ(summary_.rank_source, "assumed");
  EXPECT_THAT(summary_.warnings, ::testing::Contains(HasSubstr("rank 0 assumed")));
}

TEST_F(KinetoImportTest, RankFlagOverridesDistributedInfo) {
  PytorchImportOptions io;
  io.rank = 0;  // the file says 1 of 2
  auto reader = TraceReader::open(import("override", {}, io));
  EXPECT_EQ(reader.metadata().rank(), 0);
  v1::Event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(e.rank(), 0);
}

// Values that are there but impossible are errors naming the field; none is
// guessed or wrapped (issue 15).
TEST_F(KinetoImportTest, ImpossibleRankWorldBaseAndSizesAreErrors) {
  auto text = [](KinetoJsonOptions o) {
    ssgd::testing::KinetoJsonWriter w(o);
    w.two_step_training();
    return w.json();
  };
  auto replaced = [](std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  InputError e = import_error(replaced(text({}), "\"rank\": 1,", "\"rank\": -3,"));
  EXPECT_EQ(e.where().field, "distributedInfo.rank");
  EXPECT_NE(std::string(e.what()).find("distributedInfo.rank -3 is not a rank of the world of 2"),
            std::string::npos)
      << e.what();

  KinetoJsonOptions huge;
  huge.world_size = 2147483647;
  e = import_error(text(huge));
  EXPECT_EQ(e.where().field, "distributedInfo.world_size");

  PytorchImportOptions io;
  io.rank = 5;
  const auto json = dir_ / "r.json";
  write_file_bytes(json, text({}));
  try {
    import_pytorch(json, dir_ / "r.ssgdt", io);
    ADD_FAILURE() << "--rank 5 of a world of 2 was accepted";
  } catch (const InputError& bad) {
    EXPECT_EQ(bad.where().file, "--rank");
    EXPECT_NE(std::string(bad.what()).find("rank 5 (from --rank) is not a rank of the world of 2"),
              std::string::npos);
  }

  e = import_error(replaced(text({}), "1700000000000000000", "18446744073709551615"));
  EXPECT_EQ(e.where().field, "baseTimeNanoseconds");
  EXPECT_NE(std::string(e.what()).find("18446744073709551615 is not a time"), std::string::npos);

  e = import_error(replaced(text({}), "\"In msg nelems\": 1024", "\"In msg nelems\": -1024"));
  EXPECT_NE(e.where().field.find("args.In msg nelems"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("'In msg nelems' -1024 is not a message size"),
            std::string::npos)
      << e.what();

  e = import_error(replaced(text({}), "\"bytes\": 4096", "\"bytes\": -4096"));
  EXPECT_NE(std::string(e.what()).find("field 'traceEvents[3] as memcpy.size_bytes': "
                                       "size_bytes -4096 is out of range"),
            std::string::npos)
      << e.what();
  EXPECT_TRUE(e.where().record.has_value());
}

// --layers marks keeps the importer's first rules: every nn.Module range is
// a forward mark, next to the annotations. auto keeps the annotations only.
TEST_F(KinetoImportTest, LayersMarksTurnsEveryModuleRangeIntoAForwardMark) {
  KinetoJsonOptions modules;
  modules.module_ranges = true;
  PytorchImportOptions marks;
  marks.layers = KinetoLayerSource::kMarks;
  auto reader = TraceReader::open(import("modules", modules, marks));
  std::vector<std::string> names;
  v1::Event e;
  while (reader.next(e)) {
    if (e.has_marker() && e.marker().domain() == "kineto:python_function") names.push_back(e.marker().name());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("forward/Linear_0", "forward/Linear_1",
                                            "forward/Linear_0", "forward/Linear_1"));
  EXPECT_EQ(summary_.layer_source, KinetoLayerSource::kMarks);
  EXPECT_EQ(summary_.layers.layers, 4u);  // l1, l2, Linear_0, Linear_1
  import("auto", modules);
  EXPECT_EQ(summary_.layer_source, KinetoLayerSource::kMarks);
  EXPECT_EQ(summary_.layer_source_reason, "the file has forward/backward annotations");
  EXPECT_EQ(summary_.mapping.markers, 10u);
  EXPECT_EQ(summary_.layers.layers, 2u);
}

// The annotated file gives the same bytes with --layers marks as with auto.
TEST_F(KinetoImportTest, LayersMarksOnAnAnnotatedFileIsTheSameAsAuto) {
  PytorchImportOptions marks;
  marks.layers = KinetoLayerSource::kMarks;
  EXPECT_EQ(read_file_bytes(import("auto")), read_file_bytes(import("marks", {}, marks)));
}

TEST_F(KinetoImportTest, TruncatedPlainFileIsAClearError) {
  write_two_step_training(dir_ / "full.json");
  const std::string full = read_file_bytes(dir_ / "full.json");
  const InputError e = import_error(full.substr(0, full.size() / 2), "cut.json");
  EXPECT_THAT(e.what(), HasSubstr("cut.json"));
  EXPECT_THAT(e.what(), HasSubstr("truncated"));
  EXPECT_THAT(e.what(), HasSubstr("stops at byte " + std::to_string(full.size() / 2)));
  EXPECT_THAT(e.what(), HasSubstr("inside event"));
  ASSERT_TRUE(e.where().record.has_value());
}

TEST_F(KinetoImportTest, TruncatedGzipFileIsAClearError) {
  write_two_step_training(dir_ / "full.json");
  const std::string z = gzip(read_file_bytes(dir_ / "full.json"));
  const InputError e = import_error(z.substr(0, z.size() * 2 / 3), "cut.json.gz");
  EXPECT_THAT(e.what(), HasSubstr("cut.json.gz"));
  EXPECT_THAT(e.what(), HasSubstr("truncated"));
  EXPECT_THAT(e.what(), HasSubstr("event"));
}

TEST_F(KinetoImportTest, EmptyFileSaysItHoldsNoJson) {
  const InputError e = import_error("");
  EXPECT_THAT(e.what(), HasSubstr("no JSON value: the file is empty or holds only whitespace (0 bytes)"));
}

TEST_F(KinetoImportTest, JsonSyntaxErrorNamesTheByteAndEvent) {
  const InputError e = import_error(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.000, "dur": 2.000},)"
      R"( {"ph": "X" "cat": "kernel"}]})");
  EXPECT_THAT(e.what(), HasSubstr("invalid JSON at byte"));
  EXPECT_THAT(e.what(), HasSubstr("inside event 1"));
  EXPECT_EQ(e.where().record, 1);
}

TEST_F(KinetoImportTest, DeepNestingNamesTheByteWhereItGoesTooDeep) {
  // '{"x":' and 4 spaces are bytes 0..8; the '[' at 9 opens level 2, so level
  // 65 opens at byte 9 + 63 = 72 (0-based).
  const std::string text = "{\"x\":    " + std::string(64, '[') + std::string(64, ']') + "}";
  const InputError e = import_error(text);
  EXPECT_THAT(e.what(), HasSubstr("bad.json: JSON nested deeper than 64 levels (at byte 72)"));
  // The same offset in a gzip file: bytes of the JSON text, not of the file.
  const InputError z = import_error(gzip(text), "bad.json.gz");
  EXPECT_THAT(z.what(), HasSubstr("JSON nested deeper than 64 levels (at byte 72)"));
}

TEST_F(KinetoImportTest, KernelWithoutTsNamesEventAndField) {
  const InputError e = import_error(
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1.000, "dur": 2.000},)"
      R"( {"ph": "X", "cat": "kernel", "name": "gemm", "dur": 2.000}]})");
  EXPECT_EQ(e.where().record, 1);
  EXPECT_EQ(e.where().field, "traceEvents[1].ts");
  EXPECT_THAT(e.what(), HasSubstr("kernel 'gemm': has no 'ts'"));
}

TEST_F(KinetoImportTest, WrongTypeOfRequiredFieldIsAnError) {
  const InputError e = import_error(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": "12.5", "dur": 2.000}]})");
  EXPECT_EQ(e.where().field, "traceEvents[0].ts");
  EXPECT_THAT(e.what(), HasSubstr("not a number of microseconds (it is the string \"12.5\")"));
  const InputError d = import_error(
      R"j({"traceEvents": [{"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 1, "dur": -2}]})j");
  EXPECT_EQ(d.where().field, "traceEvents[0].dur");
  const InputError n = import_error(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": 7, "ts": 1, "dur": 2}]})");
  EXPECT_EQ(n.where().field, "traceEvents[0].name");
}

TEST_F(KinetoImportTest, WrongTypeOfOptionalArgIsIgnoredAndCounted) {
  write_file_bytes(dir_ / "t.json",
                   R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,)"
                   R"( "ts": 1.5, "dur": 2, "args": {"stream": "seven", "grid": [1, 2], "correlation": 9}},)"
                   R"( {"ph": "X", "cat": "strange_cat", "name": "x", "ts": 1, "dur": 1},)"
                   R"( {"ph": "X", "cat": "strange_cat", "name": "y", "ts": 1, "dur": 1},)"
                   // An iteration, so that the file is worth importing.
                   R"( {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 1.5, "dur": 10}]})");
  const auto s = import_pytorch(dir_ / "t.json", dir_ / "t.ssgdt");
  EXPECT_EQ(s.mapping.ignored_fields.at("kernel args.stream"), 1u);
  EXPECT_EQ(s.mapping.ignored_fields.at("kernel args.grid"), 1u);
  EXPECT_EQ(s.mapping.skipped.at("cat strange_cat"), 2u);
  auto reader = TraceReader::open(dir_ / "t.ssgdt");
  v1::Event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(e.kernel().stream(), 7u);  // from tid
  EXPECT_EQ(e.kernel().correlation_id(), 9u);
  EXPECT_EQ(e.kernel().start_ns(), 1500);  // no baseTimeNanoseconds: ts is absolute
  EXPECT_EQ(e.kernel().end_ns(), 3500);
}

TEST_F(KinetoImportTest, NotATraceIsAnError) {
  const InputError e = import_error(R"({"schemaVersion": 1})");
  EXPECT_THAT(e.what(), HasSubstr("no traceEvents"));
}

// The layer times the generator put in come back out of the DAG builder's
// profile of the imported trace (step 6 only: the first is warm-up), each
// kernel with the idle time before it that the host caused (the device had
// run dry before its launch; walk/trace_walk.h), and the memset as compute.
TEST_F(KinetoImportTest, ProfileFromImportedTraceHasTheGeneratedLayerTimes) {
  auto reader = TraceReader::open(import("profile"));
  const auto r = walk::profile_from_trace(reader, "profile.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  const auto& l1 = r.profile.layers[0];
  const auto& l2 = r.profile.layers[1];
  EXPECT_EQ(l1.name, "l1");
  EXPECT_EQ(l2.name, "l2");
  // The memset (50 ns, 100 ns after the copy: launched in time, so its
  // short gap is its own) and l1_fwd (3000 ns, launched 150 ns after the
  // memset ended, started 1050 ns after): 150 + 4050.
  EXPECT_EQ(l1.forward.ns(), 4200);
  EXPECT_EQ(l2.forward.ns(), 11000);  // 4000, launched 7000 ns after l1_fwd ended
  // 5000, launched 4000 ns after l2_bwd ended, while l2's all-reduce ran on
  // its own stream: the compute stream waited for the host, and that is l1's.
  EXPECT_EQ(l1.backward.ns(), 9000);
  EXPECT_EQ(l2.backward.ns(), 12000);  // 6000, launched 6000 ns after l2_fwd ended
  ASSERT_TRUE(l1.comm.has_value());
  EXPECT_EQ(l1.comm->ns(), 3000);
  EXPECT_EQ(l2.comm->ns(), 7000);
  EXPECT_EQ(l1.grad_bytes, 2048);
  EXPECT_EQ(l2.grad_bytes, 4096);
  EXPECT_EQ(r.iterations_seen, 2);
  EXPECT_EQ(r.collectives, 2);
  EXPECT_EQ(r.kernels_outside_ranges, 2);  // the memset, and the optimizer kernel: the update
  EXPECT_EQ(r.kernels_update, 1);
}

// ---- Layers derived from CPU operators (traces/import/pytorch/kineto_layers.h) ----

struct LayerTimes {
  std::string name;
  std::int64_t forward_ns, backward_ns, comm_ns, grad_bytes;
};

std::vector<LayerTimes> layer_times(const walk::TraceProfileResult& r) {
  std::vector<LayerTimes> out;
  for (const auto& l : r.profile.layers) {
    out.push_back({l.name, l.forward.ns(), l.backward.ns(), l.comm ? l.comm->ns() : -1, l.grad_bytes});
  }
  return out;
}

MATCHER_P5(Layer, name, fwd, bwd, comm, bytes, "") {
  *result_listener << arg.name << " fwd " << arg.forward_ns << " bwd " << arg.backward_ns
                   << " comm " << arg.comm_ns << " bytes " << arg.grad_bytes;
  return arg.name == name && arg.forward_ns == fwd && arg.backward_ns == bwd &&
         arg.comm_ns == comm && arg.grad_bytes == bytes;
}

// A trace with default profiler settings (no annotations, no module ranges):
// auto picks the operators, and the dump shows the derived marks.
TEST_F(KinetoImportTest, PlainTraceGetsLayersFromOperatorsMatchGolden) {
  const auto out = import_plain("plain");
  expect_golden(dump(out), "plain_ops.dump.txt");
  EXPECT_EQ(summary_.layer_source, KinetoLayerSource::kOps);
  EXPECT_EQ(summary_.layer_source_reason, "no forward/backward annotations or nn.Module ranges");
  const auto& l = summary_.layers;
  EXPECT_EQ(l.layers, 5u);
  EXPECT_EQ(l.forward_ranges, 10u);
  EXPECT_EQ(l.backward_ranges, 12u);  // 6 nodes with a number per step
  EXPECT_EQ(l.backward_unmatched, 0u);
  EXPECT_EQ(l.backward_outside_layers, 0u);
  // One iteration's top-level ops with a number, not the file's (mul and the
  // first linear share one).
  EXPECT_EQ(l.peak_iteration_ops, 4u);
  EXPECT_EQ(summary_.mapping.backward_ops_without_sequence, 4u);  // AccumulateGrad
  EXPECT_EQ(summary_.mapping.markers, 2u + 22u);
  EXPECT_TRUE(summary_.warnings.empty()) << summary_.warnings.front();
}

// The per-operator forward and backward times the generator put in come
// back from the DAG builder's profile (step 6; step 5 is warm-up), each
// kernel with the device's idle time before it that the host caused
// (walk/trace_walk.h): the generator launches every kernel after the device
// ran dry, so mul's holds the 1.5 us since its step began (the device had
// run dry 140 us before, in step 5), and the others the gaps between the
// operators, also while the first all-reduce ran (relu_bwd's 5000 ns, the
// AccumulateGrad op that launched it, and gemm_bwd_0's 1500 ns): on its own
// stream, it leaves the compute stream waiting for the host. The all-reduces
// fall to the latest layer whose backward had ended.
TEST_F(KinetoImportTest, ProfileFromPlainTraceHasPerOperatorTimes) {
  auto reader = TraceReader::open(import_plain("profile"));
  const auto r = walk::profile_from_trace(reader, "plain.ssgdt");
  EXPECT_THAT(layer_times(r),
              ::testing::ElementsAre(Layer("aten::mul#0", 500 + 1500, 0, 0, 0),
                                     Layer("aten::linear#1", 3000 + 1900, 5000 + 1500, 3000, 2048),
                                     Layer("aten::relu#2", 1000 + 3700, 1500 + 5000, 0, 0),
                                     Layer("aten::linear#3", 4000 + 4300, 6000 + 2200, 7000, 4096),
                                     Layer("aten::mse_loss#4", 700 + 3600, 800 + 7300, 0, 0)));
  EXPECT_EQ(r.iterations_seen, 2);
  EXPECT_EQ(r.kernels_outside_ranges, 1);  // the optimizer's: the update
  EXPECT_EQ(r.kernels_update, 1);
}

// With nn.Module ranges, the leaf modules are the layers; the container
// Net_0 is not, and mse_loss (outside every module) has no layer of its
// own: the walker's glue rule gives the work outside every range to a
// neighbour: mul (500, before the first range) to Linear_0's forward,
// mse_loss's forward (700) and backward (800, launched before the first
// backward range) to Linear_1's forward, the range that ended last. Each
// kernel also holds the idle time before it that the host caused, as in
// the test above.
TEST_F(KinetoImportTest, ModuleRangesGiveLeafModuleLayersWithBackward) {
  KinetoJsonOptions modules;
  modules.module_ranges = true;
  auto reader = TraceReader::open(import_plain("modules", modules));
  EXPECT_EQ(summary_.layer_source, KinetoLayerSource::kModules);
  const auto& l = summary_.layers;
  EXPECT_EQ(l.layers, 3u);
  EXPECT_EQ(l.containers, 1u);
  EXPECT_EQ(l.forward_ranges, 6u);
  EXPECT_EQ(l.backward_ranges, 10u);
  EXPECT_EQ(l.backward_outside_layers, 2u);  // MseLossBackward0
  const auto r = walk::profile_from_trace(reader, "modules.ssgdt");
  EXPECT_THAT(layer_times(r),
              ::testing::ElementsAre(Layer("Linear_0", 2000 + 4900, 5000 + 1500, 3000, 2048),
                                     Layer("ReLU_0", 4700, 1500 + 5000, 0, 0),
                                     Layer("Linear_1", 8300 + 4300 + 8100, 8200, 7000, 4096)));
  EXPECT_EQ(r.kernels_outside_ranges, 4);  // mul, mse_loss forward and backward, optimizer
  EXPECT_EQ(r.kernels_update, 1);          // the optimizer's
}

// --layers marks keeps the first rules: a plain trace then has no layers,
// which the summary says and the DAG builder refuses.
TEST_F(KinetoImportTest, LayersMarksOnAPlainTraceFindsNoLayers) {
  PytorchImportOptions marks;
  marks.layers = KinetoLayerSource::kMarks;
  auto reader = TraceReader::open(import_plain("marks", {}, marks));
  EXPECT_EQ(summary_.layers.layers, 0u);
  EXPECT_EQ(summary_.mapping.markers, 2u);  // the two iterations
  EXPECT_THAT(summary_.warnings, ::testing::Contains(HasSubstr("no layers found with --layers marks")));
  EXPECT_THROW(walk::profile_from_trace(reader, "marks.ssgdt"), InputError);
}

// Forced modes: ops on an annotated file drops its annotations; modules on a
// file without module ranges finds nothing and says so.
TEST_F(KinetoImportTest, ForcedLayerSourceIgnoresOtherMarks) {
  PytorchImportOptions ops;
  ops.layers = KinetoLayerSource::kOps;
  import("ops", {}, ops);
  EXPECT_EQ(summary_.mapping.skipped.at("forward/backward annotation (--layers ops)"), 8u);
  PytorchImportOptions modules;
  modules.layers = KinetoLayerSource::kModules;
  import_plain("modules", {}, modules);
  EXPECT_EQ(summary_.layers.layers, 0u);
  EXPECT_THAT(summary_.warnings, ::testing::Contains(HasSubstr("no nn.Module ranges")));
}

// Shuffled events, and both sorters spilling tiny runs, give the same file.
TEST_F(KinetoImportTest, PlainTraceOrderAndSpillsDoNotChangeTheOutput) {
  const auto ordered = read_file_bytes(import_plain("ordered"));
  KinetoJsonOptions shuffled;
  shuffled.shuffle = true;
  shuffled.module_ranges = false;
  PytorchImportOptions tiny;
  tiny.sort_run_bytes = 2048;
  EXPECT_EQ(ordered, read_file_bytes(import_plain("shuffled", shuffled, tiny)));
  EXPECT_GT(summary_.sort_runs, 2u);
  EXPECT_GT(summary_.layers.sort_runs, 2u);
  KinetoJsonOptions modules;
  modules.module_ranges = true;
  const auto m = read_file_bytes(import_plain("modules_ordered", modules));
  modules.shuffle = true;
  EXPECT_EQ(m, read_file_bytes(import_plain("modules_shuffled", modules, tiny)));
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "shuffled")) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr(".ops.")));
  }
}

// A backward op whose sequence number no forward op had is counted and
// reported, and changes nothing else.
TEST_F(KinetoImportTest, BackwardOpWithAnUnseenSequenceNumberIsCounted) {
  KinetoJsonOptions stray;
  stray.stray_backward = true;
  auto reader = TraceReader::open(import_plain("stray", stray));
  EXPECT_EQ(summary_.layers.backward_unmatched, 2u);
  EXPECT_EQ(summary_.layers.backward_ranges, 12u);
  EXPECT_THAT(summary_.warnings,
              ::testing::Contains(HasSubstr("2 backward op(s) had a sequence number")));
  std::ostringstream text;
  print_pytorch_import_summary(summary_, text);
  EXPECT_THAT(text.str(), HasSubstr("2  backward op(s) with a sequence number no forward op had"));
  const auto r = walk::profile_from_trace(reader, "stray.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 5u);
  EXPECT_EQ(r.profile.layers[3].backward.ns(), 6000 + 2200);  // as without the stray op
}

TEST(KinetoLayerSource, NamesParseBack) {
  for (auto s : {KinetoLayerSource::kAuto, KinetoLayerSource::kMarks, KinetoLayerSource::kModules,
                 KinetoLayerSource::kOps}) {
    EXPECT_EQ(parse_kineto_layer_source(kineto_layer_source_name(s)), s);
  }
  EXPECT_EQ(parse_kineto_layer_source("module"), std::nullopt);
}

// A CUDA graph's launch in a Kineto trace: one cudaGraphLaunch runtime event
// and the graph's kernels, all with its correlation id. Every kernel and the
// call are kept, linked by that id; the walk places each kernel by its own
// GPU time (walk/trace_walk.h, TraceWalkTest.KernelsOfACudaGraphLaunchKeepTheirGpuTimes).
TEST_F(KinetoImportTest, ACudaGraphLaunchKeepsEveryKernelAndItsCall) {
  const auto json = dir_ / "graph.json";
  write_file_bytes(json, R"({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1},
 "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "iteration/0", "pid": 4242, "tid": 4243, "ts": 0.000, "dur": 100.000, "args": {"External id": 1}},
 {"ph": "X", "cat": "user_annotation", "name": "forward/fc", "pid": 4242, "tid": 4243, "ts": 1.000, "dur": 19.000, "args": {"External id": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 4242, "tid": 4243, "ts": 1.500, "dur": 0.100, "args": {"cbid": 311, "correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm_a", "pid": 0, "tid": 7, "ts": 2.000, "dur": 4.000, "args": {"device": 0, "stream": 7, "correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm_b", "pid": 0, "tid": 7, "ts": 6.000, "dur": 3.000, "args": {"device": 0, "stream": 7, "correlation": 7}},
 {"ph": "X", "cat": "user_annotation", "name": "forward/relu", "pid": 4242, "tid": 4243, "ts": 20.000, "dur": 20.000, "args": {"External id": 3}},
 {"ph": "X", "cat": "kernel", "name": "relu_k", "pid": 0, "tid": 7, "ts": 25.000, "dur": 2.000, "args": {"device": 0, "stream": 7, "correlation": 7}}
 ]})");
  import_pytorch(json, dir_ / "graph.ssgdt");
  auto reader = TraceReader::open(dir_ / "graph.ssgdt");
  trace::v1::Event e;
  int kernels = 0;
  int launches = 0;
  while (reader.next(e)) {
    if (e.has_kernel()) {
      ++kernels;
      EXPECT_EQ(e.kernel().correlation_id(), 7u);
    }
    if (e.has_api_call() && e.api_call().name() == "cudaGraphLaunch") {
      ++launches;
      EXPECT_EQ(e.api_call().correlation_id(), 7u);
    }
  }
  EXPECT_EQ(kernels, 3);
  EXPECT_EQ(launches, 1);
}

}  // namespace
}  // namespace ssgd::trace
