// Clock calibration of a capture (tracer/core/capture_calibration.h) and
// its settings in the process session: the start and end estimates against
// a server whose clock is shifted by a known offset, a server gone at the
// end, malformed settings, and end to end: two forked traced processes that
// claim different host names write rank files with the calibration in the
// header (start) and the footer (start and end), and `ssgd merge`'s library
// aligns them without --force to the server's host, which ran no rank.
#include "tracer/core/capture_calibration.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "tests/support/test_files.h"
#include "tests/support/tracer_test_doubles.h"
#include "tracer/core/process_session.h"
#include "traces/clock_calibration.h"
#include "traces/merge/trace_merge.h"
#include "traces/trace_reader.h"

namespace ssgd::tracer {
namespace {

namespace fs = std::filesystem;
namespace v1 = trace::v1;
using namespace std::chrono_literals;

constexpr std::int64_t kShiftNs = 5'000'000'000;

using ssgd::testing::map_env;
using ssgd::testing::shifted_clock_server;

bool within(const v1::ClockOffsetSample& s, std::int64_t true_offset) {
  return std::llabs(s.offset_ns() - true_offset) <= s.uncertainty_ns();
}

TEST(CaptureCalibrationTest, StartAndEndEstimatesAgainstAShiftedServer) {
  auto server = shifted_clock_server(-kShiftNs, "login0");
  ASSERT_TRUE(server);
  ClockCalibrationSettings settings;
  settings.server = ClockServerAddress{"127.0.0.1", server->port()};
  std::vector<std::string> log;
  CaptureCalibration calibration(settings, read_event_clock_ns,
                                 [&](std::string_view m) { log.emplace_back(m); });
  const auto header = calibration.measure_start();
  ASSERT_TRUE(header);
  EXPECT_EQ(header->reference_hostname(), "login0");
  EXPECT_TRUE(within(header->start(), -kShiftNs)) << header->DebugString();
  EXPECT_FALSE(header->has_end());
  EXPECT_TRUE(calibration.note().empty());
  const auto footer = calibration.measure_end();
  ASSERT_TRUE(footer);
  EXPECT_EQ(footer->start().SerializeAsString(), header->start().SerializeAsString());
  EXPECT_TRUE(within(footer->end(), -kShiftNs)) << footer->DebugString();
  EXPECT_GT(footer->end().measured_at_ns(), footer->start().measured_at_ns());
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[0].find("clock offset to 'login0' at the start: -"), std::string::npos) << log[0];
}

TEST(CaptureCalibrationTest, AServerGoneAtTheEndLeavesTheStartInTheFooter) {
  auto server = shifted_clock_server(kShiftNs, "login0");
  ASSERT_TRUE(server);
  ClockCalibrationSettings settings;
  settings.server = ClockServerAddress{"127.0.0.1", server->port()};
  settings.budget = 200ms;
  settings.reference = "login0.cluster";  // SSGD_TRACER_CLOCK_REFERENCE
  std::vector<std::string> log;
  CaptureCalibration calibration(settings, read_event_clock_ns,
                                 [&](std::string_view m) { log.emplace_back(m); });
  ASSERT_TRUE(calibration.measure_start());
  server.reset();
  const auto footer = calibration.measure_end();
  ASSERT_TRUE(footer);
  EXPECT_EQ(footer->reference_hostname(), "login0.cluster");
  EXPECT_TRUE(within(footer->start(), kShiftNs));
  EXPECT_FALSE(footer->has_end());
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("clock calibration at the end: no reply from 127.0.0.1:"),
            std::string::npos)
      << log.back();
}

TEST(CaptureCalibrationTest, NoServerLeavesANoteAndNoCalibration) {
  ClockCalibrationSettings settings;
  settings.server = ClockServerAddress{"127.0.0.1", 9};  // discard: nobody answers
  settings.budget = 100ms;
  CaptureCalibration calibration(settings, read_event_clock_ns, nullptr);
  EXPECT_FALSE(calibration.measure_start());
  EXPECT_NE(calibration.note().find("no clock calibration: no reply from 127.0.0.1:9"),
            std::string::npos)
      << calibration.note();
  EXPECT_FALSE(calibration.measure_end());
}

