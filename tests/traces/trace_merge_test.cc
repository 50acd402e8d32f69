// `ssgd merge`'s library part (traces/merge/trace_merge.h) on synthetic per-rank
// files: ranks on one host are not shifted, a calibrated second host is
// shifted exactly (with drift), an uncalibrated one is refused or, with
// force, merged uncorrected and said so; bad folders and files are errors
// naming the file and field, and leave no output.
#include "traces/merge/trace_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "tests/support/rank_files.h"
#include "tests/support/test_files.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {
namespace {

namespace fs = std::filesystem;
using ssgd::testing::calibration;
using ssgd::testing::kernel_event;
using ssgd::testing::RankFileSpec;
using ssgd::testing::write_rank_file;

struct Read {
  v1::CaptureMetadata metadata;
  std::vector<v1::Event> events;
};

Read read_all(const fs::path& path) {
  TraceReader reader = TraceReader::open(path);
  Read r{reader.metadata(), {}};
  v1::Event e;
  while (reader.next(e)) r.events.push_back(e);
  EXPECT_FALSE(reader.truncated());
  return r;
}

class TraceMergeTest : public ssgd::testing::TempDirTest {
 protected:
  fs::path out() const { return dir_ / "merged.ssgdt"; }
  fs::path in() const { return dir_ / "capture"; }
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(in());
  }
  // Runs the merge expecting an InputError; returns its message.
  std::string refused(const MergeOptions& options = {}) {
    try {
      merge_rank_traces(in(), out(), options);
    } catch (const InputError& e) {
      EXPECT_FALSE(fs::exists(out())) << "output left behind";
      return e.what();
    }
    ADD_FAILURE() << "merge accepted";
    return {};
  }
};

TEST_F(TraceMergeTest, RanksOnOneHostAreSortedByTimeAndNotShifted) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(0, 300, 350, "r0b"), kernel_event(0, 200, 250, "r0a")}});
  write_rank_file(in(), {1, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(1, 100, 150, "r1"), kernel_event(1, 200, 210, "r1b")}});
  std::vector<std::string> progress;
  MergeOptions options;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  const MergeResult r = merge_rank_traces(in(), out(), options);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.hosts, 1);
  EXPECT_EQ(r.events, 4u);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(progress.size(), 3u);  // two files read, one write
  const Read m = read_all(out());
  ASSERT_EQ(m.events.size(), 4u);
  const std::vector<std::pair<int, std::string>> want{{1, "r1"}, {0, "r0a"}, {1, "r1b"}, {0, "r0b"}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(m.events[i].rank(), want[i].first) << i;
    EXPECT_EQ(m.events[i].kernel().name(), want[i].second) << i;
  }
  EXPECT_EQ(m.events[0].kernel().start_ns(), 100);
  EXPECT_EQ(m.events[3].kernel().end_ns(), 350);
  EXPECT_EQ(m.metadata.hosts_size(), 1);
  EXPECT_EQ(m.metadata.rank(), 0);
  EXPECT_EQ(m.metadata.world_size(), 2);
  EXPECT_EQ(m.metadata.provenance(), "synthetic; merged by ssgd merge from 2 rank files");
  // The same inputs give the same bytes.
  const std::string first = ssgd::testing::read_file_bytes(out());
  merge_rank_traces(in(), out(), {});
  EXPECT_EQ(ssgd::testing::read_file_bytes(out()), first);
}

v1::Event link_event(std::int32_t rank, std::int32_t src, std::int32_t dst, std::int32_t host = 0) {
  v1::Event e;
  e.set_rank(rank);
  v1::Link* l = e.mutable_link();
  l->set_src_host(host);
  l->set_src_device(src);
  l->set_dst_host(host);
  l->set_dst_device(dst);
  l->set_kind(v1::Link::NVLINK);
  l->set_bandwidth_bytes_per_s(50e9);
  return e;
}

