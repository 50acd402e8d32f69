// Outputs that are not regular files (issue 33), as real processes
// (SSGD_CLI) in a fresh folder per test:
// - a FIFO or a character device given as an output is written through and
//   stays what it was: a FIFO streams the report to its reader; /dev/null
//   (a node of the test's own, made with mknod when root) swallows it;
//   /dev/full's ENOSPC is exit 1 naming the path and flag;
// - /dev/stdout and /dev/fd/1 write to the process's standard output and
//   are never replaced;
// - a folder, a block device or a socket is refused before any work,
//   exit 2 naming the flag, in every command;
// - a link to a file stays a link, its file replaced;
// - `sweep` that runs out of room leaves its results file whole (cut back to
//   the points written whole) and says so; its results file must be a
//   regular file;
// - `merge` refuses an output named as a rank file in the folder it merges;
// - `export chakra` that fails leaves no folder and no file behind.
//
// Devices are made in the test's folder, never the system's /dev nodes used
// as outputs: a regression replaces the test's node, not the machine's. The
// one run with /dev/stdout itself comes only after the same run with
// /dev/fd/1 (which a regression cannot harm: /proc takes no new names)
// showed that this binary writes the descriptor through.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/rank_files.h"
#include "tests/support/special_files.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ssgd::trace::v1;
using ssgd::testing::CliResult;
using ssgd::testing::file_type_of;
using ssgd::testing::read_file_bytes;
using ssgd::testing::sorted_names;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kMarked = (kSource / "tests/data/traces/marked.txtpb").string();
const std::string kResnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
const std::string kPytorch = (kSource / "tests/data/pytorch/pilot_rank0.json.gz").string();
constexpr int kBadInput = 2;
constexpr int kFailure = 1;
constexpr unsigned kTimeoutSeconds = 60;

std::string osu_log(int ranks) {
  std::string s = "# OSU MPI Allreduce Latency Test v5.4.0\n# Size       Avg Latency(us)\n";
  for (long bytes = 1024; bytes <= (1L << 20); bytes *= 2) {
    const double steps = 2.0 * (ranks - 1);
    s += std::to_string(ranks) + "," + std::to_string(bytes) + "   " +
         std::to_string(steps * 20 + steps / ranks * static_cast<double>(bytes) / 1000) + "\n";
  }
  return s;
}