TEST(CaptureCalibrationTest, ClockSettingsAreReadAndMalformedOnesSetAside) {
  SessionSettings s = read_session_settings(map_env({{"SSGD_TRACER_CLOCK_SERVER", "node0:4791"},
                                                    {"SSGD_TRACER_CLOCK_REFERENCE", "node0"},
                                                    {"SSGD_TRACER_CLOCK_TIMEOUT_MS", "250"},
                                                    {"SSGD_TRACER_HOSTNAME", "fake7"}}));
  EXPECT_TRUE(s.problems.empty());
  ASSERT_TRUE(s.clock.server);
  EXPECT_EQ(s.clock.server->to_string(), "node0:4791");
  EXPECT_EQ(s.clock.reference, "node0");
  EXPECT_EQ(s.clock.budget, 250ms);
  EXPECT_EQ(s.hostname, "fake7");

  s = read_session_settings(map_env({{"SSGD_TRACER_CLOCK_SERVER", "node0"},
                                    {"SSGD_TRACER_CLOCK_REFERENCE", "node0"},
                                    {"SSGD_TRACER_CLOCK_TIMEOUT_MS", "0"},
                                    {"SSGD_TRACER_HOSTNAME", "two words"}}));
  EXPECT_FALSE(s.clock.server);
  EXPECT_EQ(s.clock.budget, 500ms);
  EXPECT_TRUE(s.hostname.empty());
  const std::vector<std::string> expected{
      "SSGD_TRACER_CLOCK_SERVER='node0': expected HOST:PORT, e.g. node0:4791; no clock "
      "calibration",
      "SSGD_TRACER_CLOCK_REFERENCE is set but no usable SSGD_TRACER_CLOCK_SERVER; no clock "
      "calibration",
      "SSGD_TRACER_CLOCK_TIMEOUT_MS='0' is not in 1..60000; using 500",
      "SSGD_TRACER_HOSTNAME='two words' is not a host name; using gethostname()"};
  EXPECT_EQ(s.problems, expected);

  s = read_session_settings(map_env({{"SSGD_TRACER_CLOCK_TIMEOUT_MS", "soon"},
                                    {"SSGD_TRACER_CLOCK_SERVER", "[::1]:99999"}}));
  ASSERT_EQ(s.problems.size(), 2u);
  EXPECT_EQ(s.problems[0],
            "SSGD_TRACER_CLOCK_SERVER='[::1]:99999': the port 99999 is not in 1..65535; no clock "
            "calibration");
  EXPECT_NE(s.problems[1].find("SSGD_TRACER_CLOCK_TIMEOUT_MS='soon' "), std::string::npos);
}

class SessionClockTest : public ssgd::testing::TempDirTest {
 protected:
  // Runs a traced process (fork) that claims `hostname`, appends one kernel
  // at its event clock's now and exits; returns that kernel's start.
  std::int64_t run_rank(int rank, const std::string& hostname, const std::string& server) {
    int pipe_fds[2];
    EXPECT_EQ(::pipe(pipe_fds), 0);
    const pid_t child = ::fork();
    EXPECT_GE(child, 0);
    if (child == 0) {
      ::close(pipe_fds[0]);
      ::setenv("SSGD_TRACER_OUT", (dir_ / "run").c_str(), 1);
      ::setenv("SSGD_TRACER_FLUSH_MS", "0", 1);
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", "2", 1);
      ::setenv("SSGD_TRACER_HOSTNAME", hostname.c_str(), 1);
      ::setenv("SSGD_TRACER_CLOCK_SERVER", server.c_str(), 1);
      ProcessSession& session = ProcessSession::get();
      if (!session.is_open()) ::_exit(20);
      const std::int64_t t = read_event_clock_ns();
      KernelActivity k;
      k.start_ns = t;
      k.end_ns = t + 1000;
      if (session.append(ActivityRecord{k, "gemm"}) != AppendStatus::kStored) ::_exit(21);
      if (::write(pipe_fds[1], &t, sizeof t) != sizeof t) ::_exit(22);
      std::exit(0);  // atexit: the end estimate, the footer
    }
    ::close(pipe_fds[1]);
    std::int64_t t = 0;
    EXPECT_EQ(::read(pipe_fds[0], &t, sizeof t), static_cast<ssize_t>(sizeof t));
    ::close(pipe_fds[0]);
    int status = 0;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    return t;
  }

