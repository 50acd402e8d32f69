// The options the `ssgd` commands share (tools/ssgd/cli_options.h), run as
// real processes (SSGD_CLI) in a fresh folder per test:
// - the deprecated spellings of output flags (--trace-out, --json, --out)
//   still work, write what the new names write, and say so on stderr;
// - scale and optimize refuse a scenario with jobs:, naming the key and the
//   command;
// - --allow-truncated is accepted by every command that reads traces, and a
//   trace cut short is refused without it;
// - --scenario, --set and --report give the same errors in every command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/rank_files.h"
#include "tests/support/test_files.h"
#include "traces/trace_writer.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ssgd::trace::v1;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kMarked = (kSource / "tests/data/traces/marked.txtpb").string();
const std::string kResnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
const std::string kSharedFabric = (kSource / "scenarios/shared_fabric.yaml").string();
constexpr int kBadInput = 2;

std::string deprecation(const std::string& old_flag, const std::string& new_flag) {
  return "ssgd: " + old_flag + " is deprecated, use " + new_flag + "; it will be removed in 0.3\n";
}

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

// `bytes` of a .ssgdt file cut in the middle of the data of its last chunk
// (layout: traces/container_format.h): a trace whose capture died.
std::string cut_in_last_chunk(const std::string& bytes) {
  std::size_t at = 16 + u32_at(bytes, 12) + 4;  // fixed header, metadata, header CRC
  std::size_t last = 0, last_size = 0;
  while (at + 24 <= bytes.size() && bytes.compare(at, 4, "CHNK") == 0) {
    last = at;
    last_size = u32_at(bytes, at + 4);
    at += 24 + last_size;
  }
  EXPECT_GT(last, 0u) << "no chunk";
  return bytes.substr(0, last + 24 + last_size / 2);
}

class SharedOptionsCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return run_ssgd(SSGD_CLI, args);
  }
  ssgd::testing::CliResult ok(const std::vector<std::string>& args) {
    auto r = ssgd(args);
    EXPECT_TRUE(r.exited && r.status == 0) << r;
    return r;
  }
  // Fails with exit status 2, a message, nothing on stdout.
  ssgd::testing::CliResult refused(const std::vector<std::string>& args) {
    auto r = ssgd(args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: ")) << r;
    return r;
  }
  // marked.txtpb as marked.ssgdt (two events per chunk), and cut.ssgdt, the
  // same cut short.
  void pack_marked() {
    ok({"pack", kMarked, "-o", "marked.ssgdt", "--events-per-chunk", "2"});
    write_file_bytes(dir_ / "cut.ssgdt", cut_in_last_chunk(read_file_bytes(dir_ / "marked.ssgdt")));
  }
  std::string bytes(const std::string& name) { return read_file_bytes(dir_ / name); }
};

// ---------------------------------------------------------------- aliases

TEST_F(SharedOptionsCliTest, TraceOutIsTraceAndSaysItIsDeprecated) {
  pack_marked();
  const auto now = ok({"simulate", "marked.ssgdt", "-q", "--trace", "new.ssgdt"});
  EXPECT_THAT(now.err, Not(HasSubstr("deprecated")));
  const auto old = ok({"simulate", "marked.ssgdt", "-q", "--trace-out", "old.ssgdt"});
  EXPECT_THAT(old.err, HasSubstr(deprecation("--trace-out", "--trace")));
  EXPECT_EQ(bytes("old.ssgdt"), bytes("new.ssgdt"));
  // Errors name the spelling that was given.
  EXPECT_THAT(refused({"simulate", "marked.ssgdt", "--trace-out", "no/such/dir/x.ssgdt"}).err,
              HasSubstr("no/such/dir/x.ssgdt: field '--trace-out': cannot write here"));
  EXPECT_THAT(refused({"simulate", "marked.ssgdt", "--trace", "no/such/dir/x.ssgdt"}).err,
              HasSubstr("no/such/dir/x.ssgdt: field '--trace': cannot write here"));
  // Both spellings at once name one output twice.
  EXPECT_THAT(
      refused({"simulate", "marked.ssgdt", "--trace", "a.ssgdt", "--trace-out", "b.ssgdt"}).err,
      HasSubstr("field '--trace-out': is the old spelling of --trace: give --trace only"));
  EXPECT_FALSE(fs::exists(dir_ / "a.ssgdt"));
  EXPECT_FALSE(fs::exists(dir_ / "b.ssgdt"));
}

