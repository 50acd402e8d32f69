// The Kineto importer (traces/kineto_import.h) on Kineto JSON files written
// by tests/support/kineto_json_writer.h: golden text dumps under
// tests/data/kineto/, byte-identical output across event order, metadata
// position, gzip and spilled sorting, clear errors on truncated and
// malformed files, and the layer times the generator put in, read back by
// dag::profile_from_trace.
//
// SSGD_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "common/error.h"
#include "common/gzip_stream.h"
#include "dag/trace_profile.h"
#include "tests/support/kineto_json_writer.h"
#include "tests/support/test_files.h"
#include "traces/kineto_import.h"
#include "traces/kineto_json_reader.h"
#include "traces/trace_dump.h"

namespace ssgd::trace {
namespace {

using ::testing::HasSubstr;
using testing::KinetoJsonOptions;
using testing::read_file_bytes;
using testing::write_file_bytes;
using testing::write_two_step_training;

class KinetoImportTest : public testing::TempDirTest {
 protected:
  // Writes the generator's file with `o` and imports it; returns the .ssgdt path.
  std::filesystem::path import(const std::string& stem, KinetoJsonOptions o = {},
                               KinetoImportOptions io = {}) {
    // The same file name in each folder: the provenance names it.
    std::filesystem::create_directories(dir_ / stem);
    const auto json = dir_ / stem / "rank1.json";
    write_two_step_training(json, o);
    const auto out = dir_ / stem / "rank1.ssgdt";
    summary_ = import_kineto(json, out, io);
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
    const auto json = dir_ / name;
    write_file_bytes(json, text);
    try {
      import_kineto(json, dir_ / "bad.ssgdt");
    } catch (const InputError& e) {
      EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.ssgdt")) << "half-written output left";
      return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError({}, "none");
  }

  KinetoImportSummary summary_;
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
  const auto s = import_kineto(dir_ / "z" / "rank1.json", dir_ / "z" / "rank1.ssgdt");
  EXPECT_TRUE(s.compressed);  // recognised by its magic bytes, not its name
  EXPECT_EQ(s.json_bytes, read_file_bytes(dir_ / "plain" / "rank1.json").size());
  EXPECT_EQ(plain, read_file_bytes(dir_ / "z" / "rank1.ssgdt"));
}

TEST_F(KinetoImportTest, SpilledSortRunsGiveTheSameTrace) {
  KinetoImportOptions tiny;
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
  KinetoImportOptions io;
  io.rank = 3;
  auto reader = TraceReader::open(import("override", {}, io));
  EXPECT_EQ(reader.metadata().rank(), 3);
  v1::Event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(e.rank(), 3);
}

TEST_F(KinetoImportTest, ModuleRangesBecomeForwardMarks) {
  KinetoJsonOptions modules;
  modules.module_ranges = true;
  auto reader = TraceReader::open(import("modules", modules));
  std::vector<std::string> names;
  v1::Event e;
  while (reader.next(e)) {
    if (e.has_marker() && e.marker().domain() == "kineto:python_function") names.push_back(e.marker().name());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("forward/Linear_0", "forward/Linear_1",
                                            "forward/Linear_0", "forward/Linear_1"));
  KinetoImportOptions off;
  off.module_marks = false;
  import("no_modules", modules, off);
  EXPECT_EQ(summary_.mapping.markers, 10u);
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

TEST_F(KinetoImportTest, EmptyFileIsTruncated) {
  const InputError e = import_error("");
  EXPECT_THAT(e.what(), HasSubstr("truncated"));
}

TEST_F(KinetoImportTest, JsonSyntaxErrorNamesTheByteAndEvent) {
  const InputError e = import_error(
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.000, "dur": 2.000},)"
      R"( {"ph": "X" "cat": "kernel"}]})");
  EXPECT_THAT(e.what(), HasSubstr("invalid JSON at byte"));
  EXPECT_THAT(e.what(), HasSubstr("inside event 1"));
  EXPECT_EQ(e.where().record, 1);
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
                   R"( {"ph": "X", "cat": "strange_cat", "name": "y", "ts": 1, "dur": 1}]})");
  const auto s = import_kineto(dir_ / "t.json", dir_ / "t.ssgdt");
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
// profile of the imported trace (step 6 only: the first is warm-up).
TEST_F(KinetoImportTest, ProfileFromImportedTraceHasTheGeneratedLayerTimes) {
  auto reader = TraceReader::open(import("profile"));
  const auto r = dag::profile_from_trace(reader, "profile.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  const auto& l1 = r.profile.layers[0];
  const auto& l2 = r.profile.layers[1];
  EXPECT_EQ(l1.name, "l1");
  EXPECT_EQ(l2.name, "l2");
  EXPECT_EQ(l1.forward.ns(), 3000);
  EXPECT_EQ(l2.forward.ns(), 4000);
  EXPECT_EQ(l1.backward.ns(), 5000);
  EXPECT_EQ(l2.backward.ns(), 6000);
  ASSERT_TRUE(l1.comm.has_value());
  EXPECT_EQ(l1.comm->ns(), 3000);
  EXPECT_EQ(l2.comm->ns(), 7000);
  EXPECT_EQ(l1.grad_bytes, 2048);
  EXPECT_EQ(l2.grad_bytes, 4096);
  EXPECT_EQ(r.iterations_seen, 2);
  EXPECT_EQ(r.collectives, 2);
  EXPECT_EQ(r.kernels_unassigned, 1);  // the optimizer kernel
}

}  // namespace
}  // namespace ssgd::trace