class OutputsCliTest : public ssgd::testing::TempDirTest {
 protected:
  // A child with an alarm (a run blocked on a FIFO fails instead of hanging
  // the test) and, when given, a file-size limit with SIGXFSZ ignored: EFBIG.
  CliResult ssgd(const std::vector<std::string>& args, std::optional<rlim_t> file_size = {}) {
    const fs::path scratch =
        dir_.string() + "_out" + std::to_string(runs_++);  // runs may overlap (FIFO tests)
    fs::create_directories(scratch);
    CliResult r = ssgd::testing::run_cli(SSGD_CLI, args, dir_, scratch, [file_size] {
      if (file_size) {
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{*file_size, *file_size};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(125);
      }
      ::alarm(kTimeoutSeconds);
    });
    if (!r.exited && r.signal == 0) ADD_FAILURE() << "cannot fork";
    fs::remove_all(scratch);
    return r;
  }
  CliResult ok(const std::vector<std::string>& args) {
    auto r = ssgd(args);
    EXPECT_TRUE(r.exited && r.status == 0) << ::testing::PrintToString(args) << "\n" << r;
    return r;
  }
  CliResult refused(const std::vector<std::string>& args, const std::string& message,
                    int status = kBadInput, std::optional<rlim_t> file_size = {}) {
    auto r = ssgd(args, file_size);
    EXPECT_TRUE(r.exited) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.status, status) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: ")) << r;
    EXPECT_THAT(r.err, HasSubstr(message)) << ::testing::PrintToString(args);
    return r;
  }
  bool make_char_device(const std::string& name, unsigned minor) {
    return ssgd::testing::make_char_device(dir_ / name, minor);
  }
  // The inputs of every command: a report, traces, a rank folder, OSU logs, a grid.
  void make_inputs() {
    ok({"simulate", kResnet, "-q", "--set", "cluster.nodes=2", "--report", "r.json", "--trace",
        "sim.ssgdt"});
    ok({"pack", kMarked, "-o", "marked.ssgdt"});
    fs::create_directories(dir_ / "cap");
    ssgd::testing::RankFileSpec rank{0, 1, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}};
    rank.events.push_back(ssgd::testing::kernel_event(0, 1000, 1500));
    ssgd::testing::write_rank_file(dir_ / "cap", rank);
    write_file_bytes(dir_ / "ar2.log", osu_log(2));
    write_file_bytes(dir_ / "ar4.log", osu_log(4));
    ok({"export", "chakra", kResnet, "-o", "et"});
    write_file_bytes(dir_ / "grid.yaml", "input: " + kResnet +
                                             "\nset:\n  iterations: 3\n  cluster.gpus_per_node: "
                                             "2\ngrid:\n  cluster.nodes: [1, 2]\n");
  }
  // Every command with an output, the output last.
  std::vector<std::vector<std::string>> every_output_command() {
    return {
        {"report", "r.json", "-o"},
        {"pack", kMarked, "-o"},
        {"import", "pytorch", kPytorch, "-o"},
        {"export", "perfetto", "sim.ssgdt", "-o"},
        {"merge", "cap", "-o"},
        {"calibrate", "ar2.log", "ar4.log", "-o"},
        {"simulate", kResnet, "-q", "--report"},
        {"simulate", kResnet, "-q", "--timeline"},
        {"simulate", kResnet, "-q", "--trace"},
        {"scale", kResnet, "--gpus", "1,2", "--report"},
        {"optimize", kResnet, "--param", "iterations", "--values", "2,3", "--report"},
        {"diff", "marked.ssgdt", "sim.ssgdt", "--report"},
        {"collectives", "--set", "cluster.nodes=2", "--to", "1KiB", "--report"},
        {"sweep", "grid.yaml", "-o", "s.jsonl", "--restart", "--csv"},
    };
  }
  int runs_ = 0;
};

// Everything the writer of `fifo` sends until it closes (`done`), or what
// came before the timeout.
std::string read_fifo(ssgd::testing::FifoReader& reader, bool& done) {
  return reader.read_all(done, std::chrono::seconds(kTimeoutSeconds));
}

