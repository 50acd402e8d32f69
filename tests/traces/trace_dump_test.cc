// Text views of a trace: the golden dump of a packed text trace, dump/pack
// round trips, the summary, pack's input errors, and the `ssgd` commands.
#include "traces/trace_dump.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(SSGD_SOURCE_DIR) / "tests/data/traces";

class TraceDumpTest : public ssgd::testing::TempDirTest {};

using ssgd::testing::read_file_bytes;

using ssgd::testing::write_file_bytes;

std::string dump(const fs::path& trace) {
  auto reader = TraceReader::open(trace);
  std::ostringstream out;
  dump_trace_text(reader, out);
  return out.str();
}

// pack_text_trace's InputError for `text`, or "" if none.
std::string pack_error(const fs::path& dir, const std::string& text) {
  write_file_bytes(dir / "in.txtpb", text);
  try {
    pack_text_trace(dir / "in.txtpb", dir / "out.ssgdt");
  } catch (const InputError& e) {
    EXPECT_FALSE(fs::exists(dir / "out.ssgdt"));
    return e.what();
  }
  return "";
}

// Packed in chunks of 4 and dumped, small.txtpb gives small.dump.txt exactly.
// SSGD_UPDATE_GOLDEN=1 rewrites the expected file (review the diff!).
TEST_F(TraceDumpTest, GoldenSmallTrace) {
  const auto packed = dir_ / "small.ssgdt";
  const auto footer = pack_text_trace(kData / "small.txtpb", packed, {.events_per_chunk = 4});
  EXPECT_EQ(footer.event_count(), 13u);
  EXPECT_EQ(footer.chunk_count(), 4u);
  const std::string actual = dump(packed);
  if (std::getenv("SSGD_UPDATE_GOLDEN") != nullptr) write_file_bytes(kData / "small.dump.txt", actual);
  EXPECT_EQ(actual, read_file_bytes(kData / "small.dump.txt"));
}

// Without its comments a dump is a TextTrace: pack it again and it dumps the same.
TEST_F(TraceDumpTest, DumpPacksBackToTheSameTrace) {
  pack_text_trace(kData / "small.txtpb", dir_ / "a.ssgdt", {.events_per_chunk = 4});
  const std::string first = dump(dir_ / "a.ssgdt");
  write_file_bytes(dir_ / "a.txtpb", first);
  pack_text_trace(dir_ / "a.txtpb", dir_ / "b.ssgdt", {.events_per_chunk = 4});
  EXPECT_EQ(dump(dir_ / "b.ssgdt"), first);
  EXPECT_EQ(read_file_bytes(dir_ / "a.ssgdt"), read_file_bytes(dir_ / "b.ssgdt"));
}

TEST_F(TraceDumpTest, DumpOfATruncatedFileEndsWithTheWarning) {
  pack_text_trace(kData / "small.txtpb", dir_ / "a.ssgdt", {.events_per_chunk = 4});
  std::string bytes = read_file_bytes(dir_ / "a.ssgdt");
  write_file_bytes(dir_ / "cut.ssgdt", bytes.substr(0, bytes.size() - 30));  // into the last chunk
  const std::string text = dump(dir_ / "cut.ssgdt");
  EXPECT_EQ(text.find("# footer"), std::string::npos);
  EXPECT_NE(text.find("\n# truncated: cut short: the file ends at byte"), std::string::npos)
      << text;
  EXPECT_EQ(text.find(dir_.string()), std::string::npos);  // no path in a dump
}

