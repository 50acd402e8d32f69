// The Nsight Systems importer (traces/import/nsys/nsys_import.h) on SQLite
// exports written by tests/support/nsys_sqlite_writer.h to NVIDIA's
// documented schema: a two-iteration training step with layer marks and an
// NCCL all-reduce becomes the trace dag/trace_profile reads; the output is
// byte-identical however the rows are spilled; missing tables and columns,
// bad values and files without kernels are InputErrors naming the table,
// the row and the column, and leave no output; the input is never written.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "common/error.h"
#include "walk/trace_profile.h"
#include "tests/support/nsys_sqlite_writer.h"
#include "tests/support/test_files.h"
#include "traces/import/nsys/nsys_import.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

using ::testing::HasSubstr;
using testing::nsys_two_layer_training;
using testing::NsysExportSpec;
using testing::NsysTrainingOptions;
using testing::read_file_bytes;
using testing::write_nsys_export;

class NsysImportTest : public testing::TempDirTest {
 protected:
  std::filesystem::path import(const NsysExportSpec& spec, const std::string& stem = "rank0",
                               NsysImportOptions options = {}) {
    // The same file name in each folder: the provenance names it.
    std::filesystem::create_directories(dir_ / stem);
    const auto db = dir_ / stem / (name_ + ".sqlite");
    write_nsys_export(db, spec);
    const auto out = dir_ / stem / (name_ + ".ssgdt");
    summary_ = import_nsys(db, out, options);
    return out;
  }

  // The InputError the import of `spec` throws; no output may be left.
  InputError import_error(const NsysExportSpec& spec) {
    const auto db = dir_ / "bad.sqlite";
    write_nsys_export(db, spec);
    try {
      import_nsys(db, dir_ / "bad.ssgdt");
    } catch (const InputError& e) {
      EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.ssgdt")) << "half-written output left";
      return e;
    }
    ADD_FAILURE() << "no InputError";
    return InputError({}, "none");
  }

  static std::vector<v1::Event> events(const std::filesystem::path& trace) {
    auto reader = TraceReader::open(trace);
    std::vector<v1::Event> all;
    v1::Event e;
    while (reader.next(e)) all.push_back(e);
    return all;
  }

  NsysImportSummary summary_;
  std::string name_ = "rank0";
};