TEST_F(OutputsCliTest, AReportToAFifoStreamsThePageToItsReader) {
  ok({"simulate", kResnet, "-q", "--report", "r.json"});
  const auto stream = [&](const std::vector<std::string>& args, const std::string& fifo,
                          std::string& got) {
    ASSERT_EQ(::mkfifo((dir_ / fifo).c_str(), 0644), 0);
    ssgd::testing::FifoReader reader(dir_ / fifo);
    ASSERT_TRUE(reader.opened());
    CliResult r;
    std::thread run([&] { r = ssgd(args); });
    bool done = false;
    got = read_fifo(reader, done);
    run.join();
    EXPECT_TRUE(r.exited && r.status == 0) << r;
    EXPECT_TRUE(done);
    EXPECT_EQ(file_type_of(dir_ / fifo), S_IFIFO);
  };
  std::string page;
  ASSERT_NO_FATAL_FAILURE(stream({"report", "r.json", "-o", "page.fifo"}, "page.fifo", page));
  ok({"report", "r.json", "-o", "page.html"});
  EXPECT_THAT(page.substr(0, 100), HasSubstr("<html"));
  EXPECT_TRUE(page == read_file_bytes(dir_ / "page.html")) << page.size() << " bytes";
  std::string report;
  ASSERT_NO_FATAL_FAILURE(
      stream({"simulate", kResnet, "-q", "--report", "r.fifo"}, "r.fifo", report));
  EXPECT_EQ(report, read_file_bytes(dir_ / "r.json"));
  // Nothing else was made: no temporary file beside either FIFO.
  EXPECT_EQ(sorted_names(dir_),
            (std::vector<std::string>{"page.fifo", "page.html", "r.fifo", "r.json"}));

  // Two FIFOs read one after the other, as `cat r.fifo t.fifo` would: the
  // report ends before the timeline is opened.
  ASSERT_EQ(::mkfifo((dir_ / "t.fifo").c_str(), 0644), 0);
  fs::remove(dir_ / "r.fifo");
  ASSERT_EQ(::mkfifo((dir_ / "r.fifo").c_str(), 0644), 0);
  auto r_reader = std::make_unique<ssgd::testing::FifoReader>(dir_ / "r.fifo");
  ASSERT_TRUE(r_reader->opened());
  CliResult both;
  std::thread run([&] {
    both = ssgd({"simulate", kResnet, "-q", "--report", "r.fifo", "--timeline", "t.fifo"});
  });
  bool done = false;
  const std::string r_got = read_fifo(*r_reader, done);
  r_reader.reset();  // closed before the timeline is opened, as cat would
  EXPECT_TRUE(done);
  ssgd::testing::FifoReader t_reader(dir_ / "t.fifo");
  const std::string t_got = read_fifo(t_reader, done);
  run.join();
  EXPECT_TRUE(both.exited && both.status == 0) << both;
  EXPECT_EQ(r_got, read_file_bytes(dir_ / "r.json"));
  EXPECT_THAT(t_got.substr(0, 200), HasSubstr("traceEvents"));
}

TEST_F(OutputsCliTest, EveryOutputToACharacterDeviceIsWrittenThroughAndTheDeviceKept) {
  if (!make_char_device("null", 3)) GTEST_SKIP() << "mknod needs root";
  make_inputs();
  const std::vector<std::string> before = sorted_names(dir_);
  for (auto args : every_output_command()) {
    args.push_back("null");
    ok(args);
    ASSERT_EQ(file_type_of(dir_ / "null"), S_IFCHR) << ::testing::PrintToString(args);
  }
  ok({"import", "chakra", "et", "-o", "null"});
  EXPECT_EQ(file_type_of(dir_ / "null"), S_IFCHR);
  // simulate takes back the outputs it wrote when a later one fails: never
  // one it wrote through.
  refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=64", "--report", "null", "--trace",
           "t.ssgdt"},
          "t.ssgdt: field '--trace': cannot write: File too large", kFailure, 40 * 1024);
  EXPECT_EQ(file_type_of(dir_ / "null"), S_IFCHR);
  // No temporary file left beside it; sweep's results file is the one new file.
  std::vector<std::string> after = sorted_names(dir_);
  after.erase(std::remove(after.begin(), after.end(), "s.jsonl"), after.end());
  EXPECT_EQ(after, before);
}

TEST_F(OutputsCliTest, AFullDeviceIsExitOneNamingThePathAndFlagAndStaysADevice) {
  if (!make_char_device("full", 7)) GTEST_SKIP() << "mknod needs root";
  ok({"simulate", kResnet, "-q", "--report", "r.json", "--trace", "sim.ssgdt"});
  const std::string enospc = std::strerror(ENOSPC);
  const auto expect = [&](const std::vector<std::string>& args, const std::string& flag) {
    const auto r = refused(args, "full: field '" + flag + "': cannot write: " + enospc, kFailure);
    EXPECT_THAT(r.err, HasSubstr("it is a character device, written through"));
    EXPECT_EQ(file_type_of(dir_ / "full"), S_IFCHR);
  };
  expect({"report", "r.json", "-o", "full"}, "--output");
  expect({"simulate", kResnet, "-q", "--report", "full"}, "--report");
  expect({"simulate", kResnet, "-q", "--timeline", "full"}, "--timeline");
  expect({"pack", kMarked, "-o", "full"}, "--output");
  expect({"export", "perfetto", "sim.ssgdt", "-o", "full"}, "--output");
  EXPECT_EQ(sorted_names(dir_), (std::vector<std::string>{"full", "r.json", "sim.ssgdt"}));
}

