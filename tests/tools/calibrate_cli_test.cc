// `ssgd calibrate`, run as a real process (SSGD_CLI) in a fresh temporary
// folder per test, with stdout and stderr captured apart.
//
// Positive: measurement files in, a table out, and a calibration file that
// read_network_calibration accepts. Negative: a garbage line, an unknown op,
// algorithm or format, an impossible output path: exit status 2, a message
// on stderr naming the file, line and field (or the flag and the valid
// values), nothing on stdout and no output file, not even a temporary one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "simulator/calibration/network_calibration.h"
#include "traces/trace_writer.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;

constexpr int kBadInput = 2;
const fs::path kBcaffe = fs::path(SSGD_SOURCE_DIR) / "../shared/data/bcaffe";

using Result = ssgd::testing::CliResult;

// An OSU all-reduce curve with a latency term per ring step and a bandwidth
// term, over `ranks` nodes ("nodes,bytes latency_us" lines).
std::string osu_log(int ranks, double alpha_us, double bytes_per_us) {
  std::string s = "# OSU MPI Allreduce Latency Test v5.4.0\n# Size       Avg Latency(us)\n";
  for (long bytes = 1024; bytes <= (1L << 20); bytes *= 2) {
    const double steps = 2.0 * (ranks - 1);
    const double us = steps * alpha_us + steps / ranks * static_cast<double>(bytes) / bytes_per_us;
    s += std::to_string(ranks) + "," + std::to_string(bytes) + "   " + std::to_string(us) + "\n";
  }
  return s;
}

class CalibrateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ssgd_calibrate_cli_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    work_ = root_ / "work";
    fs::create_directories(work_);
    write_file_bytes(work_ / "ar2.log", osu_log(2, 20, 1000));
    write_file_bytes(work_ / "ar4.log", osu_log(4, 20, 1000));
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs `ssgd calibrate args...` in the work folder.
  Result calibrate(std::vector<std::string> args) {
    args.insert(args.begin(), "calibrate");
    Result r = ssgd::testing::run_cli(SSGD_CLI, args, work_, root_);
    if (!r.exited && r.signal == 0) ADD_FAILURE() << "could not run " << SSGD_CLI;
    return r;
  }

  // Expects exit 2 with "ssgd: error: " and nothing else written.
  Result fails(const std::vector<std::string>& args) {
    std::vector<std::string> with_output = args;
    with_output.insert(with_output.end(), {"-o", "net.yaml"});
    Result r = calibrate(with_output);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: ")) << r;
    EXPECT_FALSE(fs::exists(work_ / "net.yaml"));
    for (const auto& e : fs::directory_iterator(work_)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos)
          << "left behind: " << e.path();
    }
    return r;
  }

  fs::path root_;
  fs::path work_;
};