TEST_F(NsysImportTest, TwoIterationsWithLayersAndAnAllReduce) {
  const auto out = import(nsys_two_layer_training());
  const auto& a = summary_.activity;
  EXPECT_EQ(a.kernels, 10u);  // 4 layer kernels + 1 optimizer kernel, per iteration
  EXPECT_EQ(a.collectives, 2u);
  EXPECT_EQ(a.collectives_linked, 2u);
  EXPECT_EQ(a.collectives_sized, 2u);
  EXPECT_EQ(a.collectives_unsized, 0u);
  EXPECT_EQ(a.memcpys, 2u);
  EXPECT_EQ(a.memsets, 2u);
  EXPECT_EQ(a.api_calls, 16u);
  EXPECT_EQ(summary_.nvtx.markers, 10u);  // iteration/<i> and 4 layer ranges, per iteration
  EXPECT_EQ(summary_.nvtx.iteration_marks, 2u);
  EXPECT_EQ(summary_.nvtx.layers.size(), 2u);
  EXPECT_EQ(summary_.nvtx.nccl_ranges, 2u);
  EXPECT_EQ(summary_.rank, 0);
  EXPECT_EQ(summary_.rank_source, "ssgd/rank mark");
  EXPECT_EQ(summary_.world_size, 2);
  EXPECT_EQ(summary_.hostname, "node0");
  EXPECT_EQ(summary_.clock, "REALTIME");
  EXPECT_EQ(summary_.events_written, 10u + 2 + 2 + 2 + 16 + 10);
  EXPECT_TRUE(summary_.warnings.empty()) << summary_.warnings.front();

  auto reader = TraceReader::open(out);
  const auto& h = reader.metadata();
  EXPECT_EQ(h.tool(), "ssgd import nsys");
  EXPECT_EQ(h.rank(), 0);
  EXPECT_EQ(h.world_size(), 2);
  ASSERT_EQ(h.hosts_size(), 1);
  EXPECT_EQ(h.hosts(0).hostname(), "node0");
  EXPECT_EQ(h.hosts(0).clock().kind(), v1::ClockDomain::REALTIME);
  ASSERT_EQ(h.hosts(0).gpus_size(), 1);
  EXPECT_EQ(h.hosts(0).gpus(0).name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h.hosts(0).gpus(0).sm_count(), 132);

  const std::int64_t base = 1'700'000'000'000'000'000;
  std::vector<v1::Collective> collectives;
  bool driver_launch = false;
  for (const auto& e : events(out)) {
    if (e.has_collective()) collectives.push_back(e.collective());
    if (e.has_api_call() && e.api_call().name() == "cuLaunchKernelEx") {
      driver_launch = e.api_call().api() == v1::ApiCall::DRIVER;
    }
    if (e.has_api_call()) {
      EXPECT_EQ(e.api_call().name().find("_v"), std::string::npos);
    }
    if (e.has_kernel()) {
      EXPECT_GE(e.kernel().start_ns(), base);
    }
  }
  EXPECT_TRUE(driver_launch);
  ASSERT_EQ(collectives.size(), 2u);
  const auto& c = collectives[0];
  EXPECT_EQ(c.op(), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(c.size_bytes(), 4 << 20);
  EXPECT_EQ(c.count(), 1 << 20);
  EXPECT_EQ(c.datatype(), "float32");
  EXPECT_EQ(c.algorithm(), "RING");
  EXPECT_EQ(c.protocol(), "LL");
  EXPECT_EQ(c.start_ns(), base + 1'000'000 + 5'300'000);
  EXPECT_EQ(c.stream(), 13u);
  EXPECT_EQ(c.nranks(), 2);
  EXPECT_EQ(c.sequence_number(), 0u);
  EXPECT_EQ(collectives[1].sequence_number(), 1u);

  // The replay's reading: two layers, the all-reduce l1's gradients.
  auto again = TraceReader::open(out);
  const auto r = walk::profile_from_trace(again, "rank0.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  EXPECT_EQ(r.profile.layers[0].name, "l1");
  EXPECT_EQ(r.iterations_seen, 2);
  EXPECT_EQ(r.collectives, 1);  // of an iteration
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 4 << 20);
}

// NCCL's range gives an all-gather's size as one rank's share (sendcount);
// the trace holds the gathered buffer, world_size times that.
TEST_F(NsysImportTest, AnAllGathersSizeIsItsGatheredBuffer) {
  NsysTrainingOptions o;
  o.all_gather = true;
  o.world_size = 4;
  const auto out = import(nsys_two_layer_training(o));
  std::vector<v1::Collective> collectives;
  for (const auto& e : events(out)) {
    if (e.has_collective()) collectives.push_back(e.collective());
  }
  ASSERT_EQ(collectives.size(), 2u);
  for (const auto& c : collectives) {
    EXPECT_EQ(c.op(), v1::Collective::ALL_GATHER);
    EXPECT_EQ(c.nranks(), 4);
    EXPECT_EQ(c.size_bytes(), 4 * (4 << 20));
  }

  // Without a world size the share stays, and the import says so.
  o.rank_mark = false;  // no ssgd/rank, no ssgd/world_size
  name_ = "unknown_world";
  const auto unknown = import(nsys_two_layer_training(o), "unknown");
  for (const auto& e : events(unknown)) {
    if (e.has_collective()) EXPECT_EQ(e.collective().size_bytes(), 4 << 20);
  }
  EXPECT_EQ(summary_.activity.shares_unscaled, 2u);
  EXPECT_THAT(summary_.warnings,
              ::testing::Contains(HasSubstr("2 all-gather(s) and reduce-scatter(s) keep one "
                                            "rank's share as their size")));
}
TEST_F(NsysImportTest, SpilledRunsGiveTheSameBytes) {
  const auto whole = read_file_bytes(import(nsys_two_layer_training(), "whole"));
  NsysImportOptions tiny;
  tiny.sort_run_bytes = 512;
  const auto spilled = read_file_bytes(import(nsys_two_layer_training(), "spilled", tiny));
  EXPECT_GT(summary_.sort_runs, 1u);
  EXPECT_EQ(whole, spilled);
  EXPECT_EQ(whole, read_file_bytes(import(nsys_two_layer_training(), "again")));
}

TEST_F(NsysImportTest, AnNcclKernelWithoutNcclRangesIsACollectiveOfUnknownSize) {
  NsysTrainingOptions o;
  o.nccl_ranges = false;
  const auto out = import(nsys_two_layer_training(o));
  EXPECT_EQ(summary_.activity.collectives, 2u);
  EXPECT_EQ(summary_.activity.collectives_unsized, 2u);
  EXPECT_THAT(summary_.activity.first_unsized, HasSubstr("CUPTI_ACTIVITY_KIND_KERNEL row "));
  ASSERT_FALSE(summary_.warnings.empty());
  EXPECT_THAT(summary_.warnings.front(), HasSubstr("2 NCCL collective(s) without a size"));
  for (const auto& e : events(out)) {
    if (!e.has_collective()) continue;
    EXPECT_EQ(e.collective().op(), v1::Collective::ALL_REDUCE);  // from the kernel's name
    EXPECT_EQ(e.collective().size_bytes(), 0);                   // never invented
  }
  std::ostringstream text;
  print_nsys_import_summary(summary_, text);
  EXPECT_THAT(text.str(), HasSubstr("collectives  2 from NCCL kernels: 0 launched inside an NCCL "
                                    "NVTX range, 0 sized from its payload, 2 of unknown size"));
}

TEST_F(NsysImportTest, ARangeWithoutPayloadLeavesTheSizeUnknown) {
  NsysTrainingOptions o;
  o.nccl_payload = false;
  import(nsys_two_layer_training(o));
  EXPECT_EQ(summary_.activity.collectives_linked, 2u);
  EXPECT_EQ(summary_.activity.collectives_sized, 0u);
  EXPECT_THAT(summary_.activity.first_unsized, HasSubstr("carries no \"Message size [bytes]\""));
}

TEST_F(NsysImportTest, NoStringIdsTableIsRefusedByName) {
  auto spec = nsys_two_layer_training();
  spec.omit_tables.insert("StringIds");
  const InputError e = import_error(spec);
  EXPECT_EQ(e.where().field, "StringIds");
  EXPECT_THAT(e.what(), HasSubstr("no table StringIds"));
}

TEST_F(NsysImportTest, NoKernelTableIsRefusedByName) {
  auto spec = nsys_two_layer_training();
  spec.omit_tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
  EXPECT_THAT(import_error(spec).what(), HasSubstr("no table CUPTI_ACTIVITY_KIND_KERNEL"));
}

TEST_F(NsysImportTest, AMissingColumnNamesTableAndColumn) {
  auto spec = nsys_two_layer_training();
  spec.omit_columns["CUPTI_ACTIVITY_KIND_MEMCPY"] = {"copyKind"};
  InputError e = import_error(spec);
  EXPECT_EQ(e.where().field, "CUPTI_ACTIVITY_KIND_MEMCPY.copyKind");
  EXPECT_THAT(e.what(), HasSubstr("table CUPTI_ACTIVITY_KIND_MEMCPY has no column copyKind"));

  spec = nsys_two_layer_training();
  spec.omit_columns["CUPTI_ACTIVITY_KIND_KERNEL"] = {"demangledName", "shortName"};
  EXPECT_THAT(import_error(spec).what(), HasSubstr("has no column demangledName or shortName"));

  // Without demangledName the short name is used.
  spec = nsys_two_layer_training();
  spec.omit_columns["CUPTI_ACTIVITY_KIND_KERNEL"] = {"demangledName"};
  const auto out = import(spec, "short");
  bool short_name = false;
  for (const auto& ev : events(out)) {
    if (ev.has_kernel()) short_name = ev.kernel().name() == "void gemm_kernel<float, 128>";
    if (short_name) break;
  }
  EXPECT_TRUE(short_name);
}

TEST_F(NsysImportTest, ABadStringIdNamesTableRowAndColumn) {
  auto spec = nsys_two_layer_training();
  for (auto& t : spec.tables) {
    if (t.name == "CUPTI_ACTIVITY_KIND_KERNEL") {
      t.rows[2][7] = std::int64_t{99999};  // demangledName of the third kernel (rowid 3)
    }
  }
  const InputError e = import_error(spec);
  EXPECT_EQ(e.where().field, "CUPTI_ACTIVITY_KIND_KERNEL.demangledName");
  EXPECT_EQ(e.where().record, 3);
  EXPECT_THAT(e.what(), HasSubstr("table CUPTI_ACTIVITY_KIND_KERNEL, row (rowid) 3, column "
                                  "demangledName: string id 99999 is not in table StringIds"));
}

TEST_F(NsysImportTest, BadValuesNameTheirColumn) {
  auto spec = nsys_two_layer_training();
  for (auto& t : spec.tables) {
    if (t.name == "CUPTI_ACTIVITY_KIND_KERNEL") t.rows[0][0] = testing::NsysValue();
  }
  EXPECT_THAT(import_error(spec).what(),
              HasSubstr("row (rowid) 1, column start: is NULL, not an integer"));
  spec = nsys_two_layer_training();
  for (auto& t : spec.tables) {
    if (t.name == "CUPTI_ACTIVITY_KIND_MEMSET") t.rows[1][1] = std::int64_t{5};  // end < start
  }
  EXPECT_THAT(import_error(spec).what(),
              HasSubstr("table CUPTI_ACTIVITY_KIND_MEMSET, row (rowid) 2, column end: ends"));
  spec = nsys_two_layer_training();
  for (auto& t : spec.tables) {
    if (t.name == "NVTX_EVENTS") t.rows[1][6] = std::string("ssgd/rank=two");
  }
  EXPECT_THAT(import_error(spec).what(), HasSubstr("NVTX_EVENTS.text"));
}

TEST_F(NsysImportTest, AnEmptyKernelTableIsAnError) {
  NsysExportSpec spec;
  spec.table("CUPTI_ACTIVITY_KIND_KERNEL",
             {"start", "end", "deviceId", "streamId", "correlationId", "demangledName"});
  spec.nvtx(0, 10, 60, "iteration/0", 1);
  EXPECT_THAT(import_error(spec).what(),
              HasSubstr("nothing to import: table CUPTI_ACTIVITY_KIND_KERNEL has no kernels"));
}

TEST_F(NsysImportTest, KernelsWithoutMarksOrCollectivesAreNothingUsable) {
  NsysExportSpec spec;
  spec.kernel(100, 200, 1, "void k()");
  EXPECT_THAT(import_error(spec).what(), HasSubstr("no iteration"));
}

TEST_F(NsysImportTest, NotADatabaseIsAnError) {
  testing::write_file_bytes(dir_ / "bad.sqlite", "this is not SQLite\n");
  try {
    import_nsys(dir_ / "bad.sqlite", dir_ / "bad.ssgdt");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not an Nsight Systems SQLite export"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.ssgdt"));
}

