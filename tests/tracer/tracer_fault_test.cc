// The tracer's faults, without a GPU: the disk filling up mid-capture, the
// writer thread starved, the process killed at every stage. Each test runs a
// "host program" in a forked child: it prints its own lines on stdout and
// ends with exit status 3, and drives the real process session
// (tracer/core/process_session.h, opened from the environment) with
// synthetic records, as CUPTI's and NCCL's callbacks would. The parent
// checks what the tracer promises (tracer/README.md, "Faults"): the host's
// stdout and exit status (or the signal it died of) are what the same
// program gives untraced, the tracer writes nothing on stderr unless
// SSGD_TRACER_LOG asks for it, what is left on disk is nothing or a trace
// that TraceReader reads (cut short allowed), and what was lost is counted.
//
// Stages are reached deterministically: the child writes the stage to a
// pipe and waits for the parent's answer (go on, or raise SIGSEGV), or the
// parent kills it there.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "tests/tracer/mock_activity_source.h"
#include "tracer/core/process_session.h"
#include "traces/trace_reader.h"

namespace ssgd::tracer {
namespace {

namespace fs = std::filesystem;
namespace v1 = trace::v1;

constexpr int kRank = 3;
constexpr int kHostExitStatus = 3;
constexpr std::uint64_t kPerRound = 40;
constexpr std::uint64_t kRounds = 3;

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by ") + ::strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

// ---------------------------------------------------------------------------
// The child's side.

// Where the host program stops to tell the parent.
enum class Stage : char {
  kStarted = 'a',        // before the session exists
  kSessionOpen = 'b',    // header written, no record yet
  kAppended = 'c',       // round 0 appended, nothing flushed
  kBetweenChunks = 'd',  // round 0 flushed: the file ends at a chunk boundary
  kMidChunk = 'e',       // round 1 flushed, round 2 appended but not flushed
  kBeforeFooter = 'f',   // at exit, in the session's close hook: before footer and rename
  kAfterClose = 'g',     // at exit, after the footer and the rename
};

int g_stage_fd = -1;  // child -> parent
int g_go_fd = -1;     // parent -> child

// Tells the parent, waits for its answer: 'g' go on, 's' raise SIGSEGV here.
void reach(Stage stage) {
  if (g_stage_fd < 0) return;
  const char c = static_cast<char>(stage);
  if (::write(g_stage_fd, &c, 1) != 1) ::_exit(96);
  char answer = 0;
  if (::read(g_go_fd, &answer, 1) != 1) ::_exit(97);
  if (answer == 's') {
    ::raise(SIGSEGV);  // thread-directed: on this thread, as a fault would be
    for (;;) ::pause();
  }
}

void print(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

void stage_before_footer() noexcept { reach(Stage::kBeforeFooter); }
void stage_after_close() { reach(Stage::kAfterClose); }

struct HostOptions {
  bool traced = true;
  std::uint64_t per_round = kPerRound;
};

// The host program: three rounds of "work", each handing `per_round` records
// to the tracer (ids 0, 1, ... in order), a line on stdout per round, a flush
// after the first two (what the periodic flush would do), exit 3.
[[noreturn]] void host_program(const HostOptions& h) {
  print("host: start\n");
  reach(Stage::kStarted);
  std::atexit(stage_after_close);  // before the session's own: runs after it
  ProcessSession* session = nullptr;
  if (h.traced) {
    session = &ProcessSession::get();
    session->add_close_hook(stage_before_footer);
  } else {
    std::atexit([] { stage_before_footer(); });  // the same place, untraced
  }
  reach(Stage::kSessionOpen);
  // The times' low 35 bits zero (at most 34 s before now: inside the window
  // that starts a minute before the session opened), so that every run
  // compresses to nearly the same sizes. Not zero, which is an invalid
  // timestamp: on a machine up for less than 34 s (a GPU machine just
  // booted) the first record was dropped and every test here failed.
  const std::int64_t base = std::max<std::int64_t>((now_ns() >> 35) << 35, 1);
  std::string name;
  std::uint64_t checksum = 0;
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    for (std::uint64_t id = round * h.per_round; id < (round + 1) * h.per_round; ++id) {
      checksum = checksum * 31 + id;
      if (session != nullptr) session->append(testing::synthetic_record(id, base, name));
    }
    print("host: round " + std::to_string(round) + " checksum " + std::to_string(checksum) + "\n");
    if (round == 0) reach(Stage::kAppended);
    if (round < 2 && session != nullptr) session->flush();
    if (round == 0) reach(Stage::kBetweenChunks);
  }
  reach(Stage::kMidChunk);
  print("host: done\n");
  std::exit(kHostExitStatus);  // the session closes at exit (atexit)
}

// ---------------------------------------------------------------------------
// The parent's side.

struct HostRun {
  int status = 0;
  pid_t pid = 0;
  std::string out;
  std::string err;
  std::vector<Stage> stages;  // reached, in order
};

// What the parent does when the child reaches a stage: 'g' go on, 's' make it
// raise SIGSEGV, 'k' SIGKILL it, 't' SIGTERM it.
using StageAction = std::function<char(Stage)>;

class TracerFaultTest : public ssgd::testing::TempDirTest {
 protected:
  fs::path out() const { return dir_ / "out"; }