TEST_F(TraceMergeTest, LinksKeepTheirRankAndNameTheirRanksHostInTheMergedList) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(0, 5000, 5100), link_event(0, 0, 1)}});
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW, calibration("a", 0, 5, 0),
                         {link_event(1, 1, -1)}});
  merge_rank_traces(in(), out(), {});
  TraceReader reader = TraceReader::open(out());
  std::vector<v1::Event> events;
  v1::Event e;
  while (reader.next(e)) events.push_back(e);
  ASSERT_EQ(events.size(), 3u);
  ASSERT_TRUE(events[0].has_link());  // no time: first
  EXPECT_EQ(events[0].rank(), 0);
  EXPECT_EQ(events[0].link().src_host(), 0);
  EXPECT_EQ(events[0].link().dst_device(), 1);
  ASSERT_TRUE(events[1].has_link());
  EXPECT_EQ(events[1].rank(), 1);
  EXPECT_EQ(events[1].link().src_host(), 1);  // host "b" is hosts[1] of the merged trace
  EXPECT_EQ(events[1].link().dst_host(), 1);
  EXPECT_EQ(events[1].link().dst_device(), -1);
  ASSERT_NE(reader.footer(), nullptr);
  EXPECT_EQ(reader.footer()->link_count(), 2u);
}

TEST_F(TraceMergeTest, ALinkNamingAnotherHostInARankFileIsRefused) {
  write_rank_file(in(), {0, 1, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {link_event(0, 0, 1, 3)}});
  const std::string message = refused();
  EXPECT_NE(message.find("a rank file names only its own host, 0"), std::string::npos) << message;
  EXPECT_NE(message.find("rank-0.ssgdt"), std::string::npos) << message;
}

TEST_F(TraceMergeTest, ACalibratedSecondHostIsShiftedExactly) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(0, 5000, 5100)}});
  v1::Event marker;
  marker.set_rank(1);
  marker.mutable_marker()->set_name("iteration/0");
  marker.mutable_marker()->set_start_ns(900);
  marker.mutable_marker()->set_end_ns(4000);
  v1::Event external;  // no time: first, unshifted
  external.set_rank(1);
  external.mutable_external_correlation()->set_external_id(7);
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW,
                         calibration("a", 1000, 5, 0),
                         {kernel_event(1, 3000, 3500), marker, external}});
  merge_rank_traces(in(), out(), {});
  const Read m = read_all(out());
  ASSERT_EQ(m.events.size(), 4u);
  EXPECT_TRUE(m.events[0].has_external_correlation());
  EXPECT_EQ(m.events[1].marker().start_ns(), 1900);
  EXPECT_EQ(m.events[1].marker().end_ns(), 5000);
  EXPECT_EQ(m.events[2].kernel().start_ns(), 4000);
  EXPECT_EQ(m.events[2].kernel().end_ns(), 4500);
  EXPECT_EQ(m.events[2].rank(), 1);
  EXPECT_EQ(m.events[3].rank(), 0);
  ASSERT_EQ(m.metadata.hosts_size(), 2);
  EXPECT_EQ(m.metadata.hosts(0).hostname(), "a");
  EXPECT_EQ(m.metadata.hosts(1).hostname(), "b");
  EXPECT_EQ(m.metadata.hosts(1).clock().offset_ns(), 0);
  EXPECT_EQ(m.metadata.hosts(1).clock().offset_uncertainty_ns(), 5);
  EXPECT_EQ(m.metadata.hosts(1).clock().calibration().start().offset_ns(), 1000);
  EXPECT_NE(m.metadata.provenance().find("clocks aligned to host 'a'"), std::string::npos);
}

