// libssgd_tracer.so as a host program sees it: it exports its entry points
// and nothing else, carries zstd inside, and InitializeInjection
// on a machine where CUPTI cannot start (no GPU, no driver) returns without
// crashing or writing to stdout, stands down and says why in the trace.
// Skipped when the tracer was not built (no CUDA/CUPTI at configure time).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/test_files.h"
#include "traces/trace_reader.h"

namespace {

namespace fs = std::filesystem;

const std::string kLibrary = SSGD_TRACER_LIBRARY;  // empty when not built

std::string run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TracerLibraryTest : public ssgd::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (kLibrary.empty()) GTEST_SKIP() << "libssgd_tracer.so was not built (no CUDA/CUPTI)";
  }
};

TEST_F(TracerLibraryTest, ExportsOnlyItsEntryPoints) {
  const std::string table = run("nm -D --defined-only '" + kLibrary + "'");
  ASSERT_FALSE(table.empty()) << "nm printed nothing for " << kLibrary;
  std::set<std::string> exported;
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    const auto space = line.rfind(' ');
    if (space != std::string::npos) exported.insert(line.substr(space + 1));
  }
  const std::set<std::string> allowed = {"InitializeInjection", "InitializeInjectionNvtx2",
                                         "ncclProfiler_v5", "ncclProfiler_v4",
                                         "ssgd_tracer_step"};
  for (const auto& name : exported) {
    EXPECT_TRUE(allowed.count(name)) << "exported: " << name;
  }
  EXPECT_TRUE(exported.count("InitializeInjection"));
  EXPECT_TRUE(exported.count("InitializeInjectionNvtx2"));
  EXPECT_TRUE(exported.count("ssgd_tracer_step"));  // the tracing window's step hook
#ifdef SSGD_TRACER_HAS_NCCL
  EXPECT_TRUE(exported.count("ncclProfiler_v5"));
  EXPECT_TRUE(exported.count("ncclProfiler_v4"));
#endif
}

// zstd is linked in; protobuf cannot be (Debian's archive is not fit for a
// shared object), see tracer/README.md.
TEST_F(TracerLibraryTest, CarriesZstdInside) {
  const std::string dynamic = run("readelf -d '" + kLibrary + "'");
  ASSERT_NE(dynamic.find("NEEDED"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("libzstd"), std::string::npos) << dynamic;
  EXPECT_NE(dynamic.find("libcupti"), std::string::npos) << dynamic;
}

// Loads the library in a child (tests/tracer/inject_probe.cc), as the CUDA
// driver would, and calls InitializeInjection; the child then exits
// normally so the atexit handlers (CUPTI flush, then the session's close) run.
// Runs tests/tracer/inject_probe.cc in a child with the library, `setting`
// (NAME, value) in its environment beside SSGD_TRACER_OUT=dir/trace, and
// `mode` as its second argument when not empty; stdout and stderr go to
// dir/stdout.txt and dir/stderr.txt. Returns the wait status.
int run_probe(const fs::path& dir, std::pair<const char*, const char*> setting,
              const char* mode) {
  const fs::path out_file = dir / "stdout.txt";
  const fs::path err_file = dir / "stderr.txt";
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(80);
    ::setenv("SSGD_TRACER_OUT", (dir / "trace").c_str(), 1);
    ::setenv(setting.first, setting.second, 1);
    ::unsetenv("RANK");
    if (*mode != '\0') {
      ::execl(SSGD_INJECT_PROBE, SSGD_INJECT_PROBE, kLibrary.c_str(), mode,
              static_cast<char*>(nullptr));
    } else {
      ::execl(SSGD_INJECT_PROBE, SSGD_INJECT_PROBE, kLibrary.c_str(), static_cast<char*>(nullptr));
    }
    ::_exit(81);
  }
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid ? status : -1;
}

TEST_F(TracerLibraryTest, InitializeInjectionWithoutGpuStandsDownQuietly) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "a GPU driver is present; this checks the no-GPU path";
  const fs::path out_dir = dir_ / "trace";
  const fs::path out_file = dir_ / "stdout.txt";
  const int status = run_probe(dir_, {"SSGD_TRACER_LOG", "1"}, "");
  ASSERT_NE(status, -1);
  const std::string err = slurp(dir_ / "stderr.txt");
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << err;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "stderr: " << err << "stdout: " << slurp(out_file);
  EXPECT_EQ(slurp(out_file), "") << "the tracer wrote to stdout";

  // No GPU here: CUPTI cannot start, and the trace says so in a marker.
  EXPECT_NE(err.find("ssgd-tracer: CUPTI tracing is off: "), std::string::npos) << err;
  auto reader = ssgd::trace::TraceReader::open(out_dir / "rank-0.ssgdt");
  ssgd::trace::v1::Event e;
  int notes = 0;
  while (reader.next(e)) {
    if (e.has_marker() && e.marker().domain() == "ssgd-tracer") {
      ++notes;
      EXPECT_EQ(e.marker().name().rfind("CUPTI tracing is off: ", 0), 0u) << e.marker().name();
    }
  }
  EXPECT_EQ(notes, 1);
  ASSERT_NE(reader.footer(), nullptr) << "the session was not closed at exit";
}

// The tracing window's step hook through the library, without a GPU: CUPTI
// stands down, so nothing can be switched and the window never opens, but
// every reported step is in the trace (domain ssgd-window), and the program
// still exits cleanly with nothing on stdout.
TEST_F(TracerLibraryTest, StepHookMarksEveryStepWithoutAGpu) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "a GPU driver is present; this checks the no-GPU path";
  const fs::path out_dir = dir_ / "trace";
  const fs::path out_file = dir_ / "stdout.txt";
  const int status = run_probe(dir_, {"SSGD_TRACER_WINDOW", "steps:1:3"}, "steps");
  ASSERT_NE(status, -1);
  const std::string err = slurp(dir_ / "stderr.txt");
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << err;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "stderr: " << err;
  EXPECT_EQ(slurp(out_file), "");
  auto reader = ssgd::trace::TraceReader::open(out_dir / "rank-0.ssgdt");
  ssgd::trace::v1::Event e;
  std::vector<std::string> steps;
  while (reader.next(e)) {
    if (e.has_marker() && e.marker().domain() == "ssgd-window") steps.push_back(e.marker().name());
  }
  const std::vector<std::string> want = {"step/0", "step/1", "step/2", "step/3", "step/4"};
  EXPECT_EQ(steps, want);
}

}  // namespace