TEST_F(TraceDumpTest, SummaryCountsKindsRanksAndTopKernels) {
  pack_text_trace(kData / "small.txtpb", dir_ / "a.ssgdt");
  auto reader = TraceReader::open(dir_ / "a.ssgdt");
  const TraceSummary s = summarize_trace(reader, 1);
  EXPECT_EQ(s.events, 13u);
  EXPECT_EQ(s.kernels, 4u);
  EXPECT_EQ(s.memcpys, 2u);
  EXPECT_EQ(s.memsets, 1u);
  EXPECT_EQ(s.collectives, 3u);
  EXPECT_EQ(s.markers, 1u);
  EXPECT_EQ(s.api_calls, 2u);
  EXPECT_EQ(s.events_per_rank.at(0), 9u);
  EXPECT_EQ(s.events_per_rank.at(1), 4u);
  EXPECT_EQ(s.first_ns, 1000);
  EXPECT_EQ(s.last_ns, 90000);
  EXPECT_EQ(s.distinct_kernels, 2u);
  ASSERT_EQ(s.top_kernels.size(), 1u);
  EXPECT_EQ(s.top_kernels[0].name, "fc1_backward");
  EXPECT_EQ(s.top_kernels[0].stats.total_ns, 16000 + 17000);
  EXPECT_EQ(s.collectives_by_op.at("ALL_REDUCE").count, 2u);
  EXPECT_EQ(s.collectives_by_op.at("ALL_REDUCE").size_bytes, 2 * 4194304);
  EXPECT_EQ(s.memcpys_by_kind.at("HTOD").size_bytes, 1048576);
  EXPECT_TRUE(s.has_footer);
  EXPECT_FALSE(s.truncated);

  std::ostringstream out;
  print_summary(s, out);
  EXPECT_NE(out.str().find("provenance       synthetic"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("events per rank  0: 9, 1: 4"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("fc1_backward"), std::string::npos);
  EXPECT_NE(out.str().find("ALL_REDUCE"), std::string::npos);

  // World size 0 is "not recorded" (the tracer writes it without WORLD_SIZE):
  // info says so instead of "of world size 0".
  TraceSummary unrecorded = s;
  unrecorded.metadata.set_world_size(0);
  std::ostringstream unknown;
  print_summary(unrecorded, unknown);
  EXPECT_NE(unknown.str().find("(world size not recorded)"), std::string::npos) << unknown.str();
  EXPECT_EQ(unknown.str().find("of world size 0"), std::string::npos) << unknown.str();
}

TEST_F(TraceDumpTest, PackReportsBadInputWithLineAndField) {
  const std::string syntax =
      pack_error(dir_, "metadata {\n  tool: \"x\"\n}\nevents { rank: 0 kernel { nme: \"k\" } }\n");
  EXPECT_NE(syntax.find("in.txtpb:4: column"), std::string::npos) << syntax;
  EXPECT_NE(syntax.find("nme"), std::string::npos) << syntax;

  const std::string empty =
      pack_error(dir_, "events { rank: 0 kernel { name: \"k\" } }\n\nevents { rank: 1 }\n");
  EXPECT_NE(empty.find("in.txtpb:3: record 1: field 'events[1]': the event has no payload"),
            std::string::npos)
      << empty;

  const std::string backwards = pack_error(dir_, "events { memcpy { start_ns: 10 end_ns: 5 } }\n");
  EXPECT_NE(backwards.find("in.txtpb:1: record 0: field 'events[0].memcpy.end_ns': end_ns 5 is "
                           "before start_ns 10"),
            std::string::npos)
      << backwards;

  // An empty file (or only comments) is no trace: issue 33 found it packed
  // without a word.
  for (const char* nothing : {"", "# nothing but a comment\n", "\n  \n"}) {
    const std::string e = pack_error(dir_, nothing);
    EXPECT_NE(e.find("in.txtpb: the text trace is empty: no metadata and no events"),
              std::string::npos)
        << e;
  }
  // A collective's op outside the enum (proto3 keeps the number).
  const std::string op99 = pack_error(
      dir_, "events { rank: 0 collective { op: 99 nranks: 2 start_ns: 1 end_ns: 2 } }\n");
  EXPECT_NE(op99.find("in.txtpb:1: record 0: field 'events[0].collective.op': op 99 is not an "
                      "operation of the format"),
            std::string::npos)
      << op99;
  // The same collective record twice (traces/collective_records.h).
  const std::string twice = pack_error(
      dir_,
      "events { rank: 0 collective { op: ALL_REDUCE communicator_id: 5 sequence_number: 3 "
      "nranks: 2 size_bytes: 64 start_ns: 1 end_ns: 2 } }\n"
      "events { rank: 0 collective { op: ALL_REDUCE communicator_id: 5 sequence_number: 3 "
      "nranks: 2 size_bytes: 64 start_ns: 1 end_ns: 2 } }\n");
  EXPECT_NE(twice.find("in.txtpb:2: record 1: field 'events[1].collective.sequence_number': "
                       "ALL_REDUCE sequence 3 of communicator 0x5, rank 0, is recorded twice "
                       "(first at record 0)"),
            std::string::npos)
      << twice;
  EXPECT_THROW(pack_text_trace(dir_ / "missing.txtpb", dir_ / "out.ssgdt"), InputError);
}

// The `ssgd` binary, when it has been built.
int run_cli(const std::string& args, const fs::path& out, const fs::path& err) {
  const std::string command =
      std::string(SSGD_CLI) + " " + args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(TraceDumpTest, CommandLine) {
  if (!fs::exists(SSGD_CLI)) GTEST_SKIP() << "the ssgd binary is not built: " << SSGD_CLI;
  const auto out = dir_ / "out.txt";
  const auto err = dir_ / "err.txt";
  const auto trace = dir_ / "small.ssgdt";
  ASSERT_EQ(run_cli("pack " + (kData / "small.txtpb").string() + " -o " + trace.string() +
                        " --events-per-chunk 4",
                    out, err),
            0)
      << read_file_bytes(err);
  ASSERT_EQ(run_cli("info --dump " + trace.string(), out, err), 0) << read_file_bytes(err);
  EXPECT_EQ(read_file_bytes(out), read_file_bytes(kData / "small.dump.txt"));
  ASSERT_EQ(run_cli("info " + trace.string(), out, err), 0) << read_file_bytes(err);
  EXPECT_NE(read_file_bytes(out).find("events           13"), std::string::npos) << read_file_bytes(out);

  // Cut short: what was read, a warning on stderr, exit 0.
  const std::string bytes = read_file_bytes(trace);
  write_file_bytes(dir_ / "cut.ssgdt", bytes.substr(0, bytes.size() - 30));
  EXPECT_EQ(run_cli("info " + (dir_ / "cut.ssgdt").string(), out, err), 0);
  EXPECT_NE(read_file_bytes(err).find("cut short"), std::string::npos) << read_file_bytes(err);

  // Wrong magic: a message naming the file on stderr, exit 2, nothing written.
  EXPECT_EQ(run_cli("info " + (kData / "small.txtpb").string(), out, err), 2);
  EXPECT_NE(read_file_bytes(err).find("small.txtpb: wrong magic"), std::string::npos) << read_file_bytes(err);
  write_file_bytes(dir_ / "bad.txtpb", "events { kernel { start_ns: 9 end_ns: 1 } }\n");
  EXPECT_EQ(
      run_cli("pack " + (dir_ / "bad.txtpb").string() + " -o " + (dir_ / "bad.ssgdt").string(), out,
              err),
      2);
  EXPECT_FALSE(fs::exists(dir_ / "bad.ssgdt"));
  // out.txt, err.txt, small.ssgdt, cut.ssgdt, bad.txtpb: no temporary left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 5);
}

}  // namespace
}  // namespace ssgd::trace