TEST_F(OutputsCliTest, StandardOutputIsWrittenThroughAndNeverReplaced) {
  ok({"simulate", kResnet, "-q", "--report", "r.json"});
  const std::string report = read_file_bytes(dir_ / "r.json");
  // Harmless if this regressed: /proc and /dev/fd take no new names.
  for (const std::string path : {"/dev/fd/1", "/proc/self/fd/1"}) {
    const auto r = ok({"simulate", kResnet, "-q", "--report", path});
    ASSERT_EQ(r.out, report) << path;
  }
  ok({"report", "r.json", "-o", "page.html"});
  const std::string page = read_file_bytes(dir_ / "page.html");
  // The page, then the line that says where it went.
  ASSERT_EQ(
      ok({"report", "r.json", "-o", "/dev/fd/1"}).out,
      page + "ssgd report: 1 input -> /dev/fd/1 (" + std::to_string(page.size()) + " bytes)\n");
  // /dev/stdout itself, now that the same run is known to write through.
  const mode_t stdout_type = file_type_of("/dev/stdout");
  ASSERT_NE(stdout_type, 0u) << "this system has no /dev/stdout";
  EXPECT_EQ(ok({"simulate", kResnet, "-q", "--report", "/dev/stdout"}).out, report);
  EXPECT_EQ(
      ok({"report", "r.json", "-o", "/dev/stdout"}).out,
      page + "ssgd report: 1 input -> /dev/stdout (" + std::to_string(page.size()) + " bytes)\n");
  EXPECT_EQ(file_type_of("/dev/stdout"), stdout_type);
  // The summary simulate prints and the report share standard output, in order.
  const auto both = ok({"simulate", kResnet, "--report", "/dev/stdout"});
  EXPECT_THAT(both.out, HasSubstr(report));
  EXPECT_GT(both.out.size(), report.size());
  EXPECT_EQ(sorted_names(dir_), (std::vector<std::string>{"page.html", "r.json"}));
}

