// The flush on fatal signals (tracer/core/fatal_signal_flush.h), in forked
// children that open the process session from the environment with
// periodic flushes off, append records and then die of a signal: the
// parent reads the temporary file and checks that exactly the records
// appended before the signal are there and that the child died of that
// same signal (or ran the handler it had installed itself).
#include "tracer/core/fatal_signal_flush.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_files.h"
#include "tracer/core/process_session.h"
#include "traces/trace_reader.h"

namespace ssgd::tracer {
namespace {

namespace fs = std::filesystem;
namespace v1 = trace::v1;

constexpr int kRank = 3;

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// Appends kernels whose correlation ids are first, first + 1, ...; exits
// the child when one is not stored.
void append_kernels(std::uint64_t first, std::uint64_t n) {
  ProcessSession& session = ProcessSession::get();
  for (std::uint64_t id = first; id < first + n; ++id) {
    KernelActivity k;
    k.start_ns = now_ns();
    k.end_ns = k.start_ns + 100;
    k.correlation_id = id;
    if (session.append(ActivityRecord{k, "gemm"}) != AppendStatus::kStored) ::_exit(90);
  }
}

struct ChildResult {
  int status = 0;
  pid_t pid = 0;
  double seconds = 0;
};

class FatalSignalFlushTest : public ssgd::testing::TempDirTest {
 protected:
  // Runs `body` in a forked child whose session writes to out(), with
  // periodic flushes off, no core dump, and `env` set.
  ChildResult run_child(const std::vector<std::pair<std::string, std::string>>& env,
                        const std::function<void()>& body) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = ::fork();
    EXPECT_GE(child, 0);
    if (child == 0) {
      const rlimit no_core{0, 0};
      ::setrlimit(RLIMIT_CORE, &no_core);
      ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // no core even with a piped core_pattern
      ::alarm(30);  // a child that fails to die fails the test (SIGALRM) instead of hanging it
      ::setenv("SSGD_TRACER_OUT", out().c_str(), 1);
      ::setenv("SSGD_TRACER_FLUSH_MS", "0", 1);
      ::setenv("RANK", std::to_string(kRank).c_str(), 1);
      ::unsetenv("SSGD_TRACER_SIGNALS");
      ::unsetenv("SSGD_TRACER_SIGNAL_FLUSH_MS");
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      body();
      ::_exit(99);  // the body was to die
    }
    ChildResult r;
    r.pid = child;
    EXPECT_EQ(::waitpid(child, &r.status, 0), child);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

  fs::path out() const { return dir_ / "out"; }