TEST_F(TraceMergeTest, DriftBetweenStartAndEndCalibrationsIsCorrected) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  auto c = calibration("a", 1000, 3, 0);
  c.mutable_end()->set_offset_ns(2000);
  c.mutable_end()->set_uncertainty_ns(8);
  c.mutable_end()->set_measured_at_ns(1'000'000);
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW, c,
                         {kernel_event(1, 500'000, 500'600)}});
  merge_rank_traces(in(), out(), {});
  const Read m = read_all(out());
  ASSERT_EQ(m.events.size(), 1u);
  EXPECT_EQ(m.events[0].kernel().start_ns(), 501'500);
  EXPECT_EQ(m.events[0].kernel().end_ns(), 502'100);  // the duration is kept
  EXPECT_EQ(m.metadata.hosts(1).clock().offset_uncertainty_ns(), 8);
}

TEST_F(TraceMergeTest, TheFootersCalibrationSupersedesTheHeaders) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  // The header has the start only; the footer adds the end (drift).
  auto full = calibration("a", 1000, 3, 0);
  full.mutable_end()->set_offset_ns(2000);
  full.mutable_end()->set_uncertainty_ns(8);
  full.mutable_end()->set_measured_at_ns(1'000'000);
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW, calibration("a", 1000, 3, 0),
                         {kernel_event(1, 500'000, 500'600)}, full});
  merge_rank_traces(in(), out(), {});
  const Read m = read_all(out());
  ASSERT_EQ(m.events.size(), 1u);
  EXPECT_EQ(m.events[0].kernel().start_ns(), 501'500);  // 1500 at mid-capture, not 1000
  EXPECT_EQ(m.metadata.hosts(1).clock().calibration().end().offset_ns(), 2000);
}

TEST_F(TraceMergeTest, AReferenceThatRanNoRankShiftsEveryHost) {
  // The clock server ran on a login node: every host is calibrated against
  // it; two ranks on host 'a' move together.
  write_rank_file(in(), {0, 3, "a", v1::ClockDomain::MONOTONIC_RAW,
                         calibration("login", 700, 4, 0), {kernel_event(0, 100, 200)}});
  write_rank_file(in(), {1, 3, "a", v1::ClockDomain::MONOTONIC_RAW,
                         calibration("login", 700, 4, 0), {kernel_event(1, 150, 250)}});
  write_rank_file(in(), {2, 3, "b", v1::ClockDomain::MONOTONIC_RAW,
                         calibration("login", -50, 6, 0), {kernel_event(2, 900, 950)}});
  const MergeResult r = merge_rank_traces(in(), out(), {});
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(r.hosts, 2);
  const Read m = read_all(out());
  ASSERT_EQ(m.events.size(), 3u);
  EXPECT_EQ(m.events[0].kernel().start_ns(), 800);
  EXPECT_EQ(m.events[1].kernel().start_ns(), 850);
  EXPECT_EQ(m.events[2].kernel().start_ns(), 850);
  EXPECT_EQ(m.events[2].rank(), 2);
  ASSERT_EQ(m.metadata.hosts_size(), 2);
  EXPECT_EQ(m.metadata.hosts(0).clock().calibration().reference_hostname(), "login");
  EXPECT_EQ(m.metadata.hosts(0).clock().offset_uncertainty_ns(), 4);
  EXPECT_NE(m.metadata.provenance().find(
                "clocks aligned to host 'login' (the clock server's host, which ran no rank)"),
            std::string::npos)
      << m.metadata.provenance();
}

TEST_F(TraceMergeTest, AHostCalibratedAgainstAnotherReferenceIsRefused) {
  // Each node's `ssgd trace` ran its own clock server.
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, calibration("a", 3, 2, 0),
                         {kernel_event(0, 100, 200)}});
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW, calibration("b", -2, 2, 0),
                         {kernel_event(1, 100, 200)}});
  const std::string why = refused();
  for (const char* part :
       {"against the reference host 'a' (MONOTONIC_RAW) (rank-0.ssgdt)",
        "host 'b' (MONOTONIC_RAW) (rank-1.ssgdt), calibrated against 'b' instead",
        "--clock-server HOST:PORT", "--force"}) {
    EXPECT_NE(why.find(part), std::string::npos) << part << " not in: " << why;
  }
  // The reference host itself is never shifted by its own (loopback) calibration.
  fs::remove(in() / "rank-1.ssgdt");
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW, calibration("a", 40, 2, 0),
                         {kernel_event(1, 100, 200)}});
  merge_rank_traces(in(), out(), {});
  const Read m = read_all(out());
  EXPECT_EQ(m.events[0].kernel().start_ns(), 100);
  EXPECT_EQ(m.events[0].rank(), 0);
  EXPECT_EQ(m.events[1].kernel().start_ns(), 140);
}