  // Runs `body` in a forked child with the tracer's environment (periodic
  // flushes off, rank kRank, no log unless `env` sets one) and `limit_bytes`
  // as its RLIMIT_FSIZE.
  HostRun run(const std::function<void()>& body,
              const std::vector<std::pair<std::string, std::string>>& env = {},
              const StageAction& at_stage = nullptr,
              std::optional<rlim_t> limit_bytes = std::nullopt, bool ignore_sigxfsz = true) {
    int out_pipe[2];
    int err_pipe[2];
    int stage_pipe[2];
    int go_pipe[2];
    EXPECT_EQ(::pipe2(out_pipe, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(stage_pipe, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(go_pipe, O_CLOEXEC), 0);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t child = ::fork();
    EXPECT_GE(child, 0);
    if (child == 0) {
      ::dup2(out_pipe[1], STDOUT_FILENO);
      ::dup2(err_pipe[1], STDERR_FILENO);
      const rlimit no_core{0, 0};
      ::setrlimit(RLIMIT_CORE, &no_core);
      ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
      ::alarm(30);  // a child that hangs fails the test (SIGALRM) instead of hanging it
      ::setenv("SSGD_TRACER_OUT", out().c_str(), 1);
      ::setenv("SSGD_TRACER_FLUSH_MS", "0", 1);
      ::setenv("RANK", std::to_string(kRank).c_str(), 1);
      for (const char* name : {"SSGD_TRACER_LOG", "SSGD_TRACER_SIGNALS",
                               "SSGD_TRACER_SIGNAL_FLUSH_MS", "SSGD_TRACER_CLOCK_SERVER"}) {
        ::unsetenv(name);
      }
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      if (at_stage) {
        g_stage_fd = stage_pipe[1];
        g_go_fd = go_pipe[0];
      }
      if (limit_bytes) {
        if (ignore_sigxfsz) ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit: EFBIG
        const rlimit fsize{*limit_bytes, *limit_bytes};
        if (::setrlimit(RLIMIT_FSIZE, &fsize) != 0) ::_exit(95);
      }
      body();
      ::_exit(99);  // the body ends the process itself
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::close(stage_pipe[1]);
    ::close(go_pipe[0]);
    HostRun r;
    r.pid = child;
    pollfd fds[3] = {
        {out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {stage_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open_fds = 3;
    while (open_fds > 0) {
      if (::poll(fds, 3, 60'000) <= 0) break;  // the child's alarm fires long before
      for (int i = 0; i < 3; ++i) {
        if (fds[i].fd < 0 || fds[i].revents == 0) continue;
        char buffer[4096];
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
          continue;
        }
        if (i < 2) {
          sinks[i]->append(buffer, static_cast<std::size_t>(n));
          continue;
        }
        for (ssize_t j = 0; j < n; ++j) {
          const auto stage = static_cast<Stage>(buffer[j]);
          r.stages.push_back(stage);
          const char action = at_stage(stage);
          if (action == 'k') {
            ::kill(child, SIGKILL);
          } else if (action == 't') {
            ::kill(child, SIGTERM);
          } else {
            EXPECT_EQ(::write(go_pipe[1], &action, 1), 1);
          }
        }
      }
    }
    for (auto& f : fds) {
      if (f.fd >= 0) ::close(f.fd);
    }
    ::close(go_pipe[1]);
    EXPECT_EQ(::waitpid(child, &r.status, 0), child);
    return r;
  }

  // The host exited with its own status and printed `out`, as it does untraced.
  static ::testing::AssertionResult exited_as_host(const HostRun& r, const std::string& out) {
    if (!WIFEXITED(r.status))
      return ::testing::AssertionFailure() << describe(r.status) << "\n" << r.err;
    if (WEXITSTATUS(r.status) != kHostExitStatus) {
      return ::testing::AssertionFailure()
             << describe(r.status) << ", not " << kHostExitStatus << "\n"
             << r.err;
    }
    if (r.out != out) {
      return ::testing::AssertionFailure() << "stdout:\n" << r.out << "expected:\n" << out;
    }
    return ::testing::AssertionSuccess();
  }

  // SSGD_TRACER_LOG=1 when `log`, appended to `env`.
  static std::vector<std::pair<std::string, std::string>> with_log(
      bool log, std::vector<std::pair<std::string, std::string>> env = {}) {
    if (log) env.emplace_back("SSGD_TRACER_LOG", "1");
    return env;
  }

  // The host program untraced, stopped at the same stage by the same action.
  HostRun untraced(const StageAction& at_stage = nullptr) {
    const HostRun r = run([] { host_program({.traced = false}); }, {}, at_stage);
    EXPECT_TRUE(r.err.empty()) << r.err;
    return r;
  }

  // What the child left in out(): nothing, or one trace file.
  struct Left {
    bool nothing = true;
    fs::path path;
    bool final_name = false;  // rank-<r>.ssgdt, else its temporary name
    std::uintmax_t size = 0;
    bool readable = false;
    std::string error;  // TraceReader's, when not readable
    std::vector<std::uint64_t> ids;
    bool truncated = false;
    std::optional<v1::Footer> footer;
  };
  Left left_by(const HostRun& r) {
    Left left;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(out(), ec)) files.push_back(entry.path());
    EXPECT_LE(files.size(), 1u) << "more than one file left";
    if (files.empty()) return left;
    left.nothing = false;
    left.path = files[0];
    const std::string name = left.path.filename().string();
    const std::string final_name = "rank-" + std::to_string(kRank) + ".ssgdt";
    left.final_name = name == final_name;
    if (!left.final_name) {
      const std::string pid = r.pid > 0 ? std::to_string(r.pid) + "." : "";
      EXPECT_TRUE(name.starts_with(final_name + ".tmp." + pid)) << "unexpected file " << name;
    }
    left.size = fs::file_size(left.path);
    try {
      trace::TraceReader reader = trace::TraceReader::open(left.path);
      EXPECT_EQ(reader.metadata().rank(), kRank);
      v1::Event e;
      while (reader.next(e)) left.ids.push_back(testing::synthetic_id(e));
      left.truncated = reader.truncated();
      if (reader.footer() != nullptr) left.footer = *reader.footer();
      left.readable = true;
    } catch (const std::exception& e) {
      left.error = e.what();
    }
    return left;
  }

  static std::vector<std::uint64_t> iota(std::uint64_t n) {
    std::vector<std::uint64_t> v(n);
    for (std::uint64_t i = 0; i < n; ++i) v[i] = i;
    return v;
  }
};

// The host's own output: what it prints whatever the tracer does.
std::string host_lines_through_round(int last_round, bool done) {
  std::string s = "host: start\n";
  std::uint64_t checksum = 0;
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    for (std::uint64_t id = round * kPerRound; id < (round + 1) * kPerRound; ++id) {
      checksum = checksum * 31 + id;
    }
    if (static_cast<int>(round) > last_round) break;
    s += "host: round " + std::to_string(round) + " checksum " + std::to_string(checksum) + "\n";
  }
  if (done) s += "host: done\n";
  return s;
}

TEST_F(TracerFaultTest, TracedAndUntracedHostsPrintTheSameAndExitTheSame) {
  const HostRun plain = untraced();
  ASSERT_TRUE(WIFEXITED(plain.status)) << describe(plain.status);
  EXPECT_EQ(WEXITSTATUS(plain.status), kHostExitStatus);
  EXPECT_EQ(plain.out, host_lines_through_round(2, true));

  const HostRun traced = run([] { host_program({}); });
  ASSERT_TRUE(WIFEXITED(traced.status)) << describe(traced.status);
  EXPECT_EQ(WEXITSTATUS(traced.status), kHostExitStatus);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, "");
  const Left left = left_by(traced);
  ASSERT_TRUE(left.readable) << left.error;
  EXPECT_TRUE(left.final_name);
  EXPECT_FALSE(left.truncated);
  ASSERT_TRUE(left.footer);
  EXPECT_EQ(left.footer->dropped_records(), 0u);
  EXPECT_EQ(left.ids, iota(kRounds * kPerRound));
}

// ---------------------------------------------------------------------------
// (a) The disk fills up mid-capture: RLIMIT_FSIZE in the child with SIGXFSZ
// ignored, so a write past the limit fails with EFBIG, as it would with
// ENOSPC. The sizes come from an unlimited run of the same program.

struct FileLayout {
  std::uintmax_t header = 0;        // bytes after open(): the header alone
  std::uintmax_t first_chunk = 0;   // bytes after the first flush
  std::uintmax_t second_chunk = 0;  // bytes after the second flush
  std::uintmax_t whole = 0;         // the closed file
};

class TracerDiskFullTest : public TracerFaultTest {
 protected:
  // The records in the whole chunks of a file cut at `limit` bytes, up to the
  // second chunk (the third comes at close(), with the footer, in one write).
  static std::uint64_t expected_records(const FileLayout& l, rlim_t limit) {
    if (limit >= l.whole) return kRounds * kPerRound;
    if (limit >= l.second_chunk) return 2 * kPerRound;
    if (limit >= l.first_chunk) return kPerRound;
    return 0;
  }
  // Sizes may differ by a few bytes from run to run (the process id's and
  // the clock uncertainty's varints in the header): near a boundary, either
  // side is right.
  static constexpr rlim_t kSlack = 8;
  // Byte counts up to `last`: every `step`th byte around the end of the
  // header, every 2 * `step`th around the end of each chunk and in the
  // footer, every 150th elsewhere (each is a forked run of 20 to 80 ms).
  static std::vector<rlim_t> limits_to_try(const FileLayout& l, rlim_t last, rlim_t step) {
    std::vector<rlim_t> limits;
    for (rlim_t n = 0; n <= last; ++n) {
      const bool boundary = near(n, l.first_chunk) || near(n, l.second_chunk) || n + 80 >= l.whole;
      if ((near(n, l.header) && n % step == 0) || (boundary && n % (2 * step) == 0) ||
          n % 150 == 0) {
        limits.push_back(n);
      }
    }
    if (limits.empty() || limits.back() != last) limits.push_back(last);
    return limits;
  }
  static bool near(rlim_t limit, std::uintmax_t boundary) {
    return limit + kSlack >= boundary && limit <= boundary + kSlack;
  }
  // A whole number of rounds, as many as the limit allows give or take kSlack
  // bytes (the third round comes at close(), with the footer, so anywhere
  // from the second chunk on it may be there).
  static void expect_whole_rounds(const FileLayout& l, rlim_t limit,
                                  const std::vector<std::uint64_t>& ids) {
    const std::uint64_t least = expected_records(l, limit > kSlack ? limit - kSlack : 0);
    std::uint64_t most = expected_records(l, limit + kSlack);
    if (limit + kSlack >= l.second_chunk) most = kRounds * kPerRound;
    bool whole = false;
    for (std::uint64_t n = least; n <= most; n += kPerRound) whole = whole || ids == iota(n);
    EXPECT_TRUE(whole) << ids.size() << " records at limit " << limit << ", expected " << least
                       << " to " << most << " in whole rounds";
  }

  // The file's size at each flush, from runs killed there.
  FileLayout layout() {
    FileLayout l;
    auto size_at = [&](Stage stop) {
      fs::remove_all(out());
      const HostRun r =
          run([] { host_program({}); }, {}, [stop](Stage s) { return s == stop ? 'k' : 'g'; });
      const Left left = left_by(r);
      EXPECT_FALSE(left.nothing);
      return left.size;
    };
    l.header = size_at(Stage::kSessionOpen);
    l.first_chunk = size_at(Stage::kBetweenChunks);
    l.second_chunk = size_at(Stage::kMidChunk);
    l.whole = size_at(Stage::kAfterClose);
    fs::remove_all(out());
    EXPECT_LT(0u, l.header);
    EXPECT_LT(l.header, l.first_chunk);
    EXPECT_LT(l.first_chunk, l.second_chunk);
    EXPECT_LT(l.second_chunk + 80, l.whole);
    return l;
  }
};

TEST_F(TracerDiskFullTest, FullAtOpenLeavesNothingAndTheHostRunsOn) {
  const HostRun plain = untraced();
  for (const bool log : {false, true}) {
    SCOPED_TRACE(log ? "with SSGD_TRACER_LOG=1" : "without log");
    fs::remove_all(out());
    const auto env = with_log(log);
    const HostRun r = run([] { host_program({}); }, env, nullptr, /*limit_bytes=*/0);
    ASSERT_TRUE(exited_as_host(r, plain.out));
    const Left left = left_by(r);
    EXPECT_TRUE(left.nothing) << left.path;  // the temporary file is removed
    if (log) {
      EXPECT_NE(r.err.find("ssgd-tracer: tracing is off: cannot open the trace in"),
                std::string::npos)
          << r.err;
    } else {
      EXPECT_EQ(r.err, "");
    }
  }
}

// Full in the second chunk: the first chunk stays readable, the host goes on
// and exits as it would, and the log (only when asked for) says what was lost.
TEST_F(TracerDiskFullTest, FullMidCaptureLeavesTheChunksBeforeAndCountsTheRest) {
  const FileLayout l = layout();
  const HostRun plain = untraced();
  for (const bool log : {false, true}) {
    SCOPED_TRACE(log ? "with SSGD_TRACER_LOG=1" : "without log");
    fs::remove_all(out());
    const auto env = with_log(log);
    const rlim_t limit = (l.first_chunk + l.second_chunk) / 2;
    const HostRun r = run([] { host_program({}); }, env, nullptr, limit);
    ASSERT_TRUE(exited_as_host(r, plain.out));
    const Left left = left_by(r);
    ASSERT_FALSE(left.nothing);
    EXPECT_FALSE(left.final_name);  // never renamed into place
    EXPECT_LE(left.size, limit);
    ASSERT_TRUE(left.readable) << left.error;
    EXPECT_TRUE(left.truncated);
    EXPECT_EQ(left.ids, iota(kPerRound));  // the first chunk, whole
    if (log) {
      EXPECT_NE(r.err.find("ssgd-tracer: flushing '"), std::string::npos) << r.err;
      // Round 2's records came after the error; round 1's were in the chunk
      // that failed.
      EXPECT_NE(r.err.find("40 records dropped after the write error, and up to 40 records "
                           "handed to the file since its last flush are lost"),
                std::string::npos)
          << r.err;
    } else {
      EXPECT_EQ(r.err, "");
    }
  }
}

// After the write error the writer still answers a fatal signal's flush
// (there is nothing it can write), so the host dies of SIGTERM at once, not
// after the 2 s the handler would wait for a writer that does not answer.
TEST_F(TracerDiskFullTest, AFatalSignalAfterTheDiskFilledIsNotDelayed) {
  const FileLayout l = layout();
  const StageAction at = [](Stage s) { return s == Stage::kMidChunk ? 't' : 'g'; };
  const HostRun plain = untraced(at);
  const auto start = std::chrono::steady_clock::now();
  const HostRun r = run([] { host_program({}); }, {{"SSGD_TRACER_SIGNAL_FLUSH_MS", "10000"}}, at,
                        (l.first_chunk + l.second_chunk) / 2);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status) << "\n" << r.err;
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
  EXPECT_EQ(r.status, plain.status);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err, "");
  EXPECT_LT(seconds, 5.0);  // the handler would wait 10 s for a writer that did not answer
  const Left left = left_by(r);
  ASSERT_TRUE(left.readable) << left.error;
  EXPECT_TRUE(left.truncated);
  EXPECT_EQ(left.ids, iota(kPerRound));
}

// Full while the footer is written at exit: every chunk is there, the
// footer is cut (the reader says so), the host's exit status is its own.
TEST_F(TracerDiskFullTest, FullInTheFooterKeepsEveryChunk) {
  const FileLayout l = layout();
  const HostRun plain = untraced();
  const rlim_t limit = l.whole - 20;  // the footer record is about 60 bytes
  const HostRun r = run([] { host_program({}); }, {{"SSGD_TRACER_LOG", "1"}}, nullptr, limit);
  ASSERT_TRUE(exited_as_host(r, plain.out));
  const Left left = left_by(r);
  ASSERT_TRUE(left.readable) << left.error;
  EXPECT_FALSE(left.final_name);
  EXPECT_TRUE(left.truncated);
  EXPECT_FALSE(left.footer);
  EXPECT_EQ(left.ids, iota(kRounds * kPerRound));
  EXPECT_NE(r.err.find("ssgd-tracer: closing '"), std::string::npos) << r.err;
}

// Every limit from 0 to the whole file (every byte of the header and the
// footer, a stride through the chunks): never a host that behaves otherwise,
// never a file left that TraceReader rejects.
TEST_F(TracerDiskFullTest, AnyLimitLeavesNothingOrAReadablePrefix) {
  const FileLayout l = layout();
  const HostRun plain = untraced();
  const std::vector<rlim_t> limits =
      limits_to_try(l, l.whole + kSlack, 4);  // each limit runs to the end
  for (const rlim_t limit : limits) {
    SCOPED_TRACE("limit " + std::to_string(limit) + " of " + std::to_string(l.whole) + " bytes");
    fs::remove_all(out());
    const HostRun r = run([] { host_program({}); }, {}, nullptr, limit);
    ASSERT_TRUE(WIFEXITED(r.status)) << describe(r.status) << "\n" << r.err;
    ASSERT_EQ(WEXITSTATUS(r.status), kHostExitStatus);
    ASSERT_EQ(r.out, plain.out);
    ASSERT_EQ(r.err, "");
    const Left left = left_by(r);
    if (left.nothing) {  // open() failed and removed its file
      ASSERT_TRUE(limit < l.header || near(limit, l.header));
      continue;
    }
    ASSERT_TRUE(left.readable) << left.error;
    ASSERT_TRUE(limit >= l.header || near(limit, l.header));
    ASSERT_NE(left.final_name, left.truncated);
    if (!near(limit, l.whole)) {
      ASSERT_EQ(left.final_name, limit >= l.whole);
    }
    expect_whole_rounds(l, limit, left.ids);
  }
}

// A real ENOSPC: the trace goes to a small tmpfs, mounted in a mount
// namespace of the child's own (skipped where neither CAP_SYS_ADMIN nor user
// namespaces allow it), with room for the header and the first chunk only.
// The child runs the host in a grandchild, copies what it left to out()
// and ends as the host ended.
constexpr std::uint64_t kBigRound = 1000;  // records per round: chunks of several pages

bool private_tmpfs(const fs::path& at, std::size_t bytes) {
  if (::unshare(CLONE_NEWNS) != 0) {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
    const auto write_file = [](const char* path, const std::string& text) {
      const int fd = ::open(path, O_WRONLY);
      if (fd < 0) return false;
      const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      ::close(fd);
      return ok;
    };
    write_file("/proc/self/setgroups", "deny");
    if (!write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
      return false;
    }
  }
  // Private first, so that the mount stays in this namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  fs::create_directories(at);
  const std::string options = "size=" + std::to_string(bytes);
  return ::mount("tmpfs", at.c_str(), "tmpfs", 0, options.c_str()) == 0;
}

TEST_F(TracerDiskFullTest, ARealFullDiskMidCaptureLeavesTheFirstChunk) {
  // The sizes, from a run on the ordinary disk killed after the first flush.
  const HostRun sized = run([] { host_program({.per_round = kBigRound}); }, {},
                            [](Stage s) { return s == Stage::kBetweenChunks ? 'k' : 'g'; });
  const std::uintmax_t first_chunk = left_by(sized).size;
  fs::remove_all(out());
  constexpr std::size_t kPage = 4096;
  const std::size_t room = (first_chunk + kPage - 1) / kPage * kPage;
  ASSERT_GT(room, kPage);  // several pages: the second chunk cannot fit in the last one's tail

  const HostRun plain = run([] { host_program({.traced = false, .per_round = kBigRound}); });
  const fs::path disk = dir_ / "disk";
  const fs::path copied = out();
  for (const bool log : {false, true}) {
    SCOPED_TRACE(log ? "with SSGD_TRACER_LOG=1" : "without log");
    fs::remove_all(out());
    const auto env = with_log(log, {{"SSGD_TRACER_OUT", (disk / "out").string()}});
    HostRun r = run(
        [&] {
          constexpr std::size_t kDisk = 64 * 1024;
          if (!private_tmpfs(disk, kDisk)) ::_exit(77);
          {  // leave `room` bytes free
            const int fd = ::open((disk / "filler").c_str(), O_WRONLY | O_CREAT, 0644);
            const std::string zeros(kDisk - room, '\0');
            if (fd < 0 ||
                ::write(fd, zeros.data(), zeros.size()) != static_cast<ssize_t>(zeros.size())) {
              ::_exit(78);
            }
            ::close(fd);
          }
          std::fflush(stdout);
          const pid_t host = ::fork();
          if (host == 0) host_program({.per_round = kBigRound});
          int status = 0;
          if (::waitpid(host, &status, 0) != host) ::_exit(79);
          std::error_code ec;
          fs::create_directories(copied, ec);
          for (const auto& entry : fs::directory_iterator(disk / "out", ec)) {
            fs::copy_file(entry.path(), copied / entry.path().filename(), ec);
          }
          if (WIFSIGNALED(status)) {
            ::signal(WTERMSIG(status), SIG_DFL);
            ::raise(WTERMSIG(status));
          }
          ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 98);
        },
        env);
    if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 77) {
      GTEST_SKIP() << "no private tmpfs here (needs CAP_SYS_ADMIN or user namespaces)";
    }
    ASSERT_TRUE(exited_as_host(r, plain.out));
    r.pid = 0;  // the file is named after the grandchild
    const Left left = left_by(r);
    ASSERT_FALSE(left.nothing);
    EXPECT_FALSE(left.final_name);
    ASSERT_TRUE(left.readable) << left.error;
    EXPECT_TRUE(left.truncated);
    EXPECT_EQ(left.ids, iota(kBigRound));
    if (log) {
      EXPECT_NE(r.err.find("ssgd-tracer: flushing '"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(std::to_string(kBigRound) + " records dropped after the write error"),
                std::string::npos)
          << r.err;
    } else {
      EXPECT_EQ(r.err, "");
    }
  }
}

// ---------------------------------------------------------------------------
// (b) The writer thread starved: a signal-flush hook holds the writer while
// producers on four threads append far more than the buffers hold. They
// never wait for it (they all finish while it is held: the hook times out
// after 10 s otherwise), what does not fit is dropped, and the footer
// counts exactly what was dropped.

std::atomic<bool> g_hook_entered{false};
std::atomic<bool> g_release{false};
std::atomic<bool> g_hook_timed_out{false};

void holding_hook() noexcept {
  g_hook_entered = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!g_release && std::chrono::steady_clock::now() < deadline) {
    const timespec t{0, 1'000'000};
    ::nanosleep(&t, nullptr);
  }
  if (!g_release) g_hook_timed_out = true;
}

constexpr int kStarvedThreads = 4;
constexpr std::uint64_t kStarvedPerThread = 50'000;

TEST_F(TracerFaultTest, AStarvedWriterNeverBlocksProducersAndTheFooterCountsTheDrops) {
  const fs::path counts = dir_ / "counts";
  const HostRun r = run([&counts] {
    ProcessSession& session = ProcessSession::get();
    if (!session.is_open()) ::_exit(80);
    session.set_signal_flush_hook(holding_hook);
    if (session.sink()->request_signal_flush() == 0) ::_exit(81);
    const auto wait_until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!g_hook_entered) {
      if (std::chrono::steady_clock::now() > wait_until) ::_exit(82);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::int64_t base = now_ns();
    std::atomic<std::uint64_t> stored{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<std::int64_t> slowest_ns{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kStarvedThreads; ++t) {
      threads.emplace_back([&, t] {
        std::string name;
        for (std::uint64_t i = 0; i < kStarvedPerThread; ++i) {
          const ActivityRecord record =
              testing::synthetic_record(i * kStarvedThreads + t, base, name);
          const std::int64_t before = now_ns();
          const AppendStatus s = session.append(record);
          const std::int64_t took = now_ns() - before;
          std::int64_t seen = slowest_ns.load();
          while (took > seen && !slowest_ns.compare_exchange_weak(seen, took)) {
          }
          (s == AppendStatus::kStored ? stored : dropped).fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    const bool still_held = !g_hook_timed_out;  // every append finished while the writer was held
    g_release = true;
    if (!still_held) ::_exit(83);
    std::FILE* f = std::fopen(counts.c_str(), "w");
    if (f == nullptr) ::_exit(84);
    std::fprintf(f, "%llu %llu %lld\n", static_cast<unsigned long long>(stored.load()),
                 static_cast<unsigned long long>(dropped.load()),
                 static_cast<long long>(slowest_ns.load()));
    std::fclose(f);
    print("host: done\n");
    std::exit(kHostExitStatus);
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << describe(r.status) << "\n" << r.err;
  ASSERT_EQ(WEXITSTATUS(r.status), kHostExitStatus)
      << "80: not open; 81: no writer; 82: the hook never ran; 83: producers waited for the "
         "writer";
  EXPECT_EQ(r.out, "host: done\n");
  EXPECT_EQ(r.err, "");
  unsigned long long stored = 0;
  unsigned long long dropped = 0;
  long long slowest_ns = 0;
  ASSERT_EQ(std::sscanf(ssgd::testing::read_file_bytes(counts).c_str(), "%llu %llu %lld", &stored,
                        &dropped, &slowest_ns),
            3);
  const RecordBufferOptions defaults;
  const std::uint64_t capacity = defaults.buffer_count * defaults.records_per_buffer;
  EXPECT_EQ(stored + dropped, kStarvedThreads * kStarvedPerThread);
  EXPECT_LE(stored, capacity);
  // At most one partly filled buffer per producer is left unfilled.
  EXPECT_GE(stored, capacity - kStarvedThreads * defaults.records_per_buffer);
  EXPECT_LT(slowest_ns, 1'000'000'000) << "an append took " << slowest_ns << " ns";

  const Left left = left_by(r);
  ASSERT_TRUE(left.readable) << left.error;
  EXPECT_TRUE(left.final_name);
  ASSERT_TRUE(left.footer);
  EXPECT_EQ(left.footer->dropped_records(), dropped);
  EXPECT_EQ(left.ids.size(), stored);
  std::vector<std::uint64_t> ids = left.ids;
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "a record written twice";
}

// Threads that each append now and then, more of them than buffers (32):
// each holds a buffer with a record or two, and the others find none. Their
// records are dropped and counted, and the writer, told by the pool, takes
// the partly filled buffers within its poll (not only at the next periodic
// flush, off here), so a later append finds a buffer again.
TEST_F(TracerFaultTest, MoreAppendingThreadsThanBuffersGetBuffersBackSoon) {
  constexpr int kThreads = 64;
  const fs::path counts = dir_ / "counts";
  const HostRun r = run([&counts] {
    ProcessSession& session = ProcessSession::get();
    if (!session.is_open()) ::_exit(80);
    const std::int64_t base = now_ns();
    std::barrier all_tried(kThreads);
    std::atomic<std::uint64_t> failed_attempts{0};
    std::atomic<int> never_stored{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::string name;
        const ActivityRecord record =
            testing::synthetic_record(static_cast<std::uint64_t>(t), base, name);
        all_tried.arrive_and_wait();  // all at once: without the fix, exactly 32 find none
        bool stored = session.append(record) == AppendStatus::kStored;
        all_tried.arrive_and_wait();  // every thread holds its producer (and buffer) by now
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!stored && std::chrono::steady_clock::now() < deadline) {
          failed_attempts.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          stored = session.append(record) == AppendStatus::kStored;
        }
        if (!stored) {
          failed_attempts.fetch_add(1);
          never_stored.fetch_add(1);
        }
        all_tried.arrive_and_wait();
      });
    }
    for (auto& t : threads) t.join();
    std::FILE* f = std::fopen(counts.c_str(), "w");
    if (f == nullptr) ::_exit(84);
    std::fprintf(f, "%llu %d\n", static_cast<unsigned long long>(failed_attempts.load()),
                 never_stored.load());
    std::fclose(f);
    print("host: done\n");
    std::exit(kHostExitStatus);
  });
  ASSERT_TRUE(exited_as_host(r, "host: done\n"));
  EXPECT_EQ(r.err, "");
  unsigned long long failed_attempts = 0;
  int never_stored = 0;
  ASSERT_EQ(std::sscanf(ssgd::testing::read_file_bytes(counts).c_str(), "%llu %d", &failed_attempts,
                        &never_stored),
            2);
  EXPECT_EQ(never_stored, 0) << "threads that never got a buffer back within 5 s";
  const Left left = left_by(r);
  ASSERT_TRUE(left.readable) << left.error;
  ASSERT_TRUE(left.footer);
  EXPECT_EQ(left.footer->dropped_records(), failed_attempts);
  std::vector<std::uint64_t> ids = left.ids;
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, iota(kThreads - never_stored));
}

// More threads at once than producer slots (256): a thread without a slot
// has its records dropped, counted exactly; none of them waits.
TEST_F(TracerFaultTest, ThreadsBeyondTheProducerSlotsAreCountedAsDropped) {
  constexpr int kThreads = 300;
  const fs::path counts = dir_ / "counts";
  const HostRun r = run([&counts] {
    ProcessSession& session = ProcessSession::get();
    if (!session.is_open()) ::_exit(80);
    const std::int64_t base = now_ns();
    std::barrier all_appended(kThreads);
    std::atomic<std::uint64_t> dropped{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::string name;
        if (session.append(testing::synthetic_record(static_cast<std::uint64_t>(t), base, name)) !=
            AppendStatus::kStored) {
          dropped.fetch_add(1);
        }
        all_appended.arrive_and_wait();  // every thread holds its producer until all appended
      });
    }
    for (auto& t : threads) t.join();
    std::FILE* f = std::fopen(counts.c_str(), "w");
    if (f == nullptr) ::_exit(84);
    std::fprintf(f, "%llu\n", static_cast<unsigned long long>(dropped.load()));
    std::fclose(f);
    print("host: done\n");
    std::exit(kHostExitStatus);
  });
  ASSERT_TRUE(exited_as_host(r, "host: done\n"));
  EXPECT_EQ(r.err, "");
  unsigned long long dropped = 0;
  ASSERT_EQ(std::sscanf(ssgd::testing::read_file_bytes(counts).c_str(), "%llu", &dropped), 1);
  const RecordBufferOptions defaults;
  EXPECT_GE(dropped, kThreads - defaults.max_producers);  // no slot, or no buffer
  const Left left = left_by(r);
  ASSERT_TRUE(left.readable) << left.error;
  ASSERT_TRUE(left.footer);
  EXPECT_EQ(left.footer->dropped_records(), dropped);
  EXPECT_EQ(left.ids.size() + dropped, static_cast<std::uint64_t>(kThreads));
}

// ---------------------------------------------------------------------------
// (c) The process killed at every stage: SIGKILL (only what was flushed is
// there), SIGTERM and a SIGSEGV raised on the main thread (the fatal-signal
// flush adds everything appended). The host dies of the signal it got, as
// it would untraced, having printed what it would have printed.

struct Kill {
  const char* name;
  char action;  // 'k', 't', 's' (StageAction)
  int signal;
};
void PrintTo(const Kill& k, std::ostream* os) { *os << k.name; }

struct StageCase {
  Stage stage;
  int rounds_printed;      // -1: none
  std::uint64_t flushed;   // records on disk after a SIGKILL there
  std::uint64_t appended;  // records appended by then (a caught signal flushes them)
  bool file;               // a file exists by then
  bool closed;             // footer written and renamed
};

const StageCase kStages[] = {
    {Stage::kStarted, -1, 0, 0, false, false},
    {Stage::kSessionOpen, -1, 0, 0, true, false},
    {Stage::kAppended, 0, 0, kPerRound, true, false},
    {Stage::kBetweenChunks, 0, kPerRound, kPerRound, true, false},
    {Stage::kMidChunk, 2, 2 * kPerRound, 3 * kPerRound, true, false},
    {Stage::kBeforeFooter, 2, 2 * kPerRound, 3 * kPerRound, true, false},
    {Stage::kAfterClose, 2, 3 * kPerRound, 3 * kPerRound, true, true},
};

class TracerKillTest : public TracerFaultTest, public ::testing::WithParamInterface<Kill> {};

TEST_P(TracerKillTest, AtEveryStageTheHostDiesAsUntracedAndLeavesAReadablePrefix) {
  const Kill kill = GetParam();
  for (const StageCase& c : kStages) {
    SCOPED_TRACE(std::string("stage '") + static_cast<char>(c.stage) + "'");
    fs::remove_all(out());
    const StageAction at = [&](Stage s) { return s == c.stage ? kill.action : 'g'; };
    const HostRun plain = untraced(at);
    const HostRun r = run([] { host_program({}); }, {}, at);
    ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status) << "\n" << r.err;
    EXPECT_EQ(WTERMSIG(r.status), kill.signal) << describe(r.status);
    EXPECT_EQ(r.status, plain.status);
    EXPECT_EQ(r.out, plain.out);
    const bool done = c.stage == Stage::kBeforeFooter || c.stage == Stage::kAfterClose;
    EXPECT_EQ(r.out, host_lines_through_round(c.rounds_printed, done));
    EXPECT_EQ(r.err, "");
    ASSERT_FALSE(r.stages.empty());
    EXPECT_EQ(r.stages.back(), c.stage);

    const Left left = left_by(r);
    if (!c.file) {
      EXPECT_TRUE(left.nothing) << left.path;
      continue;
    }
    ASSERT_FALSE(left.nothing);
    ASSERT_TRUE(left.readable) << left.error;
    EXPECT_EQ(left.final_name, c.closed);
    EXPECT_EQ(left.truncated, !c.closed);
    EXPECT_EQ(left.footer.has_value(), c.closed);
    std::vector<std::uint64_t> ids = left.ids;
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, iota(kill.action == 'k' ? c.flushed : c.appended));
  }
}

INSTANTIATE_TEST_SUITE_P(Signals, TracerKillTest,
                         ::testing::Values(Kill{"Sigkill", 'k', SIGKILL},
                                           Kill{"Sigterm", 't', SIGTERM},
                                           Kill{"RaisedSigsegv", 's', SIGSEGV}),
                         [](const ::testing::TestParamInfo<Kill>& p) {
                           return std::string(p.param.name);
                         });

// Killed at an exact byte: RLIMIT_FSIZE with SIGXFSZ at its default action
// ends the process at the first write past the limit, after the kernel wrote
// up to it. Every byte of the header and the footer, a stride through the
// chunks. What is left is nothing or a prefix TraceReader reads, except a
// file cut inside its header, which TraceReader refuses with a located error
// (the one window where the capture leaves an unreadable file: between the
// creation of the temporary file and the header's write at open()).
TEST_F(TracerDiskFullTest, KilledAtAnyByteLeavesAReadablePrefixOrAHeaderCutShort) {
  const FileLayout l = layout();
  const std::vector<rlim_t> limits = limits_to_try(l, l.whole - kSlack - 1, 1);
  for (const rlim_t limit : limits) {
    SCOPED_TRACE("killed at byte " + std::to_string(limit) + " of " + std::to_string(l.whole));
    fs::remove_all(out());
    const HostRun r = run([] { host_program({}); }, {}, nullptr, limit, /*ignore_sigxfsz=*/false);
    ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status) << "\n" << r.err;
    ASSERT_EQ(WTERMSIG(r.status), SIGXFSZ);
    ASSERT_EQ(r.err, "");
    const Left left = left_by(r);
    ASSERT_FALSE(left.nothing);
    ASSERT_EQ(left.size, limit);
    if (!left.readable) {
      ASSERT_TRUE(limit < l.header || near(limit, l.header)) << left.error;
      ASSERT_NE(left.error.find(left.path.string()), std::string::npos) << left.error;
      ASSERT_TRUE(left.error.find("header") != std::string::npos ||
                  left.error.find("empty") != std::string::npos)
          << left.error;
      continue;
    }
    ASSERT_TRUE(limit >= l.header || near(limit, l.header));
    ASSERT_TRUE(left.truncated);
    expect_whole_rounds(l, limit, left.ids);
  }
}

}  // namespace
}  // namespace ssgd::tracer