  // A clock server in a process of its own. The ranks are forked from this
  // process, which must then have no other thread: a thread inside malloc
  // while another forks leaves the child's allocator locked for good (seen
  // under ASan with clang 14, whose allocator takes no lock around fork: the
  // rank's writer thread waited forever in free()).
  struct ServerProcess {
    pid_t pid = -1;
    std::uint16_t port = 0;
    int stop_fd = -1;    // a byte written here stops the server
    int result_fd = -1;  // then its answered count arrives here
  };
  static ServerProcess start_server_process(std::int64_t shift_ns, const std::string& name) {
    // Close-on-exec, and each side closes the ends it does not use: a server
    // whose test died sees its stop pipe's end and exits, and the ranks
    // forked later hold none of them.
    int port_pipe[2], stop_pipe[2], result_pipe[2];
    ServerProcess sp;
    if (::pipe2(port_pipe, O_CLOEXEC) != 0 || ::pipe2(stop_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(result_pipe, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2 failed";
      return sp;
    }
    sp.pid = ::fork();
    if (sp.pid < 0) {
      ADD_FAILURE() << "fork failed";
      return sp;
    }
    if (sp.pid == 0) {
      ::close(port_pipe[0]);
      ::close(stop_pipe[1]);
      ::close(result_pipe[0]);
      auto server = shifted_clock_server(shift_ns, name);
      if (!server) ::_exit(30);
      const std::uint16_t port = server->port();
      if (::write(port_pipe[1], &port, sizeof port) != sizeof port) ::_exit(31);
      char stop = 0;
      if (::read(stop_pipe[0], &stop, 1) != 1) ::_exit(32);
      server->stop();
      const std::uint64_t answered = server->counters().answered;
      if (::write(result_pipe[1], &answered, sizeof answered) != sizeof answered) ::_exit(33);
      ::_exit(0);
    }
    ::close(port_pipe[1]);
    ::close(stop_pipe[0]);
    ::close(result_pipe[1]);
    EXPECT_EQ(::read(port_pipe[0], &sp.port, sizeof sp.port), static_cast<ssize_t>(sizeof sp.port));
    ::close(port_pipe[0]);
    sp.stop_fd = stop_pipe[1];
    sp.result_fd = result_pipe[0];
    return sp;
  }
  // Stops it; returns the clock requests it answered.
  static std::uint64_t stop_server_process(ServerProcess& sp) {
    if (sp.pid <= 0) return 0;
    const char stop = 1;
    EXPECT_EQ(::write(sp.stop_fd, &stop, 1), 1);
    std::uint64_t answered = 0;
    EXPECT_EQ(::read(sp.result_fd, &answered, sizeof answered),
              static_cast<ssize_t>(sizeof answered));
    ::close(sp.stop_fd);
    ::close(sp.result_fd);
    int status = 0;
    EXPECT_EQ(::waitpid(sp.pid, &status, 0), sp.pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    return answered;
  }
};

TEST_F(SessionClockTest, RankFilesCarryTheCalibrationAndMergeOnTheServersClock) {
  ServerProcess server = start_server_process(kShiftNs, "login0");
  ASSERT_NE(server.port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(server.port);
  const std::int64_t t0 = run_rank(0, "hostA", address);
  const std::int64_t t1 = run_rank(1, "hostB", address);
  EXPECT_EQ(stop_server_process(server), 4u * 16u) << "start and end, two ranks";

  std::map<int, v1::ClockCalibration> stored;
  for (const auto& [rank, host] : {std::pair{0, "hostA"}, std::pair{1, "hostB"}}) {
    trace::TraceReader reader =
        trace::TraceReader::open(dir_ / "run" / ("rank-" + std::to_string(rank) + ".ssgdt"));
    const v1::Host& h = reader.metadata().hosts(0);
    EXPECT_EQ(h.hostname(), host);
    ASSERT_TRUE(h.clock().has_calibration());
    const v1::ClockCalibration& start = h.clock().calibration();
    EXPECT_EQ(start.reference_hostname(), "login0");
    EXPECT_TRUE(within(start.start(), kShiftNs)) << start.DebugString();
    EXPECT_FALSE(start.has_end());
    v1::Event e;
    while (reader.next(e)) {
    }
    ASSERT_NE(reader.footer(), nullptr);
    ASSERT_TRUE(reader.footer()->has_clock_calibration());
    const v1::ClockCalibration& full = reader.footer()->clock_calibration();
    EXPECT_EQ(full.reference_hostname(), "login0");
    EXPECT_EQ(full.start().SerializeAsString(), start.start().SerializeAsString());
    EXPECT_TRUE(within(full.end(), kShiftNs)) << full.DebugString();
    EXPECT_GT(full.end().measured_at_ns(), full.start().measured_at_ns());
    stored[rank] = full;
  }

  // Two hosts, neither of them the reference: both shifted, no --force.
  trace::MergeOptions options;
  const trace::MergeResult r = trace::merge_rank_traces(dir_ / "run", dir_ / "merged.ssgdt", options);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(r.hosts, 2);
  trace::TraceReader merged = trace::TraceReader::open(dir_ / "merged.ssgdt");
  EXPECT_NE(merged.metadata().provenance().find(
                "clocks aligned to host 'login0' (the clock server's host, which ran no rank)"),
            std::string::npos)
      << merged.metadata().provenance();
  std::map<int, std::int64_t> start_of;
  v1::Event e;
  while (merged.next(e)) start_of[e.rank()] = e.kernel().start_ns();
  const std::map<int, std::int64_t> original{{0, t0}, {1, t1}};
  for (const auto& [rank, t] : original) {
    const trace::ClockMapping mapping = trace::ClockMapping::from_proto(stored[rank]);
    EXPECT_EQ(start_of[rank], mapping.to_reference(t)) << "rank " << rank;
    EXPECT_LE(std::llabs(start_of[rank] - (t + kShiftNs)), mapping.uncertainty_ns())
        << "rank " << rank;
  }
}

TEST_F(SessionClockTest, AnUnreachableServerStillWritesTheTraceWithANote) {
  const std::int64_t t = run_rank(0, "hostA", "127.0.0.1:9");
  trace::TraceReader reader = trace::TraceReader::open(dir_ / "run" / "rank-0.ssgdt");
  EXPECT_FALSE(reader.metadata().hosts(0).clock().has_calibration());
  EXPECT_NE(reader.metadata().provenance().find("captured; no clock calibration: no reply from "
                                                "127.0.0.1:9"),
            std::string::npos)
      << reader.metadata().provenance();
  v1::Event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(e.kernel().start_ns(), t);
  while (reader.next(e)) {
  }
  ASSERT_NE(reader.footer(), nullptr);
  EXPECT_FALSE(reader.footer()->has_clock_calibration());
}

}  // namespace
}  // namespace ssgd::tracer
