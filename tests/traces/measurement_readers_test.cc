// ssgd calibrate's measurement readers (OSU, nccl-tests text and JSON, ssgd
// traces; traces/import/measurement_files.h) on small inputs written here,
// every garbage-line case with the message it must give.
// (tests/simulator/calibration_validation_test.cc fits the measured OSU
// curves; tests/simulator/calibration_test.cc tests the fits.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/support/synthetic_trace.h"
#include "tests/support/test_files.h"
#include "traces/event_rules.h"
#include "traces/import/measurement_files.h"
#include "traces/trace_writer.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

class Calibration : public ssgd::testing::TempDirTest {
 protected:
  // The message of the InputError reading `text` as `name` gives, without
  // the temp folder.
  std::string error_of(const std::string& name, const std::string& text,
                       trace::MeasurementOptions o = {}) {
    const auto p = write_file(name, text);
    try {
      trace::read_measurements(p, o);
    } catch (const InputError& e) {
      std::string s = e.what();
      const std::string folder = dir_.string() + "/";
      if (s.starts_with(folder)) s.erase(0, folder.size());
      return s;
    }
    return "no error";
  }
};

// ---------------------------------------------------------------- OSU

constexpr const char* kOsuHeader =
    "\n# OSU MPI Allreduce Latency Test v5.4.0\n# Size       Avg Latency(us)\n";