TEST_F(OutputsCliTest, AFolderABlockDeviceOrASocketIsRefusedBeforeAnyWorkInEveryCommand) {
  write_file_bytes(dir_ / "in.txt", "not read: the outputs are checked first\n");
  fs::create_directories(dir_ / "folder");
  const int s = ssgd::testing::bind_unix_socket(dir_ / "s.sock");
  ASSERT_GE(s, 0) << std::strerror(errno);
  std::vector<std::pair<std::string, std::string>> outputs{{"folder", "is a folder"},
                                                           {"s.sock", "is a socket"}};
  // A block device node of the test's own (loop0's numbers): never opened.
  if (::mknod((dir_ / "blk").c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0) {
    outputs.emplace_back("blk", "is a block device");
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> commands{
      {{"report", "in.txt", "-o"}, "--output"},
      {{"pack", "in.txt", "-o"}, "--output"},
      {{"import", "bcaffe", "in.txt", "-o"}, "--output"},
      {{"import", "pytorch", "in.txt", "-o"}, "--output"},
      {{"import", "chakra", "in.txt", "-o"}, "--output"},
      {{"export", "perfetto", "in.txt", "-o"}, "--output"},
      {{"merge", ".", "-o"}, "--output"},
      {{"calibrate", "in.txt", "-o"}, "--output"},
      {{"simulate", "in.txt", "--report"}, "--report"},
      {{"simulate", "in.txt", "--timeline"}, "--timeline"},
      {{"simulate", "in.txt", "--trace"}, "--trace"},
      {{"scale", "in.txt", "--gpus", "1,2", "--report"}, "--report"},
      {{"optimize", "in.txt", "--param", "iterations", "--values", "2", "--report"}, "--report"},
      {{"diff", "in.txt", "in.txt", "--report"}, "--report"},
      {{"collectives", "--report"}, "--report"},
      {{"dataset", "verify", ".", "--report"}, "--report"},
  };
  for (const auto& [out, why] : outputs) {
    for (auto [args, flag] : commands) {
      args.push_back(out);
      const auto r = refused(args, out + ": field '" + flag + "': cannot write here: " + why);
      EXPECT_EQ(r.out, "");
    }
  }
  ::close(s);
  // export chakra's output is a folder: another thing is refused.
  refused({"export", "chakra", kResnet, "-o", "in.txt"},
          "in.txt: field '-o': exists and is not a folder");
  EXPECT_EQ(file_type_of(dir_ / "folder"), S_IFDIR);
  EXPECT_EQ(sorted_names(dir_ / "folder"), std::vector<std::string>{});
  EXPECT_EQ(file_type_of(dir_ / "s.sock"), S_IFSOCK);
}

TEST_F(OutputsCliTest, ALinkToAFileStaysALinkAndItsFileIsReplaced) {
  fs::create_directories(dir_ / "reports");
  write_file_bytes(dir_ / "reports/r.json", "old\n");
  fs::create_symlink("reports/r.json", dir_ / "latest.json");
  ok({"simulate", kResnet, "-q", "--report", "latest.json"});
  EXPECT_EQ(file_type_of(dir_ / "latest.json"), S_IFLNK);
  EXPECT_EQ(fs::read_symlink(dir_ / "latest.json"), "reports/r.json");
  EXPECT_THAT(read_file_bytes(dir_ / "reports/r.json"), HasSubstr("\"iteration_time_ns\""));
  EXPECT_EQ(sorted_names(dir_ / "reports"), std::vector<std::string>{"r.json"});
  // A link into a folder that does not exist: exit 2 before any work.
  fs::create_symlink("nowhere/r.json", dir_ / "dangling.json");
  refused({"simulate", kResnet, "-q", "--report", "dangling.json"},
          "dangling.json: field '--report': cannot write here: it is a link to");
}

TEST_F(OutputsCliTest, SweepOutOfRoomLeavesItsResultsWholeAndSaysSo) {
  write_file_bytes(dir_ / "grid.yaml",
                   "input: " + kResnet +
                       "\nset:\n  iterations: 3\n  cluster.gpus_per_node: 2\ngrid:\n  "
                       "cluster.nodes: [1, 2]\n  network.inter_node: [10gbe, 100gbe]\n");
  const std::vector<std::string> args{"sweep", "grid.yaml", "-o", "r.jsonl", "-q"};
  ok({"sweep", "grid.yaml", "-o", "whole.jsonl", "-q"});
  const std::string whole = read_file_bytes(dir_ / "whole.jsonl");
  // Four lines of about 2 kB: the limit, half way into the third, cuts it.
  const std::size_t second_end = whole.find('\n', whole.find('\n') + 1) + 1;
  const std::size_t third_end = whole.find('\n', second_end) + 1;
  ASSERT_GT(third_end, second_end + 100);
  const auto r = refused(args,
                         "r.jsonl: field '--output': cannot write: File too large; the "
                         "results file holds the 2 point(s) written whole before it",
                         kFailure, static_cast<rlim_t>((second_end + third_end) / 2));
  EXPECT_THAT(r.err, Not(HasSubstr("nothing was written")));
  // Whole lines only, each a point's record, the first two of the clean run.
  const std::string kept = read_file_bytes(dir_ / "r.jsonl");
  ASSERT_TRUE(kept.ends_with("\n"));
  std::istringstream lines(kept);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  }
  EXPECT_EQ(count, 2);
  EXPECT_TRUE(whole.starts_with(kept));
  // The next run resumes without a warning about a cut line, and ends the same.
  const auto resumed = ok(args);
  EXPECT_THAT(resumed.err, Not(HasSubstr("cut short")));
  EXPECT_EQ(read_file_bytes(dir_ / "r.jsonl"), whole);
  EXPECT_EQ(sorted_names(dir_), (std::vector<std::string>{"grid.yaml", "r.jsonl", "whole.jsonl"}));
}

TEST_F(OutputsCliTest, SweepsResultsFileMustBeARegularFile) {
  write_file_bytes(dir_ / "grid.yaml", "input: " + kResnet + "\ngrid:\n  cluster.nodes: [1, 2]\n");
  ASSERT_EQ(::mkfifo((dir_ / "r.fifo").c_str(), 0644), 0);
  refused({"sweep", "grid.yaml", "-o", "r.fifo"},
          "r.fifo: field '--output': cannot write here: is a FIFO (named pipe), and the results "
          "file is read back to resume a sweep and appended to: give a regular file");
  EXPECT_EQ(file_type_of(dir_ / "r.fifo"), S_IFIFO);
}

TEST_F(OutputsCliTest, MergeRefusesAnOutputNamedAsARankFileOfItsFolder) {
  fs::create_directories(dir_ / "cap");
  ssgd::testing::RankFileSpec rank{0, 1, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}};
  rank.events.push_back(ssgd::testing::kernel_event(0, 1000, 1500));
  ssgd::testing::write_rank_file(dir_ / "cap", rank);
  const std::string why =
      "cannot write here: it is a rank file's name in the folder being merged ('cap')";
  refused({"merge", "cap", "-o", "cap/rank-2.ssgdt"}, "cap/rank-2.ssgdt: field '--output': " + why);
  refused({"merge", "cap", "-o", "./cap/../cap/rank-1.ssgdt"}, "field '--output': " + why);
  // A link elsewhere that leads there.
  fs::create_symlink("cap/rank-3.ssgdt", dir_ / "out.ssgdt");
  refused({"merge", "cap", "-o", "out.ssgdt"}, "out.ssgdt: field '--output': " + why);
  EXPECT_EQ(sorted_names(dir_ / "cap"), std::vector<std::string>{"rank-0.ssgdt"});
  // Any other name in the folder is never read as a rank: allowed.
  ok({"merge", "cap", "-o", "cap/merged.ssgdt"});
  ok({"merge", "cap", "-o", "cap/merged2.ssgdt"});  // and the next merge still sees one rank
  EXPECT_EQ(sorted_names(dir_ / "cap"),
            (std::vector<std::string>{"merged.ssgdt", "merged2.ssgdt", "rank-0.ssgdt"}));
}