TEST_F(SharedOptionsCliTest, DiffJsonIsReportAndSaysItIsDeprecated) {
  pack_marked();
  const auto now = ok({"diff", "marked.ssgdt", "marked.ssgdt", "--report", "new.json"});
  EXPECT_THAT(now.err, Not(HasSubstr("deprecated")));
  const auto old = ok({"diff", "marked.ssgdt", "marked.ssgdt", "--json", "old.json"});
  EXPECT_THAT(old.err, HasSubstr(deprecation("--json", "--report")));
  EXPECT_EQ(old.out, now.out);
  EXPECT_EQ(bytes("old.json"), bytes("new.json"));
}

TEST_F(SharedOptionsCliTest, TraceOutIsOutputAndSaysItIsDeprecated) {
  // Refused before the tracer library is looked for, so this runs without it.
  auto r = refused({"trace", "--out", "", "--", "/bin/true"});
  EXPECT_THAT(r.err, HasSubstr(deprecation("--out", "--output")));
  EXPECT_THAT(r.err, HasSubstr("'': field '--out': the folder name is empty"));
  r = refused({"trace", "-o", "", "--", "/bin/true"});
  EXPECT_THAT(r.err, Not(HasSubstr("deprecated")));
  EXPECT_THAT(r.err, HasSubstr("'': field '--output': the folder name is empty"));
}

TEST_F(SharedOptionsCliTest, DeprecatedSpellingsAreLeftOutOfHelp) {
  for (const auto& [command, old_flag] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"simulate", "--help"}, "--trace-out"},
           {{"diff", "--help"}, "--json"},
           {{"trace", "--help"}, "--out "}}) {
    const auto r = ok(command);
    EXPECT_THAT(r.out, Not(HasSubstr(old_flag))) << r;
  }
}

// ---------------------------------------------------------------- jobs

TEST_F(SharedOptionsCliTest, ScaleAndOptimizeRefuseAScenarioWithJobs) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
      {"scale", {"scale", kResnet, "--gpus", "1,2"}},
      {"optimize", {"optimize", kResnet, "--param", "policy.bucket_cap", "--values", "1MiB"}}};
  for (const auto& [name, command] : commands) {
    const std::string why = "field 'jobs': ssgd " + name +
                            " replays the scenario's own job alone; leave jobs out (ssgd "
                            "simulate runs them on a shared fabric)";
    std::vector<std::string> args = command;
    args.insert(args.end(), {"--scenario", kSharedFabric, "--report", "r.json"});
    EXPECT_THAT(refused(args).err, HasSubstr(kSharedFabric + ": " + why));
    // Jobs added by --set are named there.
    args = command;
    args.insert(args.end(), {"--set", "network.model=flow", "--set", "jobs.0.kind=traffic", "--set",
                             "jobs.0.nodes=2", "--set", "jobs.0.bytes=1MiB", "--report", "r.json"});
    EXPECT_THAT(refused(args).err, HasSubstr("--set: " + why));
    EXPECT_FALSE(fs::exists(dir_ / "r.json"));
  }
  // simulate runs them.
  ok({"simulate", kResnet, "--scenario", kSharedFabric, "-q"});
}

// ---------------------------------------------------------------- outputs

TEST_F(SharedOptionsCliTest, NoOutputMayOverwriteAnInput) {
  fs::copy_file(fs::path(kResnet), dir_ / "in.csv");
  const std::string before = bytes("in.csv");
  const std::string why = "is one of the command's inputs: writing it would overwrite it";
  EXPECT_THAT(refused({"simulate", "in.csv", "--report", "in.csv"}).err,
              HasSubstr("in.csv: field '--report': " + why));
  EXPECT_THAT(refused({"simulate", "in.csv", "--timeline", "./in.csv"}).err,
              HasSubstr("./in.csv: field '--timeline': " + why));
  EXPECT_THAT(refused({"scale", "in.csv", "--gpus", "1,2", "--report", "in.csv"}).err,
              HasSubstr("field '--report': " + why));
  EXPECT_EQ(bytes("in.csv"), before);
}