TEST_F(Calibration, OsuWithNodePrefix) {
  const auto m = trace::read_measurements(
      write_file("a.log", std::string(kOsuHeader) + "2,4    31.92\n2,8    32.20\n"), {});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(m[0].ranks, 2);
  EXPECT_EQ(m[0].bytes, 4);
  EXPECT_EQ(m[0].time, Duration(31'920));
  EXPECT_EQ(m[0].line, 4);
  EXPECT_EQ(m[1].bytes, 8);
  EXPECT_EQ(m[1].time, Duration(32'200));
}

TEST_F(Calibration, OsuWithoutPrefixTakesRanksFromTheFlag) {
  const std::string text = std::string(kOsuHeader) + "4      54.50\n8      50.36\n";
  EXPECT_EQ(
      error_of("b.log", text),
      "b.log:4: field 'nodes': the line has no 'nodes,' prefix and --ranks was not given: the "
      "number of ranks is unknown");
  trace::MeasurementOptions o;
  o.ranks = 4;
  const auto m = trace::read_measurements(write_file("b.log", text), o);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].ranks, 4);
  EXPECT_EQ(m[1].time, Duration(50'360));
  // A prefix wins over the flag.
  const auto p =
      trace::read_measurements(write_file("c.log", std::string(kOsuHeader) + "8,4 82.28\n"), o);
  EXPECT_EQ(p[0].ranks, 8);
}

TEST_F(Calibration, OsuFullColumnsAndPerRankSizes) {
  // osu_allgather -f: size is one rank's part, so M = size x P; min, max and
  // iterations follow the average.
  const auto m = trace::read_measurements(
      write_file("g.log",
                 "# OSU MPI Allgather Latency Test v7.1\n"
                 "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
                 "4,1024        10.50             9.90             11.20        1000\n"),
      {});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(m[0].bytes, 4096);
  EXPECT_EQ(m[0].time, Duration(10'500));
}

TEST_F(Calibration, OsuOpFromHeaderElseFlag) {
  const std::string rows = "2,4 31.92\n";
  EXPECT_EQ(
      error_of("n.log", "# Size Avg Latency(us)\n" + rows),
      "n.log:2: field 'op': no '# OSU ... Latency Test' header names the collective; give --op");
  EXPECT_EQ(error_of("g.log", "# OSU MPI Gather Latency Test v5.4.0\n" + rows),
            "g.log:2: field 'op': 'OSU MPI Gather Latency Test v5.4.0' is not a collective ssgd "
            "models (all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, reduce); give "
            "--op");
  EXPECT_THAT(error_of("i.log", "# OSU MPI Non-blocking Allreduce Latency Test v7.1\n" + rows),
              HasSubstr("give --op"));
  trace::MeasurementOptions o;
  o.op = CollectiveOp::kBroadcast;
  EXPECT_EQ(
      trace::read_measurements(write_file("n.log", "# Size Avg Latency(us)\n" + rows), o)[0].op,
      CollectiveOp::kBroadcast);
  // The header wins over the flag.
  EXPECT_EQ(trace::read_measurements(write_file("h.log", std::string(kOsuHeader) + rows), o)[0].op,
            CollectiveOp::kAllReduce);
}

TEST_F(Calibration, OsuGarbageLinesNameFileLineAndField) {
  const std::string h = kOsuHeader;  // rows start on line 4
  EXPECT_EQ(error_of("g.log", h + "2,4 31.92\n2,8 fast\n"),
            "g.log:5: field 'latency': expected a number, got 'fast'");
  EXPECT_EQ(
      error_of("g.log", h + "2,4\n"),
      "g.log:4: field 'latency': missing: expected 'bytes latency_us' or 'nodes,bytes latency_us'");
  EXPECT_EQ(error_of("g.log", h + "2,0 31.92\n"),
            "g.log:4: field 'size': must be greater than zero, got '0'");
  EXPECT_EQ(error_of("g.log", h + "2,-8 31.92\n"),
            "g.log:4: field 'size': must not be negative, got '-8'");
  EXPECT_EQ(error_of("g.log", h + "2,4k 31.92\n"),
            "g.log:4: field 'size': expected a whole number, got '4k'");
  EXPECT_EQ(error_of("g.log", h + "2,4 -31.92\n"),
            "g.log:4: field 'latency': must be greater than zero, got '-31.92'");
  EXPECT_EQ(error_of("g.log", h + "2,4 0\n"),
            "g.log:4: field 'latency': must be greater than zero, got '0'");
  EXPECT_EQ(error_of("g.log", h + "2,4 nan\n"),
            "g.log:4: field 'latency': expected a finite number, got 'nan'");
  EXPECT_EQ(error_of("g.log", h + "2,4 NaN\n"),
            "g.log:4: field 'latency': expected a finite number, got 'NaN'");
  EXPECT_EQ(error_of("g.log", h + "2,4 inf\n"),
            "g.log:4: field 'latency': expected a finite number, got 'inf'");
  EXPECT_EQ(error_of("g.log", h + "2,4 0.0000001\n"),
            "g.log:4: field 'latency': 1e-07 us rounds to 0 ns");
  // Below int64's limit in nanoseconds but above what a Duration takes (the
  // osu_log fuzzer's finding: it was a std::out_of_range).
  EXPECT_EQ(error_of("g.log", h + "2,4 9223372036054775\n"),
            "g.log:4: field 'latency': 9223372036054776 us is too large");
  EXPECT_EQ(error_of("g.log", h + "2,4 1e300\n"), "g.log:4: field 'latency': 1e+300 us is too large");
  EXPECT_EQ(error_of("g.log", h + "2,4 31.92 extra\n"),
            "g.log:4: field 'column 3': expected a number, got 'extra'");
  EXPECT_EQ(error_of("g.log", h + "x,4 31.92\n"),
            "g.log:4: field 'nodes': expected a whole number, got 'x'");
  EXPECT_EQ(error_of("g.log", h + "1,4 31.92\n"),
            "g.log:4: field 'nodes': 1 node(s): a collective needs at least 2");
  EXPECT_EQ(error_of("g.log", h), "g.log: holds no usable measurements (read as osu)");
}

// ---------------------------------------------------------------- nccl-tests text

// all_reduce_perf on 2 nodes x 2 GPUs (MPI), as nccl-tests 2.17 prints it,
// with srun's rank tag and an NCCL INFO line in between.
const std::string kNcclText =
    "0: # nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n"
    "0: # Collective test starting: all_reduce_perf\n"
    "0: # nThread 1 nGpus 1 minBytes 0 maxBytes 16777216 step: 4(factor) warmup iters: 5 iters: 20 "
    "agg iters: 1 validation: 1 graph: 0\n"
    "0: #\n"
    "0: # Using devices\n"
    "0: #  Rank  0 Group  0 Pid  11887 on     node-a device  0 [0000:8d:00] NVIDIA H100 80GB HBM3\n"
    "0: #  Rank  1 Group  0 Pid  11888 on     node-a device  1 [0000:91:00] NVIDIA H100 80GB HBM3\n"
    "0: #  Rank  2 Group  0 Pid  21885 on     node-b device  0 [0000:8d:00] NVIDIA H100 80GB HBM3\n"
    "0: #  Rank  3 Group  0 Pid  21886 on     node-b device  1 [0000:91:00] NVIDIA H100 80GB HBM3\n"
    "0: node-a:11887:11900 [0] NCCL INFO comm 0x55 rank 0 nranks 4 cudaDev 0 busId 8d000 - Init "
    "COMPLETE\n"
    "0: #\n"
    "0: #                                                              out-of-place                "
    "       in-place          \n"
    "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong \n"
    "0: #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)        \n"
    "0:            0             0     float     sum      -1     0.20    0.00    0.00      0     "
    "0.19    0.00    0.00      0\n"
    "0:         1024           256     float     sum      -1    25.31    0.04    0.06      0    "
    "24.87    0.04    0.06      0\n"
    "0:      1048576        262144     float     sum      -1    90.50   11.59   17.38      0    "
    "89.90   11.66   17.50      0\n"
    "0:     16777216       4194304     float     sum      -1   1023.4   16.39   24.59      0   "
    "1010.2   16.61   24.91      0\n"
    "0: # Out of bounds values : 0 OK\n"
    "0: # Avg bus bandwidth    : 13.8 \n"
    "0: #\n"
    "0: # Collective test concluded: all_reduce_perf\n";

TEST_F(Calibration, NcclTestsText) {
  const auto m = trace::read_measurements(write_file("ar.txt", kNcclText), {});
  ASSERT_EQ(m.size(), 3u) << "the 0-byte row is skipped";
  EXPECT_EQ(m[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(m[0].ranks, 4);
  EXPECT_EQ(m[0].bytes, 1024);
  EXPECT_EQ(m[0].time, Duration(25'310));
  EXPECT_EQ(m[0].line, 16);
  EXPECT_EQ(m[2].bytes, 16777216);
  EXPECT_EQ(m[2].time, Duration(1'023'400));
  trace::MeasurementOptions in_place;
  in_place.in_place = true;
  EXPECT_EQ(trace::read_measurements(write_file("ar.txt", kNcclText), in_place)[2].time,
            Duration(1'010'200));
}

TEST_F(Calibration, NcclTestsTextOldFormatNeedsFlags) {
  // nccl-tests 2.0 with NCCL 2.4: no version line, no test name, no root
  // column, "error" for "#wrong", and "Rank ... Pid" lines without Group.
  const std::string old =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 "
      "validation: 1\n"
      "#\n"
      "# Using devices\n"
      "#   Rank  0 Pid   1320 on   host device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 Pid   1320 on   host device  1 [0x00] Tesla V100-SXM2-16GB\n"
      "#\n"
      "#                                                     out-of-place                       "
      "in-place\n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw "
      "  busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s) "
      " (GB/s)\n"
      "           8             2   float     sum     12.5    0.00    0.00  0e+00     12.1    0.00 "
      "   0.00  0e+00\n"
      "         128            32   float     sum     13.5    0.01    0.01  0e+00     13.0    0.01 "
      "   0.01  0e+00\n";
  EXPECT_EQ(error_of("old.txt", old),
            "old.txt:10: field 'op': no '# Collective test starting:' line names the test "
            "(nccl-tests before 2.14 print none); give --op");
  trace::MeasurementOptions o;
  o.op = CollectiveOp::kAllGather;
  const auto m = trace::read_measurements(write_file("old.txt", old), o);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(m[0].ranks, 2);
  EXPECT_EQ(m[1].time, Duration(13'500));
  // Without Rank lines, --ranks says.
  std::string no_ranks = old;
  for (const char* rank_line :
       {"#   Rank  0 Pid   1320 on   host device  0 [0x00] Tesla V100-SXM2-16GB\n",
        "#   Rank  1 Pid   1320 on   host device  1 [0x00] Tesla V100-SXM2-16GB\n"}) {
    no_ranks.erase(no_ranks.find(rank_line), std::string(rank_line).size());
  }
  EXPECT_EQ(error_of("nr.txt", no_ranks, o),
            "nr.txt:8: field 'nranks': no '#  Rank N' lines before the table and --ranks was not "
            "given: the number of ranks is unknown");
  o.ranks = 16;
  EXPECT_EQ(trace::read_measurements(write_file("nr.txt", no_ranks), o)[0].ranks, 16);
}

TEST_F(Calibration, NcclTestsTextGarbageLines) {
  const auto with_row = [](const std::string& row) {
    std::string t = kNcclText;
    const std::string first = "0:         1024           256";
    return t.insert(t.find(first), row + "\n");
  };
  // The inserted row is line 16.
  EXPECT_EQ(error_of("t.txt", with_row("      2048   512   float   sum   -1   oops   0.08   0.00   "
                                       "0   12.1   0.08   0.00  0")),
            "t.txt:16: field 'time': expected a number, got 'oops'");
  EXPECT_EQ(error_of("t.txt", with_row("      2048   512   float   sum   -1")),
            "t.txt:16: field 'time': missing column: the row has 5 columns, the header on line 13 "
            "puts the time in column 6");
  EXPECT_EQ(error_of("t.txt", with_row("      2048   512   float   sum   -1   nan   0.08   0.00   "
                                       "0   12.1   0.08   0.00  0")),
            "t.txt:16: field 'time': expected a finite number, got 'nan'");
  EXPECT_EQ(error_of("t.txt", with_row("      2048   512   float   sum   -1   -4.0   0.08   0.00   "
                                       "0   12.1   0.08   0.00  0")),
            "t.txt:16: field 'time': must be greater than zero, got '-4.0'");
  EXPECT_EQ(error_of("t.txt", with_row("     -2048   512   float   sum   -1   12.0   0.08   0.00   "
                                       "0   12.1   0.08   0.00  0")),
            "t.txt:16: field 'size': must not be negative, got '-2048'");
  EXPECT_EQ(error_of("t.txt",
                     with_row("node-a: Test NCCL failure common.cu:1025 'unhandled system error'")),
            "t.txt:16: field 'size': expected a whole number, got 'node-a:'");
  std::string reduce = kNcclText;
  reduce.replace(reduce.find("starting: all_reduce_perf"), 25, "starting: gather_perf");
  EXPECT_EQ(error_of("r.txt", reduce),
            "r.txt:16: field 'op': 'gather_perf' is not a collective ssgd models (all_reduce, "
            "reduce_scatter, all_gather, broadcast, all_to_all, reduce)");
}

// ---------------------------------------------------------------- nccl-tests JSON

// The layout nccl-tests' src/util.cu writes (version 3), one line in the
// real files, spread out here; 2 processes with 2 GPUs each.
const std::string kNcclJson = R"({"version":3,"start_time":"2025-06-01 10:00:00",
 "args":["./build/all_gather_perf","-b","8","-e","1G","-f","2","-g","2","-J","out.json"],
 "env":["PATH=/usr/bin"],"nccl_version":22703,
 "config":{"nthreads":1,"ngpus":2,"minimum_bytes":8,"maximum_bytes":1073741824,"step_factor":2,
   "warmup_iters":5,"iterations":20,"aggregated_iterations":1,"validation":1,"graph":0,
   "blocking_collectives":"false","per_iter_timing":"false","per_iter_skip":0,"parallel_init":"false",
   "devices":[{"rank":0,"group":0,"pid":11,"hostname":"a","device":0,"device_hex":"0000:8d:00","device_info":"NVIDIA H100"},
              {"rank":2,"group":0,"pid":21,"hostname":"b","device":0,"device_hex":"0000:8d:00","device_info":"NVIDIA H100"}]},
 "results":[
  {"size":0,"count":0,"type":"float","redop":"none","root":"    -1",
   "out_of_place":{"time":0.2,"alg_bw":0.0,"bus_bw":0.0,"nwrong":0.0},
   "in_place":{"time":0.2,"alg_bw":0.0,"bus_bw":0.0,"nwrong":0.0},"actual_iterations":20,"experiment_name":""},
  {"size":1048576,"count":65536,"type":"float","redop":"none","root":"    -1",
   "out_of_place":{"time":50.500000,"alg_bw":20.76,"bus_bw":15.57,"nwrong":0.0},
   "in_place":{"time":49.000000,"alg_bw":21.40,"bus_bw":16.05,"nwrong":0.0},"actual_iterations":20,"experiment_name":""}],
 "out_of_bounds":{"count":0,"okay":"true"},"average_bus_bandwidth":{"bandwidth":15.57,"okay":"unchecked"},
 "errors":[],"end_time":"2025-06-01 10:00:05"})";

TEST_F(Calibration, NcclTestsJson) {
  const auto m = trace::read_measurements(write_file("ag.json", kNcclJson), {});
  ASSERT_EQ(m.size(), 1u) << "the 0-byte result is skipped";
  EXPECT_EQ(m[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(m[0].ranks, 4) << "2 processes x 1 thread x 2 GPUs";
  EXPECT_EQ(m[0].bytes, 1048576);
  EXPECT_EQ(m[0].time, Duration(50'500));
  trace::MeasurementOptions in_place;
  in_place.in_place = true;
  EXPECT_EQ(trace::read_measurements(write_file("ag.json", kNcclJson), in_place)[0].time,
            Duration(49'000));
}

TEST_F(Calibration, NcclTestsJsonErrorsNameThePath) {
  const auto edit = [](const std::string& from, const std::string& to) {
    std::string t = kNcclJson;
    return t.replace(t.find(from), from.size(), to);
  };
  EXPECT_EQ(
      error_of("j.json", edit(R"("time":50.500000)", R"("time":"nan")")),
      "j.json: field 'results[1].out_of_place.time': expected a number, got the string \"nan\"");
  EXPECT_EQ(error_of("j.json", edit(R"("time":50.500000)", R"("time":-3)")),
            "j.json: field 'results[1].out_of_place.time': must be greater than zero, got -3");
  EXPECT_EQ(error_of("j.json", edit(R"("size":1048576)", R"("size":-1048576)")),
            "j.json: field 'results[1].size': must not be negative, got -1048576");
  EXPECT_EQ(error_of("j.json", edit(R"("size":1048576)", R"("size":"big")")),
            "j.json: field 'results[1].size': expected a whole number, got the string \"big\"");
  EXPECT_EQ(
      error_of(
          "j.json",
          edit(R"("out_of_place":{"time":50.500000,"alg_bw":20.76,"bus_bw":15.57,"nwrong":0.0})",
               R"("out_of_place":null)")),
      "j.json: field 'results[1].out_of_place': missing: this run measured no out-of-place "
      "time (use --in-place)");
  EXPECT_EQ(error_of("j.json", edit("./build/all_gather_perf", "./build/sendrecv_perf")),
            "j.json: field 'args[0]': './build/sendrecv_perf' is not a collective ssgd models "
            "(all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, reduce)");
  EXPECT_EQ(
      error_of("j.json", edit("./build/all_gather_perf", "./run.sh")),
      "j.json: field 'args': the command line does not name an nccl-tests collective; give --op");
  EXPECT_THAT(error_of("j.json", "{\"version\": 3, \"results\": [}"),
              HasSubstr("j.json: not valid JSON: "));
  EXPECT_EQ(error_of("j.json", R"({"args":["all_reduce_perf"],"results":[]})"),
            "j.json: field 'config.devices': no devices listed and --ranks was not given: the "
            "number of ranks is unknown");
}

// ---------------------------------------------------------------- traces

namespace v1 = trace::v1;

v1::Event collective(v1::Collective::Op op, std::uint64_t comm, std::uint64_t seq, int rank,
                     int nranks, std::int64_t bytes, std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.set_rank(rank);
  v1::Collective* c = e.mutable_collective();
  c->set_op(op);
  c->set_communicator_id(comm);
  c->set_sequence_number(seq);
  c->set_rank(rank);
  c->set_nranks(nranks);
  c->set_size_bytes(bytes);
  c->set_start_ns(start);
  c->set_end_ns(end);
  return e;
}

class CalibrationTrace : public Calibration {
 protected:
  std::filesystem::path trace(const std::vector<v1::Event>& events) {
    return ssgd::testing::write_synthetic_trace(dir_ / "run.ssgdt", events, "calibration_test", 3);
  }
  std::string trace_error(const std::vector<v1::Event>& events) {
    const auto p = trace(events);
    try {
      trace::read_measurements(p, {});
    } catch (const InputError& e) {
      std::string s = e.what();
      return s.substr(s.find("run.ssgdt"));
    }
    return "no error";
  }
};

TEST_F(CalibrationTrace, InstancesTakeTheTimeAfterTheLastArrival) {
  constexpr auto kAr = v1::Collective::ALL_REDUCE;
  constexpr auto kAg = v1::Collective::ALL_GATHER;
  const auto m = trace::read_measurements(
      trace({
          // all-reduce 0 of communicator 7: ranks start at 100, 130, 120; ends at 400, 410, 405.
          collective(kAr, 7, 0, 0, 3, 4096, 100, 400),
          collective(kAr, 7, 0, 1, 3, 4096, 130, 410),
          collective(kAr, 7, 1, 0, 3, 8192, 1000, 1500),  // sequence 1 interleaved
          collective(kAr, 7, 0, 2, 3, 4096, 120, 405),
          collective(kAr, 7, 1, 1, 3, 8192, 1000, 1600),
          collective(kAr, 7, 1, 2, 3, 8192, 1100, 1550),
          // all-gather: records hold the gathered buffer (trace_events.proto), M.
          collective(kAg, 7, 2, 0, 3, 3000, 2000, 2100),
          collective(kAg, 7, 2, 1, 3, 3000, 2000, 2100),
          collective(kAg, 7, 2, 2, 3, 3000, 2010, 2100),
          // incomplete (rank 1 missing) and a send: left out.
          collective(kAr, 7, 3, 0, 3, 64, 3000, 3100),
          collective(kAr, 7, 3, 2, 3, 64, 3000, 3100),
          collective(v1::Collective::SEND, 9, 0, 0, 2, 64, 3000, 3100),
      }),
      {});
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(m[0].ranks, 3);
  EXPECT_EQ(m[0].bytes, 4096);
  EXPECT_EQ(m[0].time, Duration(410 - 130));
  EXPECT_EQ(m[1].bytes, 8192);
  EXPECT_EQ(m[1].time, Duration(1600 - 1100));
  EXPECT_EQ(m[2].op, CollectiveOp::kAllGather);
  EXPECT_EQ(m[2].bytes, 3000);
  EXPECT_EQ(m[2].time, Duration(90));
}

TEST_F(CalibrationTrace, BadRecordsNameTheRecordAndField) {
  constexpr auto kAr = v1::Collective::ALL_REDUCE;
  // An end before the start, a rank outside nranks and a negative size break
  // the trace's rules (traces/event_rules.h): no writer writes them and the
  // reader refuses them (trace_container_test.cc).
  EXPECT_THROW(trace_error({collective(kAr, 7, 0, 0, 2, 64, 100, 50)}), trace::InvalidTraceContent);
  EXPECT_EQ(
      trace_error(
          {collective(kAr, 7, 0, 0, 2, 64, 100, 200), collective(kAr, 7, 0, 0, 2, 64, 100, 200)}),
      "run.ssgdt: record 1: field 'collective.sequence_number': ALL_REDUCE sequence 0 of "
      "communicator 0x7, rank 0, is recorded twice (first at record 0): the same collective "
      "counted twice would double its communication");
  EXPECT_EQ(
      trace_error(
          {collective(kAr, 7, 0, 0, 2, 64, 100, 200), collective(kAr, 7, 0, 1, 2, 128, 100, 200)}),
      "run.ssgdt: record 1: field 'collective.size_bytes': 128 for communicator 0x7 sequence 0, "
      "which record 0 gives 64");
  EXPECT_EQ(
      trace_error(
          {collective(kAr, 7, 0, 0, 2, 64, 100, 200), collective(kAr, 7, 0, 1, 4, 64, 100, 200)}),
      "run.ssgdt: record 1: field 'collective.nranks': 4 for communicator 0x7 sequence 0, which "
      "record 0 gives 2");
  EXPECT_THROW(trace_error({collective(kAr, 7, 0, 2, 2, 64, 100, 200)}), trace::InvalidTraceContent);
  EXPECT_THROW(trace_error({collective(kAr, 7, 0, 0, 2, -64, 100, 200)}), trace::InvalidTraceContent);
  EXPECT_EQ(
      trace_error(
          {collective(kAr, 7, 0, 0, 2, 64, 100, 200), collective(kAr, 7, 0, 1, 2, 64, 200, 200)}),
      "run.ssgdt: record 1: field 'collective.end_ns': the collective takes no time after its "
      "last rank arrived");
  EXPECT_EQ(trace_error({collective(kAr, 7, 0, 0, 2, 64, 100, 200)}),
            "run.ssgdt: holds no usable measurements (read as auto)");
  // nranks 0 is the format's "not recorded" (the reader lets it through);
  // a measurement needs the group's size.
  EXPECT_EQ(trace_error({collective(kAr, 7, 0, 0, 0, 64, 100, 200)}),
            "run.ssgdt: record 0: field 'collective.nranks': must be at least 1, got 0");
}

// ---------------------------------------------------------------- detection

TEST_F(Calibration, FormatFromContentOrFlag) {
  EXPECT_EQ(error_of("x.txt", "hello\n"),
            "x.txt: not recognised as an OSU log, nccl-tests output (text or JSON) or an ssgd "
            "trace; give --format (auto, osu, nccl-tests, nccl-tests-json, trace)");
  // A header-less OSU file read as osu with flags.
  trace::MeasurementOptions o;
  o.format = trace::MeasurementFormat::kOsu;
  o.op = CollectiveOp::kAllReduce;
  o.ranks = 2;
  EXPECT_EQ(trace::read_measurements(write_file("bare.log", "4 31.9\n8 32.2\n"), o).size(), 2u);
  EXPECT_EQ(trace::parse_measurement_format("nccl-tests-json"), trace::MeasurementFormat::kNcclJson);
  EXPECT_EQ(trace::parse_measurement_format("csv"), std::nullopt);
  EXPECT_EQ(trace::op_from_benchmark_name("./build/alltoall_perf_mpi"), CollectiveOp::kAllToAll);
  EXPECT_EQ(trace::op_from_benchmark_name("alltoallv_perf"), std::nullopt);
  EXPECT_EQ(trace::op_from_benchmark_name("OSU MPI Reduce_scatter Latency Test v5.6.3"),
            CollectiveOp::kReduceScatter);
  EXPECT_EQ(trace::op_from_benchmark_name("OSU MPI Broadcast Latency Test"), CollectiveOp::kBroadcast);
  EXPECT_EQ(trace::op_from_benchmark_name("OSU MPI Allgatherv Latency Test"), std::nullopt);
  EXPECT_EQ(trace::op_from_benchmark_name("reduce_perf"), CollectiveOp::kReduce);
}

}  // namespace
}  // namespace ssgd::sim