TEST_F(CalibrateCli, WritesAFileTheSimulatorReads) {
  const Result r = calibrate({"ar2.log", "ar4.log", "--holdout", "3", "-o", "net.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("ssgd calibrate: 22 measurements from 2 file(s)"));
  EXPECT_THAT(r.out,
              HasSubstr("all_reduce over 2, 4 ranks: ring terms, 1 band(s) found (at most 4)"));
  EXPECT_THAT(r.out, HasSubstr("held back, 4 ranks: 3 sizes predicted"));
  EXPECT_THAT(r.out, HasSubstr("wrote net.yaml"));
  const auto cal = ssgd::sim::read_network_calibration(work_ / "net.yaml");
  ASSERT_EQ(cal.collectives.size(), 1u);
  const auto& c = cal.collectives[0];
  EXPECT_EQ(c.op, ssgd::sim::CollectiveOp::kAllReduce);
  EXPECT_EQ(c.ranks, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(c.sources, (std::vector<std::string>{"ar2.log", "ar4.log"}));
  ASSERT_EQ(c.bands.size(), 1u);
  EXPECT_NEAR(static_cast<double>(c.bands[0].latency.ns()), 20'000, 5);
  EXPECT_NEAR(c.bands[0].bandwidth_bytes_per_s, 1e9, 1e6);
}

// A point far off its band (a 3.5 ms scheduler slice in a 0.3 ms
// all-reduce) is named by file and line; a clean curve names none.
TEST_F(CalibrateCli, APointFarOffItsBandIsNamed) {
  const Result clean = calibrate({"ar2.log"});
  ASSERT_TRUE(clean.exited && clean.status == 0) << clean;
  EXPECT_THAT(clean.out, Not(HasSubstr("note:")));
  std::string log = osu_log(2, 20, 1000);
  const std::string line = "2,8192   ";
  const auto at = log.find(line);
  ASSERT_NE(at, std::string::npos);
  log.replace(at, log.find('\n', at) - at, "2,8192   3500.0");  // line 6
  write_file_bytes(work_ / "spiked.log", log);
  const Result r = calibrate({"spiked.log"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("note: spiked.log:6: 8.0 KiB over 2 ranks measured 3.500 ms"));
  EXPECT_THAT(r.out, HasSubstr("a regime the bands do not follow"));
}

TEST_F(CalibrateCli, PerRanksWritesTheJointFitFirst) {
  const Result r =
      calibrate({"ar2.log", "ar4.log", "--per-ranks", "--bands", "64KiB", "-o", "net.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const auto cal = ssgd::sim::read_network_calibration(work_ / "net.yaml");
  ASSERT_EQ(cal.collectives.size(), 3u);
  EXPECT_EQ(cal.collectives[0].ranks, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(cal.collectives[2].ranks, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(cal.collectives[0].bands[0].max_bytes, 65536);
  EXPECT_EQ(cal.find(ssgd::sim::CollectiveOp::kAllReduce, 4), &cal.collectives[2]);
  EXPECT_EQ(cal.find(ssgd::sim::CollectiveOp::kAllReduce, 8), &cal.collectives[0]);
}

TEST_F(CalibrateCli, DocumentedExampleOnTheBcaffeCurves) {
  if (!fs::exists(kBcaffe / "allreduce4.log")) {
    GTEST_SKIP() << "reference data not found at " << kBcaffe;
  }
  std::vector<std::string> args;
  for (const char* n : {"allreduce2.log", "allreduce4.log", "allreduce8.log"}) {
    args.push_back((kBcaffe / n).string());
  }
  args.insert(args.end(), {"--ranks", "4", "--per-ranks", "--holdout", "2", "-o", "net.yaml"});
  const Result r = calibrate(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("ssgd calibrate: 798 measurements from 3 file(s)"));
  EXPECT_THAT(r.out, HasSubstr("all_reduce over 8 ranks: ring terms"));
  EXPECT_EQ(ssgd::sim::read_network_calibration(work_ / "net.yaml").collectives.size(), 4u);
}

TEST_F(CalibrateCli, GarbageLineNamesFileLineAndField) {
  std::string text = osu_log(2, 20, 1000);
  text.replace(text.find("2,4096"), 6, "2,4096   fast\n2,5000");
  write_file_bytes(work_ / "bad.log", text);
  const Result r = fails({"ar2.log", "bad.log"});
  EXPECT_THAT(r.err,
              HasSubstr("ssgd: error: bad.log:5: field 'latency': expected a number, got 'fast'"));
}

TEST_F(CalibrateCli, NoUsablePoints) {
  write_file_bytes(work_ / "empty.log",
                   "# OSU MPI Allreduce Latency Test v5.4.0\n# Size  Avg Latency(us)\n");
  const Result r = fails({"empty.log"});
  EXPECT_THAT(r.err, HasSubstr("empty.log: holds no usable measurements"));
}

TEST_F(CalibrateCli, UnknownNamesListTheValidOnes) {
  Result r = fails({"ar2.log", "--op", "allreduce"});
  EXPECT_THAT(r.err, HasSubstr("'allreduce': field '--op': unknown op 'allreduce'; expected one "
                               "of all_reduce, reduce_scatter, all_gather, broadcast, all_to_all"));
  r = fails({"ar2.log", "--algorithm", "rabenseifner"});
  EXPECT_THAT(r.err, HasSubstr("'rabenseifner': field '--algorithm': unknown algorithm "
                               "'rabenseifner'; expected one of ring, double_binary_tree, "
                               "halving_doubling"));
  r = fails({"ar2.log", "--algorithm", "auto"});
  EXPECT_THAT(r.err, HasSubstr("field '--algorithm': unknown algorithm 'auto'; expected one of "
                               "ring, "));
  r = fails({"ar2.log", "--format", "csv"});
  EXPECT_THAT(r.err, HasSubstr("'csv': field '--format': unknown format 'csv'; expected one of "
                               "auto, osu, nccl-tests, nccl-tests-json, trace"));
  write_file_bytes(work_ / "ag.log",
                   "# OSU MPI Allgather Latency Test\n2,1024 10\n2,2048 11\n2,4096 12\n");
  r = fails({"ag.log", "--algorithm", "torus2d"});
  EXPECT_THAT(r.err, HasSubstr("'torus2d': field '--algorithm': collective: algorithm torus2d "
                               "does not implement all_gather; algorithms that do: ring, "
                               "halving_doubling"));
}

TEST_F(CalibrateCli, BadFlagsAndOutputs) {
  Result r = fails({"ar2.log", "--bands", "8KiB,4KiB"});
  EXPECT_THAT(r.err,
              HasSubstr("'8KiB,4KiB': field '--bands': band limits must be in increasing order"));
  r = fails({"ar2.log", "--bands", "8 apples"});
  EXPECT_THAT(r.err, HasSubstr("field '--bands': size '8 apples': unknown unit 'apples'"));
  r = fails({"ar2.log", "--holdout", "1"});
  EXPECT_THAT(r.err, HasSubstr("'1': field '--holdout': must be 0 (none) or at least 2"));
  r = fails({"ar2.log", "--ranks", "1"});
  EXPECT_THAT(r.err, HasSubstr("'1': field '--ranks': must be from 2 to 1073741824"));
  r = fails({"ar2.log", "--bands", "1GiB"});
  EXPECT_THAT(r.err, HasSubstr("ar2.log: field 'all_reduce': the last band holds fewer than 2"));
  r = calibrate({"ar2.log", "-o", "no/such/folder/net.yaml"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("net.yaml: field '--output': cannot write here: folder"));
  r = fails({"missing.log"});
  EXPECT_THAT(r.err, HasSubstr("missing.log: cannot read measurement file"));
}

// --tcp-streams fits the TCP stream model and writes its keys as a scenario
// that ssgd simulate takes.
TEST_F(CalibrateCli, TcpStreamsWritesScenarioKeys) {
  const Result r =
      calibrate({"ar2.log", "ar4.log", "--tcp-streams", "1", "--line-rate", "100gbe", "-o",
                 "tcp.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("all_reduce over 2, 4 ranks: ring steps, TCP stream model"));
  // The generator's curve is one stream of 1 GB/s with 20 us per step.
  EXPECT_THAT(r.out, HasSubstr("--set platform.nic.tcp_streams=1"));
  const std::string yaml = read_file_bytes(work_ / "tcp.yaml");
  EXPECT_THAT(yaml, HasSubstr("platform:\n  nic:\n    tcp_streams: 1\n    tcp_stream_rate: "));
  EXPECT_THAT(yaml, HasSubstr("    latency: "));
  write_file_bytes(work_ / "p.csv",
                   "layer,name,forward_ns,backward_ns,grad_bytes\n0,fc,1000000,2000000,4194304\n");
  write_file_bytes(work_ / "s.yaml", yaml + "cluster:\n  nodes: 4\nnetwork:\n  inter_node: 100gbe\n");
  const Result sim = ssgd::testing::run_cli(SSGD_CLI, {"simulate", "p.csv", "--scenario", "s.yaml"},
                                            work_, root_);
  EXPECT_TRUE(sim.exited && sim.status == 0) << sim;
}

TEST_F(CalibrateCli, TcpStreamsBadFlags) {
  Result r = fails({"ar2.log", "--tcp-streams", "0"});
  EXPECT_THAT(r.err, HasSubstr("field '--tcp-streams': expected 'auto' or a stream count from 1 to 64"));
  r = fails({"ar2.log", "--tcp-streams", "lots"});
  EXPECT_THAT(r.err, HasSubstr("field '--tcp-streams'"));
  r = fails({"ar2.log", "--line-rate", "10gbe"});
  EXPECT_THAT(r.err, HasSubstr("field '--line-rate': applies only with --tcp-streams"));
  r = fails({"ar2.log", "--tcp-streams", "auto", "--line-rate", "fast"});
  EXPECT_THAT(r.err, HasSubstr("field '--line-rate'"));
  r = fails({"ar2.log", "--tcp-streams", "auto", "--bands", "8KiB"});
  EXPECT_THAT(r.err, HasSubstr("field '--bands': does not apply with --tcp-streams"));
  r = fails({"ar2.log", "--tcp-streams", "auto", "--max-bands", "2"});
  EXPECT_THAT(r.err, HasSubstr("field '--max-bands': does not apply with --tcp-streams"));
  r = fails({"ar2.log", "--tcp-streams", "auto", "--level", "intra_node"});
  EXPECT_THAT(r.err, HasSubstr("field '--level': --tcp-streams fits the NIC's TCP streams"));
}

// An nccl-tests all_reduce_perf table over `ranks` ranks (8 a node), 1 MiB to
// 1 GiB, `us` + bytes / `gb_per_s` microseconds each.
std::string nccl_tests_table(int ranks, double us, double gb_per_s) {
  std::string s = "# Collective test starting: all_reduce_perf\n#\n";
  for (int r = 0; r < ranks; ++r) {
    s += "#  Rank " + std::to_string(r) + " Group  0 Pid 1 on node" + std::to_string(r / 8) +
         " device " + std::to_string(r % 8) + " [0000:00:00] NVIDIA H100 80GB HBM3\n";
  }
  s += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
       "algbw   busbw #wrong\n";
  for (long bytes = 1L << 20; bytes <= (1L << 30); bytes *= 4) {
    const double t = us + static_cast<double>(bytes) / (gb_per_s * 1e3);
    s += std::to_string(bytes) + " " + std::to_string(bytes / 4) + " float sum -1 " + std::to_string(t) +
         " 1.0 1.0 0 " + std::to_string(t) + " 1.0 1.0 0\n";
  }
  return s + "# Out of bounds values : 0 OK\n";
}

// --nic fits the platform's NIC through NCCL's model, predicts --predict's
// curves, and writes the factors as a scenario that ssgd simulate takes.
TEST_F(CalibrateCli, NicFitsThePlatformsNic) {
  write_file_bytes(work_ / "ar16.txt", nccl_tests_table(16, 60, 200));
  write_file_bytes(work_ / "ar64.txt", nccl_tests_table(64, 120, 180));
  const Result r = calibrate({"ar16.txt", "--nic", "--set", "platform.preset=hgx_h100", "--predict",
                              "ar64.txt", "-o", "nic.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("platform hgx_h100, 8 NIC(s) a node: bandwidth x "));
  EXPECT_THAT(r.out, HasSubstr("fitted: all_reduce over 16 ranks (2 node(s)) from ar16.txt"));
  EXPECT_THAT(r.out, HasSubstr("predicted: all_reduce over 64 ranks (8 node(s)) from ar64.txt"));
  EXPECT_THAT(r.out, HasSubstr("scenario keys: --set perturb.bandwidth_factors=nic:"));
  const std::string yaml = read_file_bytes(work_ / "nic.yaml");
  EXPECT_THAT(yaml, HasSubstr("perturb:\n  bandwidth_factors: nic:"));
  EXPECT_THAT(yaml, HasSubstr("\n  latency_factors: nic:"));
  write_file_bytes(work_ / "p.csv",
                   "layer,name,forward_ns,backward_ns,grad_bytes\n0,fc,1000000,2000000,4194304\n");
  const Result sim = ssgd::testing::run_cli(
      SSGD_CLI, {"simulate", "p.csv", "--scenario", "nic.yaml", "--set", "platform.preset=hgx_h100", "--set",
                 "cluster.nodes=2"},
      work_, root_);
  EXPECT_TRUE(sim.exited && sim.status == 0) << sim;
}

TEST_F(CalibrateCli, NicBadFlags) {
  write_file_bytes(work_ / "ar16.txt", nccl_tests_table(16, 60, 200));
  write_file_bytes(work_ / "ar12.txt", nccl_tests_table(12, 60, 200));
  Result r = fails({"ar16.txt", "--predict", "ar16.txt"});
  EXPECT_THAT(r.err, HasSubstr("field '--predict': applies only with --nic"));
  r = fails({"ar16.txt", "--set", "platform.preset=hgx_h100"});
  EXPECT_THAT(r.err, HasSubstr("'platform.preset=hgx_h100': field '--set': applies only with --nic"));
  r = fails({"ar16.txt", "--nic", "--bands", "8KiB"});
  EXPECT_THAT(r.err, HasSubstr("field '--bands': does not apply with --nic"));
  r = fails({"ar16.txt", "--nic", "--set", "platform.preset=hgx_h100", "--predict", "missing.txt"});
  EXPECT_THAT(r.err, HasSubstr("missing.txt"));
  r = fails({"ar12.txt", "--nic", "--set", "platform.preset=hgx_h100"});
  EXPECT_THAT(r.err, HasSubstr("field 'nranks': 12 ranks are not whole nodes of the scenario's 8 GPUs"));
  r = fails({"ar16.txt", "--nic", "--set", "platform.preset=nonesuch"});
  EXPECT_THAT(r.err, HasSubstr("platform.preset"));
}

// --scheduler: a trace of three partitions launched 5 us apart in one burst;
// the first starts 3 us after its launch, the others 4 us after the one
// before them ends.
void write_partition_trace(const fs::path& path, bool linked) {
  namespace v1 = ssgd::trace::v1;
  v1::CaptureMetadata m;
  m.set_tool("calibrate_cli_test");
  ssgd::trace::TraceWriter writer(path, m, {});
  for (int i = 0; i < 3; ++i) {
    v1::Event call;
    auto* a = call.mutable_api_call();
    a->set_api(v1::ApiCall::FRAMEWORK);
    a->set_name("c10d::allreduce_");
    a->set_thread_id(1);
    a->set_start_ns(100'000 + 5'000 * i);
    a->set_end_ns(101'000 + 5'000 * i);
    a->set_correlation_id(static_cast<std::uint64_t>(i + 1));
    writer.append(call);
  }
  for (int i = 0; i < 3; ++i) {
    v1::Event e;
    auto* c = e.mutable_collective();
    c->set_op(v1::Collective::ALL_REDUCE);
    c->set_nranks(2);
    c->set_communicator_id(7);
    c->set_sequence_number(static_cast<std::uint64_t>(i));
    c->set_size_bytes(262144);
    c->set_stream(2);
    c->set_start_ns(104'000 + 50'000 * i);
    c->set_end_ns(150'000 + 50'000 * i);
    c->set_correlation_id(linked ? static_cast<std::uint64_t>(i + 1) : 0);
    writer.append(e);
  }
  writer.close();
}

TEST_F(CalibrateCli, SchedulerWritesPolicyKeys) {
  write_partition_trace(work_ / "p.ssgdt", true);
  const Result r = calibrate({"--scheduler", "p.ssgdt", "-o", "sched.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("3 collective(s) in p.ssgdt, 3 linked to their launch on 1 rank(s)"));
  EXPECT_THAT(r.out, HasSubstr("partition_overhead  5.000 us"));
  EXPECT_THAT(r.out, HasSubstr("in 1 burst(s)"));
  EXPECT_THAT(r.out, HasSubstr("--set policy.partition_overhead=5000ns "
                               "--set policy.schedule_overhead=4000ns"));
  const std::string yaml = read_file_bytes(work_ / "sched.yaml");
  EXPECT_THAT(yaml, HasSubstr("policy:\n  partition_overhead: 5000ns\n  schedule_overhead: 4000ns\n"));
  // The file is a scenario the simulator takes.
  write_file_bytes(work_ / "p.csv",
                   "layer,name,forward_ns,backward_ns,grad_bytes\n0,fc,1000000,2000000,4194304\n");
  write_file_bytes(work_ / "s.yaml", yaml + "cluster:\n  nodes: 2\n");
  const Result sim = ssgd::testing::run_cli(
      SSGD_CLI, {"simulate", "p.csv", "--scenario", "s.yaml", "--set", "policy.overlap=priority"},
      work_, root_);
  EXPECT_TRUE(sim.exited && sim.status == 0) << sim;
}

TEST_F(CalibrateCli, SchedulerBadInputsAndFlags) {
  write_partition_trace(work_ / "p.ssgdt", true);
  write_partition_trace(work_ / "unlinked.ssgdt", false);
  Result r = fails({"--scheduler", "unlinked.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("unlinked.ssgdt: field 'collective.correlation_id': none of its 3 "
                               "collective(s) is linked"));
  r = fails({"--scheduler", "p.ssgdt", "--bands", "8KiB"});
  EXPECT_THAT(r.err, HasSubstr("--bands"));
  EXPECT_THAT(r.err, HasSubstr("does not apply with --scheduler"));
  r = fails({"--scheduler", "p.ssgdt", "--format", "osu"});
  EXPECT_THAT(r.err, HasSubstr("--scheduler reads ssgd traces only"));
  r = fails({"--scheduler", "p.ssgdt", "p.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("fits one trace at a time, got 2"));
  r = fails({"--scheduler", "ar2.log"});
  EXPECT_THAT(r.err, HasSubstr("ar2.log"));
}

// --interference on two captures of the emulated cluster (traces/datasets/
// cpu-cluster): the host's factors, written as a scenario the simulator takes.
TEST_F(CalibrateCli, InterferenceWritesKeysTheSimulatorTakes) {
  const fs::path d = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-cluster/configs";
  const std::string on = (d / "mlp-w2-1gbit-b25/trace.ssgdt").string();
  const std::string off = (d / "mlp-w2-1gbit-nooverlap/trace.ssgdt").string();
  const Result r = calibrate({"--interference", on, off, "-o", "intf.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("host operators (no GPU kernel)"));
  EXPECT_THAT(r.out, HasSubstr("interference.host.compute    +"));
  EXPECT_THAT(r.out, HasSubstr("--set interference.model=contention --set interference.host.compute="));
  // Host traces: the first-principles alternative to the fit, once.
  EXPECT_THAT(r.out, HasSubstr("first principles: where a rank's training thread and the "
                               "library's workers share one CPU budget"));
  const std::string yaml = read_file_bytes(work_ / "intf.yaml");
  EXPECT_THAT(yaml, HasSubstr("interference:\n  model: contention\n  host:\n    compute: "));
  write_file_bytes(work_ / "s.yaml", yaml + "cluster:\n  nodes: 2\n");
  const Result sim = ssgd::testing::run_cli(
      SSGD_CLI,
      {"simulate", (d / "mlp-w1/trace.ssgdt").string(), "--scenario", "s.yaml", "--set",
       "network.calibration=" + (d / "../network/1gbit-w2/calibration.yaml").string(), "--set",
       "policy.overlap=ddp"},
      work_, root_);
  ASSERT_TRUE(sim.exited && sim.status == 0) << sim;
  EXPECT_THAT(sim.out, HasSubstr("interference: contention, host factors (the input's compute ran "
                                 "on the host (no GPU kernel))"));
  EXPECT_THAT(sim.out, HasSubstr("added: compute +"));
}

// A comm factor below 0 beyond the calibration's own error: the collectives
// ran faster beside compute than the sweep has them alone, which no
// interference explains; written as 0, and the run says why (docs/calibration.md).
TEST_F(CalibrateCli, InterferenceSaysACommFactorBelowZeroMeasuresNothing) {
  const fs::path d = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-cluster";
  const Result r =
      calibrate({"--interference", (d / "configs/mlp-w2-1gbit-b25/trace.ssgdt").string(),
                 (d / "configs/mlp-w2-1gbit-nooverlap/trace.ssgdt").string(), "--calibration",
                 (d / "network/1gbit-w2/calibration.yaml").string()});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("note: host.comm: -7.7%, the collectives faster than their alone "
                               "times by more than the spread those stand against (2.5%)"));
  EXPECT_THAT(r.out, HasSubstr("--set interference.host.comm=0.000"));
}

// --interference with --calibration on two partitioned captures (traces/
// datasets/cpu-partitions): gloo's concurrent all-reduces give
// host.concurrent, which the simulator takes and applies to the collectives
// that wait behind another.
TEST_F(CalibrateCli, InterferenceConcurrentCollectivesWrittenAndReplayed) {
  const fs::path d = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-partitions";
  const std::string cal = (d / "network/unshaped-w2/calibration.yaml").string();
  const Result r =
      calibrate({"--interference", (d / "configs/mlp-w2-unshaped-b2-p1024/trace.ssgdt").string(),
                 (d / "configs/mlp-w2-unshaped-b2-p256/trace.ssgdt").string(), "--calibration", cal,
                 "-o", "conc.yaml"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("interference.host.concurrent +326.6% (10th-90th percentile"));
  EXPECT_THAT(r.out, HasSubstr("busy periods of 1853 collectives of 4 size(s)"));
  EXPECT_THAT(r.out, HasSubstr("counts both"));
  const std::string yaml = read_file_bytes(work_ / "conc.yaml");
  EXPECT_THAT(yaml, HasSubstr("    concurrent: 3.266\n"));
  // Only the concurrent factor, on the 64 KiB capture with its scenario.
  const fs::path p64 = d / "configs/mlp-w2-unshaped-b2-p64";
  const Result sim = ssgd::testing::run_cli(
      SSGD_CLI,
      {"simulate", (p64 / "trace.ssgdt").string(), "--scenario", (p64 / "scenario.yaml").string(),
       "--set", "interference.model=contention", "--set", "interference.host.concurrent=3.266"},
      work_, root_);
  ASSERT_TRUE(sim.exited && sim.status == 0) << sim;
  EXPECT_THAT(sim.out, HasSubstr("a collective that waited behind another of its group +326.6%"));
  EXPECT_THAT(sim.out, HasSubstr("5190 of 5210 collectives waited behind another of their group"));
}

TEST_F(CalibrateCli, InterferenceBadInputsAndFlags) {
  const fs::path d = fs::path(SSGD_SOURCE_DIR) / "traces/datasets";
  // One GPU, no collective: nothing overlapped.
  const std::string lone = (d / "h200-pytorch/resnet50-fp32/trace.ssgdt").string();
  Result r = fails({"--interference", lone});
  EXPECT_THAT(r.err, HasSubstr("resnet50-fp32/trace.ssgdt: field 'collective': the trace has no "
                               "collective records"));
  const std::string on = (d / "cpu-cluster/configs/mlp-w2-1gbit-b25/trace.ssgdt").string();
  r = fails({"--interference", on, "--bands", "8KiB"});
  EXPECT_THAT(r.err, HasSubstr("does not apply with --interference"));
  r = fails({"--interference", "--scheduler", on});
  EXPECT_THAT(r.err, HasSubstr("one fit at a time"));
  r = fails({"--interference", "ar2.log"});
  EXPECT_THAT(r.err, HasSubstr("ar2.log"));
  // Collectives and no compute.
  write_partition_trace(work_ / "p.ssgdt", true);
  r = fails({"--interference", "p.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("p.ssgdt: field 'kernel': no compute record"));
  // Compute always beside a collective, never alone: nothing measured, so -o
  // is refused before anything is printed; without -o it says so.
  {
    namespace v1 = ssgd::trace::v1;
    v1::CaptureMetadata m;
    m.set_tool("calibrate_cli_test");
    ssgd::trace::TraceWriter writer(work_ / "always.ssgdt", m, {});
    for (int i = 0; i < 4; ++i) {
      v1::Event op;
      auto* k = op.mutable_kernel();
      k->set_name("aten::mm");
      k->set_device(-1);
      k->set_stream(1);
      k->set_start_ns(1'000 + 10'000 * i);
      k->set_end_ns(2'000 + 10'000 * i);
      writer.append(op);
      v1::Event e;
      auto* c = e.mutable_collective();
      c->set_op(v1::Collective::ALL_REDUCE);
      c->set_nranks(2);
      c->set_size_bytes(4096);
      c->set_start_ns(500 + 10'000 * i);
      c->set_end_ns(3'000 + 10'000 * i);
      writer.append(e);
    }
    writer.close();
  }
  r = fails({"--interference", "always.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("no factor was measured in 1 trace(s)"));
  r = calibrate({"--interference", "always.ssgdt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("interference.host.compute    not measured"));
  EXPECT_THAT(r.out, HasSubstr("no factor measured: no scenario keys"));
}

}  // namespace