TEST_F(SharedOptionsCliTest, NegativeRankCountsAreRefused) {
  EXPECT_THAT(refused({"simulate", kResnet, "--trace", "t.ssgdt", "--trace-ranks", "-1"}).err,
              HasSubstr("'-1': field '--trace-ranks': expected a rank count of at least 1, or 0 "
                        "for all"));
  EXPECT_THAT(refused({"simulate", kResnet, "--timeline", "t.json", "--timeline-ranks", "-2"}).err,
              HasSubstr("'-2': field '--timeline-ranks'"));
  EXPECT_FALSE(fs::exists(dir_ / "t.ssgdt"));
  EXPECT_FALSE(fs::exists(dir_ / "t.json"));
}

// ---------------------------------------------------------------- --allow-truncated

TEST_F(SharedOptionsCliTest, EveryCommandThatReadsTracesTakesAllowTruncated) {
  pack_marked();
  const std::vector<std::vector<std::string>> commands{
      {"simulate", "cut.ssgdt", "-q"},
      {"scale", "cut.ssgdt", "--gpus", "1,2"},
      {"optimize", "cut.ssgdt", "--param", "policy.bucket_cap", "--values", "1MiB,4MiB"},
      {"diff", "cut.ssgdt", "marked.ssgdt"},
      {"diff", "marked.ssgdt", "cut.ssgdt"},
      {"export", "perfetto", "cut.ssgdt", "-o", "cut.json"}};
  for (const auto& command : commands) {
    const auto r = refused(command);
    EXPECT_THAT(r.err, HasSubstr("cut.ssgdt: record ")) << r;
    EXPECT_THAT(r.err, HasSubstr("--allow-truncated")) << r;
    std::vector<std::string> allowed = command;
    allowed.push_back("--allow-truncated");
    const auto a = ok(allowed);
    EXPECT_THAT(a.err, HasSubstr("cut short")) << a;
  }
  // info reads what is readable either way, and says so.
  for (const auto& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--allow-truncated"}}) {
    std::vector<std::string> args{"info", "cut.ssgdt"};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_THAT(ok(args).out, HasSubstr("CUT SHORT"));
  }
}

TEST_F(SharedOptionsCliTest, CalibrateTakesAllowTruncated) {
  // All-reduces of 2 ranks at 8 sizes, two events per chunk; cut short, the
  // file keeps the first 7 sizes whole.
  v1::CaptureMetadata m;
  m.set_world_size(2);
  m.add_hosts()->set_hostname("a");
  ssgd::trace::TraceWriterOptions options;
  options.events_per_chunk = 2;
  {
    ssgd::trace::TraceWriter writer(dir_ / "whole.ssgdt", m, options);
    std::int64_t t = 0;
    for (int i = 0; i < 8; ++i) {
      const std::int64_t bytes = std::int64_t{1024} << i;
      const std::int64_t ns = 10'000 + bytes / 10;
      for (int rank = 0; rank < 2; ++rank) {
        v1::Event e;
        e.set_rank(rank);
        auto* c = e.mutable_collective();
        c->set_op(v1::Collective::ALL_REDUCE);
        c->set_size_bytes(bytes);
        c->set_communicator_id(7);
        c->set_rank(rank);
        c->set_nranks(2);
        c->set_sequence_number(static_cast<std::uint64_t>(i));
        c->set_start_ns(t);
        c->set_end_ns(t + ns);
        writer.append(e);
      }
      t += ns + 1000;
    }
    writer.close();
  }
  write_file_bytes(dir_ / "cut.ssgdt", cut_in_last_chunk(bytes("whole.ssgdt")));
  const std::vector<std::string> args{"calibrate", "cut.ssgdt", "--max-bands", "1"};
  const auto r = refused(args);
  EXPECT_THAT(r.err, HasSubstr("cut.ssgdt: record 7: "));
  EXPECT_THAT(r.err, HasSubstr("pass --allow-truncated to fit the readable prefix"));
  std::vector<std::string> allowed = args;
  allowed.push_back("--allow-truncated");
  EXPECT_THAT(ok(allowed).out, HasSubstr("ssgd calibrate: 7 measurements from 1 file(s)"));
  EXPECT_THAT(ok({"calibrate", "whole.ssgdt", "--max-bands", "1"}).out,
              HasSubstr("ssgd calibrate: 8 measurements from 1 file(s)"));
}