  // The correlation ids in the child's temporary file, sorted; the file must
  // be cut short (no footer: the process died).
  std::vector<std::uint64_t> ids_left_by(pid_t child) {
    std::vector<fs::path> partial;
    for (const auto& entry : fs::directory_iterator(out())) {
      if (entry.path().filename().string().starts_with(
              "rank-" + std::to_string(kRank) + ".ssgdt.tmp." + std::to_string(child) + ".")) {
        partial.push_back(entry.path());
      }
    }
    EXPECT_EQ(partial.size(), 1u);
    if (partial.size() != 1) return {};
    trace::TraceReader reader = trace::TraceReader::open(partial[0]);
    std::vector<std::uint64_t> ids;
    v1::Event e;
    while (reader.next(e)) ids.push_back(e.kernel().correlation_id());
    EXPECT_TRUE(reader.truncated());
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  static std::vector<std::uint64_t> iota(std::uint64_t n) {
    std::vector<std::uint64_t> v(n);
    for (std::uint64_t i = 0; i < n; ++i) v[i] = i;
    return v;
  }
};

std::string describe(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by ") + ::strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

struct Death {
  const char* name;
  int signal;
  void (*die)();
};

void raise_sigsegv() { ::raise(SIGSEGV); }
void call_abort() { std::abort(); }
void kill_self_with_sigterm() { ::kill(::getpid(), SIGTERM); }  // process-directed
void dereference_null() {
  // Both volatile: the compiler can neither prove the pointer null nor drop the store.
  volatile int* volatile p = nullptr;
  *p = 1;
}
void raise_sigbus() { ::raise(SIGBUS); }

class FatalSignalDeathTest : public FatalSignalFlushTest,
                             public ::testing::WithParamInterface<Death> {};

TEST_P(FatalSignalDeathTest, EveryRecordAppendedBeforeTheSignalIsInTheFile) {
  const Death d = GetParam();
  const ChildResult r = run_child({}, [&] {
    append_kernels(0, 37);
    d.die();
    // A signal delivered to another thread may take a moment.
    for (;;) ::pause();
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status);
  EXPECT_EQ(WTERMSIG(r.status), d.signal) << describe(r.status);
  EXPECT_EQ(ids_left_by(r.pid), iota(37));
}

INSTANTIATE_TEST_SUITE_P(
    Signals, FatalSignalDeathTest,
    ::testing::Values(Death{"RaisedSigsegv", SIGSEGV, raise_sigsegv},
                      Death{"NullDereference", SIGSEGV, dereference_null},
                      Death{"Abort", SIGABRT, call_abort},
                      Death{"Sigterm", SIGTERM, kill_self_with_sigterm},
                      Death{"Sigbus", SIGBUS, raise_sigbus}),
    [](const ::testing::TestParamInfo<Death>& p) { return std::string(p.param.name); });

// Where the program's own handler writes its marker; a fixed buffer, since
// the handler may call only async-signal-safe functions.
char g_marker_path[512];

void program_sigterm_handler(int) {
  const int fd = ::open(g_marker_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    [[maybe_unused]] const ssize_t n = ::write(fd, "handled", 7);
    ::close(fd);
  }
  ::_exit(7);
}

TEST_F(FatalSignalFlushTest, AHandlerTheProgramInstalledBeforeTheSessionStillRuns) {
  const fs::path marker = dir_ / "marker";
  std::snprintf(g_marker_path, sizeof g_marker_path, "%s", marker.c_str());
  const ChildResult r = run_child({}, [] {
    struct sigaction a = {};
    a.sa_handler = program_sigterm_handler;
    sigemptyset(&a.sa_mask);
    ::sigaction(SIGTERM, &a, nullptr);
    append_kernels(0, 12);
    ::raise(SIGTERM);
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << describe(r.status);
  EXPECT_EQ(WEXITSTATUS(r.status), 7);
  EXPECT_EQ(ssgd::testing::read_file_bytes(marker), "handled");
  EXPECT_EQ(ids_left_by(r.pid), iota(12));  // flushed before the program's handler ran
}

TEST_F(FatalSignalFlushTest, WithSignalsOffNothingAfterTheLastFlushIsThere) {
  const ChildResult r = run_child({{"SSGD_TRACER_SIGNALS", "0"}}, [] {
    append_kernels(0, 20);
    ProcessSession::get().flush();
    append_kernels(20, 10);
    ::raise(SIGTERM);
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status);
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
  EXPECT_EQ(ids_left_by(r.pid), iota(20));
}

TEST_F(FatalSignalFlushTest, SigintIsTakenOverOnlyWhenItsDispositionWasTheDefault) {
  const ChildResult r = run_child({}, [] {
    struct sigaction a = {};
    a.sa_handler = program_sigterm_handler;  // stands for Python's SIGINT handler
    sigemptyset(&a.sa_mask);
    ::sigaction(SIGINT, &a, nullptr);
    ::signal(SIGQUIT, SIG_IGN);
    ProcessSession::get();
    struct sigaction sigint = {};
    struct sigaction sighup = {};
    ::sigaction(SIGINT, nullptr, &sigint);
    ::sigaction(SIGHUP, nullptr, &sighup);
    if (sigint.sa_handler != program_sigterm_handler) ::_exit(1);  // left to the program
    if ((sighup.sa_flags & SA_SIGINFO) == 0) ::_exit(2);          // default: taken over
    ProcessSession::get().shutdown();
    ::sigaction(SIGHUP, nullptr, &sighup);
    if (sighup.sa_handler != SIG_DFL || (sighup.sa_flags & SA_SIGINFO) != 0) ::_exit(3);
    ::_exit(0);
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << describe(r.status);
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << "1: SIGINT taken from the program; 2: SIGHUP not "
                                         "taken over; 3: not restored by shutdown";
}

// The hook runs on the writer thread; a fault there must not wait for the
// writer (itself): the process dies at once, long before the 10 s wait.
TEST_F(FatalSignalFlushTest, AFaultOnTheWriterThreadIsHandedOnAtOnce) {
  const ChildResult r = run_child({{"SSGD_TRACER_SIGNAL_FLUSH_MS", "10000"}}, [] {
    ProcessSession::get().set_signal_flush_hook([]() noexcept { ::raise(SIGFPE); });
    append_kernels(0, 5);
    ::raise(SIGTERM);
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status);
  EXPECT_EQ(WTERMSIG(r.status), SIGFPE);  // the writer's own fault
  EXPECT_LT(r.seconds, 5.0);
}

// A writer that cannot finish (here: a hook that never returns) is waited
// for SSGD_TRACER_SIGNAL_FLUSH_MS, then the signal goes on.
TEST_F(FatalSignalFlushTest, AWriterThatCannotFinishIsWaitedForOnlySoLong) {
  const ChildResult r = run_child({{"SSGD_TRACER_SIGNAL_FLUSH_MS", "300"}}, [] {
    ProcessSession::get().set_signal_flush_hook([]() noexcept {
      for (;;) ::pause();
    });
    append_kernels(0, 5);
    ::raise(SIGSEGV);
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status);
  EXPECT_EQ(WTERMSIG(r.status), SIGSEGV);
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_TRUE(ids_left_by(r.pid).empty());
}

// A process forked from a traced one has no writer thread: its signals go
// on at once instead of waiting for a flush that cannot come.
TEST_F(FatalSignalFlushTest, AForkedProcessDoesNotWaitForAWriterItLacks) {
  const ChildResult r = run_child({{"SSGD_TRACER_SIGNAL_FLUSH_MS", "10000"}}, [] {
    append_kernels(0, 5);
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::raise(SIGTERM);
      ::_exit(50);
    }
    int status = 0;
    const auto start = std::chrono::steady_clock::now();
    if (::waitpid(grandchild, &status, 0) != grandchild) ::_exit(51);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) ::_exit(52);
    ::_exit(s < 5.0 ? 0 : 53);
  });
  ASSERT_TRUE(WIFEXITED(r.status)) << describe(r.status);
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
}

// A second signal on another thread while the flush is under way waits for
// that flush; the records are there and the process dies of a signal.
TEST_F(FatalSignalFlushTest, ASecondSignalDuringTheFlushWaitsForIt) {
  const ChildResult r = run_child({}, [] {
    ProcessSession::get().set_signal_flush_hook([]() noexcept {
      const timespec t{0, 200'000'000};
      ::nanosleep(&t, nullptr);  // a slow flush
    });
    append_kernels(0, 9);
    std::thread([] {
      const timespec t{0, 50'000'000};
      ::nanosleep(&t, nullptr);
      ::kill(::getpid(), SIGTERM);  // arrives during the first flush
    }).detach();
    ::raise(SIGABRT);
  });
  ASSERT_TRUE(WIFSIGNALED(r.status)) << describe(r.status);
  EXPECT_TRUE(WTERMSIG(r.status) == SIGABRT || WTERMSIG(r.status) == SIGTERM)
      << describe(r.status);
  EXPECT_EQ(ids_left_by(r.pid), iota(9));
}

}  // namespace
}  // namespace ssgd::tracer