TEST_F(TraceMergeTest, AReferenceRankHostThatIsNotTheFirstIsListedFirst) {
  // Rank 0's host names host 'b' (which runs rank 1) as its reference.
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, calibration("b", 500, 2, 0),
                         {kernel_event(0, 100, 200)}});
  write_rank_file(in(), {1, 2, "b", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(1, 100, 200)}});
  merge_rank_traces(in(), out(), {});
  const Read m = read_all(out());
  EXPECT_EQ(m.metadata.hosts(0).hostname(), "b");
  EXPECT_FALSE(m.metadata.hosts(0).clock().has_calibration());
  EXPECT_EQ(m.events[0].rank(), 1);
  EXPECT_EQ(m.events[1].kernel().start_ns(), 600);
}

TEST_F(TraceMergeTest, HostsWithoutCalibrationAreRefusedUnlessForced) {
  write_rank_file(in(), {0, 3, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(0, 10, 20)}});
  write_rank_file(in(), {1, 3, "b", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(1, 5, 30)}});
  // Calibrated, but against another host than the reference.
  write_rank_file(in(), {2, 3, "c", v1::ClockDomain::MONOTONIC_RAW,
                         calibration("b", 100, 1, 0), {kernel_event(2, 1, 2)}});
  const std::string why = refused();
  for (const char* part : {"'a'", "rank-0.ssgdt", "host 'b' (MONOTONIC_RAW) (rank-1.ssgdt)",
                           "host 'c' (MONOTONIC_RAW) (rank-2.ssgdt)", "--force",
                           "hosts[0].clock.calibration"}) {
    EXPECT_NE(why.find(part), std::string::npos) << part << " not in: " << why;
  }
  MergeOptions force;
  force.force = true;
  const MergeResult r = merge_rank_traces(in(), out(), force);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("clocks NOT aligned"), std::string::npos);
  const Read m = read_all(out());
  EXPECT_EQ(m.events[0].kernel().start_ns(), 1);  // uncorrected
  EXPECT_EQ(m.events[1].kernel().start_ns(), 5);
  EXPECT_NE(m.metadata.provenance().find("clocks NOT aligned"), std::string::npos);
  EXPECT_EQ(m.metadata.hosts_size(), 3);
}

TEST_F(TraceMergeTest, SameHostNameWithAnotherClockKindNeedsACalibration) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  write_rank_file(in(), {1, 2, "a", v1::ClockDomain::REALTIME, std::nullopt, {}});
  EXPECT_NE(refused().find("host 'a' (REALTIME)"), std::string::npos);
}