TEST_F(SharedOptionsCliTest, MergeTakesAllowTruncatedForRankFilesCutShort) {
  fs::create_directories(dir_ / "cap");
  for (int rank = 0; rank < 2; ++rank) {
    ssgd::testing::write_rank_file(dir_ / "cap", {rank,
                                                  2,
                                                  "a",
                                                  v1::ClockDomain::MONOTONIC_RAW,
                                                  std::nullopt,
                                                  {ssgd::testing::kernel_event(rank, 100, 200),
                                                   ssgd::testing::kernel_event(rank, 300, 400),
                                                   ssgd::testing::kernel_event(rank, 500, 600)}});
  }
  write_file_bytes(dir_ / "cap" / "rank-1.ssgdt", cut_in_last_chunk(bytes("cap/rank-1.ssgdt")));
  const auto r = refused({"merge", "cap", "-o", "run.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("rank-1.ssgdt"));
  EXPECT_THAT(r.err, HasSubstr("--allow-truncated (or --force)"));
  EXPECT_FALSE(fs::exists(dir_ / "run.ssgdt"));
  const auto a = ok({"merge", "cap", "-o", "run.ssgdt", "--allow-truncated"});
  EXPECT_THAT(a.err, HasSubstr("ssgd: warning: rank-1.ssgdt was cut short; its first 2 events"));
  EXPECT_THAT(a.out, HasSubstr("merged 2 ranks from 1 host into run.ssgdt: 5 events"));
  EXPECT_THAT(a.out, HasSubstr("allowed: 1 problem(s) let through"));
}

// ---------------------------------------------------------------- shared errors

// --scenario, --set and --report are one set of options: the same mistake
// gives the same message, whichever command replays the scenario.
TEST_F(SharedOptionsCliTest, ScenarioOptionsGiveTheSameErrorsInEveryCommand) {
  const std::vector<std::vector<std::string>> commands{
      {"simulate", kResnet},
      {"scale", kResnet, "--gpus", "1,2"},
      {"optimize", kResnet, "--param", "policy.bucket_cap", "--values", "1MiB"}};
  const std::vector<std::pair<std::vector<std::string>, std::string>> mistakes{
      {{"--scenario", "missing.yaml"}, "missing.yaml"},
      {{"--set", "cluster.nodes=0"}, "--set: field 'cluster.nodes'"},
      {{"--set", "cluster.nodes"}, "key.path=value"},
      {{"--set", "cluster.nodez=2"}, "did you mean 'cluster.nodes'"},
      {{"--report", "no/such/dir/r.json"},
       "no/such/dir/r.json: field '--report': cannot write here: folder 'no/such/dir' does not "
       "exist"}};
  for (const auto& [flags, message] : mistakes) {
    std::string first;
    for (const auto& command : commands) {
      std::vector<std::string> args = command;
      args.insert(args.end(), flags.begin(), flags.end());
      const auto r = refused(args);
      EXPECT_THAT(r.err, HasSubstr(message)) << r;
      if (first.empty()) first = r.err;
      EXPECT_EQ(r.err, first) << command.front();
    }
  }
}

}  // namespace

namespace {

// What guides a person who does not know the commands yet: `ssgd` alone and
// `ssgd help [COMMAND]` print the help; a mistyped command, flag or preset
// names the nearest one.
TEST_F(SharedOptionsCliTest, HelpAndDidYouMean) {
  const auto bare = ssgd({});
  EXPECT_EQ(bare.status, kBadInput) << bare;
  EXPECT_THAT(bare.out, HasSubstr("Usage: ssgd [OPTIONS] SUBCOMMAND"));
  EXPECT_THAT(bare.out, HasSubstr("simulate"));
  const auto help = ok({"help"});
  EXPECT_EQ(help.out, bare.out);
  EXPECT_THAT(ok({"help", "scale"}).out, HasSubstr("--gpus"));
  EXPECT_THAT(refused({"simulat", kResnet}).err,
              HasSubstr("unknown command 'simulat' (did you mean 'simulate'?)"));
  EXPECT_THAT(refused({"--log", "warn", "simulat"}).err, HasSubstr("(did you mean 'simulate'?)"));
  EXPECT_THAT(refused({"help", "scael"}).err, HasSubstr("(did you mean 'scale'?)"));
  const auto flag = ssgd({"simulate", kResnet, "--scenrio", "x.yaml"});
  EXPECT_EQ(flag.status, kBadInput) << flag;
  EXPECT_THAT(flag.err, HasSubstr("ssgd simulate: unknown flag '--scenrio' (did you mean '--scenario'?)"));
  EXPECT_THAT(refused({"simulate", kResnet, "--set", "network.inter_node=ib_ndr"}).err,
              HasSubstr("unknown link preset 'ib_ndr' (did you mean 'ib_ndr400'?)"));
  EXPECT_THAT(refused({"simulate", kResnet, "--set", "platform.preset=hgx_h10"}).err,
              HasSubstr("unknown platform preset 'hgx_h10' (did you mean 'hgx_h100'?)"));
}

// Another tool's file, or ssgd's own in the wrong place, is named and the
// command that takes it given.
TEST_F(SharedOptionsCliTest, FilesInTheWrongPlaceSayWhereTheyGo) {
  write_file_bytes(dir_ / "kineto.json", "{\"traceEvents\": []}\n");
  write_file_bytes(dir_ / "kineto.json.gz", std::string("\x1f\x8b\x08\x00", 4) + "rest");
  EXPECT_THAT(refused({"simulate", "kineto.json"}).err, HasSubstr("'ssgd import pytorch FILE"));
  EXPECT_THAT(refused({"simulate", "kineto.json.gz"}).err, HasSubstr("gzip-compressed"));
  pack_marked();
  const auto report = refused({"report", "marked.ssgdt", "-o", "page.html"});
  EXPECT_THAT(report.err, HasSubstr("an ssgd trace, not a report: replay it with 'ssgd simulate"));
  EXPECT_FALSE(fs::exists(dir_ / "page.html"));
  const auto csv = refused({"simulate", kResnet, "--scenario", kResnet});
  EXPECT_THAT(csv.err, HasSubstr("a profile or trace is the command's input, not its --scenario"));
  EXPECT_LT(csv.err.size(), 1000u) << csv;
}

// A scenario with jobs: the headline is the job alone on the shared fabric,
// the very figure of the table's "alone" (one platform, one run), and the
// line after it the table's "shared".
TEST_F(SharedOptionsCliTest, SharedFabricHeadlineIsTheTablesAlone) {
  const auto r = ok({"simulate", kResnet, "--scenario", kSharedFabric, "--report", "r.json"});
  const auto report = nlohmann::json::parse(bytes("r.json"));
  const auto& main = report["shared_fabric"]["jobs"][0];
  EXPECT_EQ(report["iteration_time_ns"], main["alone_ns"]);
  const auto ms = [](std::int64_t ns) {
    return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
  };
  const std::string alone = ms(main["alone_ns"].get<std::int64_t>());
  const std::string shared = ms(main["shared_ns"].get<std::int64_t>());
  EXPECT_THAT(r.out, HasSubstr("iteration time                 " + alone));
  EXPECT_THAT(r.out, HasSubstr("with the other jobs            " + shared));
  EXPECT_THAT(r.out, HasSubstr("   " + alone + "   " + shared));
}

// -q, --quiet on every command, before or after it: nothing on stdout,
// only warnings and errors on stderr; the outputs flags name are written.
TEST_F(SharedOptionsCliTest, QuietOnEveryCommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"presets", "-q"}, {"-q", "presets"}, {"presets", "--quiet"},
        {"simulate", kResnet, "-q", "--report", "r.json"},
        {"optimize", kResnet, "--param", "policy.bucket_cap", "--values", "1MiB,8MiB", "-q",
         "--report", "o.json"},
        {"scale", kResnet, "--gpus", "1,2", "-q"}}) {
    const auto r = ok(args);
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, Not(HasSubstr("info"))) << r;
  }
  EXPECT_TRUE(fs::exists(dir_ / "r.json"));
  EXPECT_TRUE(fs::exists(dir_ / "o.json"));
  // Errors still say what is wrong.
  EXPECT_THAT(refused({"simulate", "nowhere.csv", "-q"}).err, HasSubstr("nowhere.csv"));
}

}  // namespace