TEST_F(OutputsCliTest, AFailedChakraExportLeavesNothingNewBehind) {
  const auto with = [&](const std::string& dir) {
    return std::vector<std::string>{"export",          "chakra", kResnet, "--set",
                                    "cluster.nodes=4", "-o",     dir};
  };
  // The files do not fit the limit: no folder is left.
  refused(with("et"), "et: field '-o': cannot write", kFailure, 64 * 1024);
  EXPECT_FALSE(fs::exists(dir_ / "et"));
  EXPECT_EQ(sorted_names(dir_), std::vector<std::string>{});
  // An earlier export's folder keeps its files, byte for byte.
  ok(with("et"));
  const std::vector<std::string> files = sorted_names(dir_ / "et");
  ASSERT_EQ(files.size(), 4u);
  const std::string rank0 = read_file_bytes(dir_ / "et" / files[0]);
  refused(with("et"), "et: field '-o': cannot write", kFailure, 64 * 1024);
  EXPECT_EQ(sorted_names(dir_ / "et"), files);
  EXPECT_EQ(read_file_bytes(dir_ / "et" / files[0]), rank0);
  // A rank's name taken by a FIFO: refused, exit 2, the FIFO kept.
  fs::remove(dir_ / "et" / files[1]);
  ASSERT_EQ(::mkfifo((dir_ / "et" / files[1]).c_str(), 0644), 0);
  refused(with("et"), files[1] + ": field '-o': is a FIFO (named pipe), not a regular file");
  EXPECT_EQ(file_type_of(dir_ / "et" / files[1]), S_IFIFO);
  EXPECT_EQ(sorted_names(dir_ / "et"), files);
}

}  // namespace