TEST_F(TraceMergeTest, BadFoldersAndFilesAreErrorsNamingFileAndField) {
  EXPECT_NE(refused().find("no rank-<r>.ssgdt files"), std::string::npos);
  ssgd::testing::write_file_bytes(in() / "rank-0.ssgdt.tmp.77.1", "x");
  EXPECT_NE(refused().find("1 temporary rank-*.ssgdt.tmp.* files"), std::string::npos);
  fs::remove(in() / "rank-0.ssgdt.tmp.77.1");

  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  write_rank_file(in(), {1, 4, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  std::string why = refused();
  EXPECT_NE(why.find("rank-1.ssgdt: field 'world_size': world size 4, but rank-0.ssgdt says 2"),
            std::string::npos)
      << why;

  write_rank_file(in(), {1, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  fs::copy_file(in() / "rank-1.ssgdt", in() / "rank-01.ssgdt");
  why = refused();
  EXPECT_NE(why.find("field 'rank': rank 1 again"), std::string::npos) << why;
  fs::remove(in() / "rank-01.ssgdt");

  fs::rename(in() / "rank-1.ssgdt", in() / "rank-5.ssgdt");
  why = refused();
  EXPECT_NE(why.find("rank-5.ssgdt: field 'rank': the header says rank 1"), std::string::npos)
      << why;
  fs::remove(in() / "rank-5.ssgdt");

  why = refused();  // rank 1 of 2 missing
  EXPECT_NE(why.find("ranks 1 of world size 2 have no rank file"), std::string::npos) << why;
  MergeOptions force;
  force.force = true;
  EXPECT_EQ(merge_rank_traces(in(), out(), force).notes.size(), 1u);
  fs::remove(out());

  write_rank_file(in(), {1, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(0, 1, 2)}});
  why = refused();
  EXPECT_NE(why.find("rank-1.ssgdt: record 0: field 'rank': event of rank 0"), std::string::npos)
      << why;
}

// A file named like a rank file whose rank is not one is an error, not
// skipped; a world size no file states is the highest rank + 1 (issue 15).
TEST_F(TraceMergeTest, OddRankFileNamesAreErrorsAndAnUnknownWorldIsCounted) {
  write_rank_file(in(), {0, 0, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  write_rank_file(in(), {1, 0, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  for (const char* odd : {"rank--1.ssgdt", "rank-99999999999999999999.ssgdt", "rank-.ssgdt",
                          "rank-16777216.ssgdt", "rank-1x.ssgdt"}) {
    ssgd::testing::write_file_bytes(in() / odd, "x");
    const std::string why = refused();
    EXPECT_NE(why.find(std::string(odd) + ": field 'rank': the file name's rank"),
              std::string::npos)
        << why;
    fs::remove(in() / odd);
  }
  const MergeResult result = merge_rank_traces(in(), out(), {});
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_NE(result.notes[0].find("taken as 2 (the highest rank + 1)"), std::string::npos);
  EXPECT_EQ(read_all(out()).metadata.world_size(), 2);
}

TEST_F(TraceMergeTest, AFileCutShortIsRefusedOrItsPrefixMergedWithForce) {
  write_rank_file(in(), {0, 2, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                         {kernel_event(0, 1, 2)}});
  {
    // A tracer killed after its first flush: header and one chunk of two
    // events, then the start of a chunk that never ended.
    v1::CaptureMetadata m;
    m.set_rank(1);
    m.set_world_size(2);
    m.add_hosts()->set_hostname("a");
    m.mutable_hosts(0)->mutable_clock()->set_kind(v1::ClockDomain::MONOTONIC_RAW);
    TraceWriter writer(dir_ / "crashed.ssgdt", m);
    writer.append(kernel_event(1, 3, 4));
    writer.append(kernel_event(1, 5, 6));
    writer.flush();
    std::string bytes = ssgd::testing::read_file_bytes(writer.temporary_path());
    bytes += "CHNK\x10";
    ssgd::testing::write_file_bytes(in() / "rank-1.ssgdt", bytes);
  }  // the writer, never closed, removes its temporary file
  const std::string why = refused();
  EXPECT_NE(why.find("rank-1.ssgdt"), std::string::npos) << why;
  EXPECT_NE(why.find("cut short"), std::string::npos) << why;
  EXPECT_NE(why.find("--force"), std::string::npos) << why;
  MergeOptions force;
  force.force = true;
  const MergeResult r = merge_rank_traces(in(), out(), force);
  EXPECT_EQ(r.events, 3u);  // rank 0's event and rank 1's first chunk of two
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "rank-1.ssgdt was cut short; its first 2 events were merged");
}

TEST_F(TraceMergeTest, TheOutputMayNotBeAnInput) {
  write_rank_file(in(), {0, 1, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}});
  try {
    merge_rank_traces(in(), in() / "rank-0.ssgdt", {});
    FAIL() << "overwrote an input";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("would overwrite its input rank-0.ssgdt"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace ssgd::trace