TEST_F(NsysImportTest, TheInputIsNeverWritten) {
  const auto db = dir_ / "in.sqlite";
  write_nsys_export(db, nsys_two_layer_training());
  const auto before = read_file_bytes(db);
  const auto time = std::filesystem::last_write_time(db);
  import_nsys(db, dir_ / "out.ssgdt");
  EXPECT_EQ(read_file_bytes(db), before);
  EXPECT_EQ(std::filesystem::last_write_time(db), time);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"in.sqlite", "out.ssgdt"}));  // no -journal, -wal
}

TEST_F(NsysImportTest, RankFromOptionsOrNameOrAssumed) {
  NsysTrainingOptions o;
  o.rank_mark = false;
  import(nsys_two_layer_training(o), "a");
  EXPECT_EQ(summary_.rank_source, "assumed");
  NsysImportOptions named;
  named.name_rank = 1;
  import(nsys_two_layer_training(o), "b", named);
  EXPECT_EQ(summary_.rank, 1);
  EXPECT_EQ(summary_.rank_source, "file name");
  NsysImportOptions required;
  required.require_rank = true;
  write_nsys_export(dir_ / "c.sqlite", nsys_two_layer_training(o));
  EXPECT_THROW(import_nsys(dir_ / "c.sqlite", dir_ / "c.ssgdt", required), InputError);
}

TEST_F(NsysImportTest, AViewInPlaceOfATableIsNotRead) {
  auto spec = nsys_two_layer_training();
  spec.omit_tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
  const auto db = dir_ / "view.sqlite";
  write_nsys_export(db, spec);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h,
                         "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE n(x) AS "
                         "(SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x AS start, x AS end, 0 "
                         "AS deviceId, 0 AS streamId, x AS correlationId, 0 AS demangledName "
                         "FROM n",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(h);
  EXPECT_THROW(
      {
        try {
          import_nsys(db, dir_ / "view.ssgdt");
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("no table CUPTI_ACTIVITY_KIND_KERNEL"));
          throw;
        }
      },
      InputError);
}

}  // namespace
}  // namespace ssgd::trace
