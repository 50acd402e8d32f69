// The tracer's writer (tracer/core/trace_sink.h) end to end with the mock
// activity source: every kind reaches the file, exact drop and invalid
// counts in the footer, concurrent producers, byte-identical output, the
// clock domain in the header, periodic flushes, and a process killed with
// SIGKILL leaving a file that TraceReader reads up to its last flush.
#include "tracer/core/process_session.h"
#include "tracer/core/trace_sink.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "tests/tracer/mock_activity_source.h"
#include "traces/trace_reader.h"

namespace ssgd::tracer {
namespace {

namespace fs = std::filesystem;
namespace v1 = trace::v1;

constexpr std::int64_t kStartNs = 5'000'000'000'000;  // the event clock at open()

class TraceSinkTest : public ssgd::testing::TempDirTest {
 protected:
  TraceSinkOptions options(std::int32_t rank = 0) {
    TraceSinkOptions o;
    o.out_dir = dir_ / "out";
    o.rank = rank;
    o.world_size = 4;
    o.metadata.set_tool("trace_sink_test");
    o.metadata.set_provenance("synthetic");
    HostClockSample clock;
    clock.kind = v1::ClockDomain::MONOTONIC_RAW;
    clock.realtime_ns = 1'700'000'000'000'000'000;
    clock.event_clock_ns = kStartNs;
    clock.uncertainty_ns = 40;
    clock.hostname = "node7";
    clock.process_id = 4242;
    o.clock_sample = clock;
    o.flush_interval = std::chrono::milliseconds(0);
    o.log = [this](std::string_view m) { log_.emplace_back(m); };
    return o;
  }

  static std::unique_ptr<TraceSink> open(TraceSinkOptions o) {
    std::string error;
    auto sink = TraceSink::open(std::move(o), &error);
    EXPECT_TRUE(sink) << error;
    return sink;
  }

  struct ReadBack {
    v1::CaptureMetadata metadata;
    std::vector<v1::Event> events;
    std::optional<v1::Footer> footer;
    bool truncated = false;
  };
  static ReadBack read(const fs::path& path) {
    ReadBack r;
    trace::TraceReader reader = trace::TraceReader::open(path);
    r.metadata = reader.metadata();
    v1::Event e;
    while (reader.next(e)) r.events.push_back(e);
    if (reader.footer() != nullptr) r.footer = *reader.footer();
    r.truncated = reader.truncated();
    return r;
  }

  std::vector<std::string> log_;
};

// The writer thread blocks the process-directed fatal signals, so that a
// SIGTERM sent to the process never lands on it (before it has recorded its
// tid it would wait, in the signal handler, for its own flush: seen as a flaky
// FatalSignalDeathTest/Sigterm under load). The opening thread's mask is
// left as it was.
TEST_F(TraceSinkTest, TheWriterThreadTakesNoProcessDirectedSignal) {
  auto sigterm_blocked = [](const std::string& status_path) {
    std::ifstream in(status_path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("SigBlk:", 0) == 0) {
        const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
        return (mask >> (SIGTERM - 1)) & 1ULL;
      }
    }
    return 0ULL;
  };
  const auto sink = open(options());
  const std::string self = "/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/status";
  EXPECT_EQ(sigterm_blocked(self), 0u);
  int blocking = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    blocking += static_cast<int>(sigterm_blocked(task.path().string() + "/status"));
  }
  EXPECT_EQ(blocking, 1);  // the writer
  sink->close();
}

TEST_F(TraceSinkTest, EveryKindIsWrittenAndCountedInTheFooter) {
  auto sink = open(options(2));
  const auto run = testing::run_mock_source(*sink, 1, 10 * kActivityKindCount, kStartNs);
  EXPECT_EQ(run.stored, 10 * kActivityKindCount);
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
  EXPECT_FALSE(fs::exists(sink->temporary_path()));

  const ReadBack r = read(dir_ / "out" / "rank-2.ssgdt");
  ASSERT_TRUE(r.footer);
  ASSERT_EQ(r.events.size(), 10 * kActivityKindCount);
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    EXPECT_EQ(testing::synthetic_id(r.events[i]), i);  // one producer: in order
    EXPECT_EQ(r.events[i].rank(), 2);
  }
  const v1::Footer& f = *r.footer;
  for (std::uint64_t n : {f.kernel_count(), f.memcpy_count(), f.memset_count(),
                          f.api_call_count(), f.synchronization_count(), f.cuda_event_count(),
                          f.external_correlation_count(), f.device_count(),
                          f.collective_count(), f.marker_count(), f.link_count()}) {
    EXPECT_EQ(n, 10u);
  }
  EXPECT_EQ(f.dropped_records(), 0u);
  EXPECT_EQ(f.invalid_timestamps(), 0u);
  EXPECT_TRUE(log_.empty());
}

TEST_F(TraceSinkTest, InvalidTimestampsAreDroppedAndCountedExactly) {
  auto sink = open(options());
  RecordProducer p = sink->producer();
  auto kernel = [](std::uint64_t id, std::int64_t start, std::int64_t end) {
    KernelActivity k;
    k.correlation_id = id;
    k.start_ns = start;
    k.end_ns = end;
    return ActivityRecord{k, "k"};
  };
  const std::int64_t t = kStartNs + 1000;
  p.append(kernel(1, t, t + 10));                             // valid
  p.append(kernel(2, 0, t));                                  // zero start
  p.append(kernel(3, t, 0));                                  // zero end
  p.append(kernel(4, t + 10, t));                             // end before start
  p.append(kernel(5, kStartNs - 61'000'000'000, t));          // long before open()
  p.append(kernel(6, t, kStartNs + 31LL * 86400'000'000'000));  // far after
  p.append(kernel(7, kStartNs - 59'000'000'000, t));          // within the minute before: valid
  CudaEventActivity ev;
  ev.correlation_id = 8;
  p.append(ActivityRecord{ev, {}});  // no timestamp: zero
  ExternalCorrelationActivity x;
  x.correlation_id = 9;
  p.append(ActivityRecord{x, {}});  // has no time: kept
  p.hand_over();
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
  EXPECT_EQ(sink->counters().invalid_timestamps, 6u);
  EXPECT_EQ(sink->counters().written, 3u);

  const ReadBack r = read(sink->path());
  ASSERT_TRUE(r.footer);
  EXPECT_EQ(r.footer->invalid_timestamps(), 6u);
  EXPECT_EQ(r.footer->dropped_records(), 0u);
  std::vector<std::uint64_t> ids;
  for (const auto& e : r.events) ids.push_back(testing::synthetic_id(e));
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 7, 9}));
}

// A record the trace's rules refuse (traces/event_rules.h) is dropped and
// counted; the records after it are still written (issue 15).
TEST_F(TraceSinkTest, ARecordThatBreaksTheTracesRulesIsDroppedAndCounted) {
  auto sink = open(options());
  RecordProducer p = sink->producer();
  const std::int64_t t = kStartNs + 1000;
  KernelActivity k;
  k.start_ns = t;
  k.end_ns = t + 10;
  k.correlation_id = 1;
  p.append(ActivityRecord{k, "good"});
  k.correlation_id = 2;
  p.append(ActivityRecord{k, std::string_view("bad\xFF", 4)});
  k.correlation_id = 3;
  p.append(ActivityRecord{k, "good"});
  p.hand_over();
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
  EXPECT_EQ(sink->counters().written, 2u);
  EXPECT_EQ(sink->counters().dropped, 1u);
  const ReadBack r = read(sink->path());
  ASSERT_TRUE(r.footer);
  EXPECT_EQ(r.footer->dropped_records(), 1u);
  std::vector<std::uint64_t> ids;
  for (const auto& e : r.events) ids.push_back(testing::synthetic_id(e));
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 3}));
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("a kernel record breaks the trace's rules"), std::string::npos) << log_[0];
}

TEST_F(TraceSinkTest, DropsReportedByTheSourceAddToTheFooter) {
  TraceSinkOptions o = options();
  o.buffers.buffer_count = 2;
  o.buffers.records_per_buffer = 10;
  o.poll_interval = std::chrono::hours(1);
  auto sink = open(std::move(o));
  const auto run = testing::run_mock_source(*sink, 1, 25, kStartNs);  // 5 dropped by the pool
  ASSERT_EQ(run.dropped, 5u);
  sink->add_dropped(40);  // e.g. what cuptiActivityGetNumDroppedRecords said
  sink->add_dropped(2);
  EXPECT_EQ(sink->counters().dropped, 47u);
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
  const ReadBack r = read(sink->path());
  ASSERT_TRUE(r.footer);
  EXPECT_EQ(r.events.size(), 20u);
  EXPECT_EQ(r.footer->dropped_records(), 47u);
}

TEST_F(TraceSinkTest, BufferOverflowIsCountedExactlyInTheFooter) {
  TraceSinkOptions o = options();
  o.buffers.buffer_count = 3;
  o.buffers.records_per_buffer = 10;
  o.poll_interval = std::chrono::hours(1);  // the writer sleeps until close()
  auto sink = open(std::move(o));
  const auto run = testing::run_mock_source(*sink, 1, 100, kStartNs);
  EXPECT_EQ(run.stored, 30u);
  EXPECT_EQ(run.dropped, 70u);
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
  const ReadBack r = read(sink->path());
  ASSERT_TRUE(r.footer);
  EXPECT_EQ(r.events.size(), 30u);
  EXPECT_EQ(r.footer->dropped_records(), 70u);
  EXPECT_EQ(r.footer->invalid_timestamps(), 0u);
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    EXPECT_EQ(testing::synthetic_id(r.events[i]), i);  // the first 30 made it
  }
}

TEST_F(TraceSinkTest, ConcurrentProducersLoseAndDuplicateNothing) {
  TraceSinkOptions o = options();
  o.buffers.buffer_count = 64;
  o.buffers.records_per_buffer = 512;  // room for every record even if the writer lags
  o.flush_interval = std::chrono::milliseconds(2);
  o.writer.events_per_chunk = 1000;
  auto sink = open(std::move(o));
  constexpr std::uint64_t kTotal = 8 * 3000;
  const auto run = testing::run_mock_source(*sink, 8, kTotal, kStartNs);
  EXPECT_EQ(run.stored, kTotal);
  ASSERT_EQ(sink->close(), SinkStatus::kOk);

  const ReadBack r = read(sink->path());
  ASSERT_TRUE(r.footer);
  EXPECT_EQ(r.footer->dropped_records(), 0u);
  ASSERT_EQ(r.events.size(), kTotal);
  std::vector<std::uint64_t> ids;
  for (const auto& e : r.events) ids.push_back(testing::synthetic_id(e));
  std::sort(ids.begin(), ids.end());
  for (std::uint64_t i = 0; i < kTotal; ++i) ASSERT_EQ(ids[i], i) << "lost or duplicated";
}

TEST_F(TraceSinkTest, TheSameInputGivesByteIdenticalFiles) {
  std::string bytes[2];
  for (int run = 0; run < 2; ++run) {
    TraceSinkOptions o = options();
    o.out_dir = dir_ / ("run" + std::to_string(run));
    o.writer.events_per_chunk = 7;
    auto sink = open(std::move(o));
    testing::run_mock_source(*sink, 1, 95, kStartNs);
    ASSERT_EQ(sink->flush(), SinkStatus::kOk);  // an explicit chunk boundary
    testing::run_mock_source(*sink, 1, 13, kStartNs + 10'000'000);
    ASSERT_EQ(sink->close(), SinkStatus::kOk);
    bytes[run] = ssgd::testing::read_file_bytes(sink->path());
  }
  ASSERT_FALSE(bytes[0].empty());
  EXPECT_EQ(bytes[0], bytes[1]);
}

TEST_F(TraceSinkTest, TheHeaderHoldsRankAndHostClockDomain) {
  auto sink = open(options(3));
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
  const ReadBack r = read(sink->path());
  const v1::CaptureMetadata& m = r.metadata;
  EXPECT_EQ(m.tool(), "trace_sink_test");
  EXPECT_EQ(m.rank(), 3);
  EXPECT_EQ(m.world_size(), 4);
  EXPECT_EQ(m.process_id(), 4242);
  EXPECT_EQ(m.capture_start_ns(), 1'700'000'000'000'000'000);
  ASSERT_EQ(m.hosts_size(), 1);
  EXPECT_EQ(m.hosts(0).hostname(), "node7");
  EXPECT_EQ(m.hosts(0).clock().kind(), v1::ClockDomain::MONOTONIC_RAW);
  EXPECT_EQ(m.hosts(0).clock().realtime_offset_ns(), 1'700'000'000'000'000'000 - kStartNs);
  EXPECT_EQ(m.hosts(0).clock().realtime_offset_uncertainty_ns(), 40);
  EXPECT_TRUE(r.events.empty());
}

TEST_F(TraceSinkTest, TheRealClockSampleRelatesRealtimeToTheEventClock) {
  const HostClockSample s = sample_host_clock(v1::ClockDomain::MONOTONIC);
  EXPECT_EQ(s.process_id, static_cast<std::int64_t>(::getpid()));
  EXPECT_FALSE(s.hostname.empty());
  EXPECT_GE(s.uncertainty_ns, 0);
  EXPECT_LT(s.uncertainty_ns, 100'000'000);
  // realtime = monotonic + offset, now as at the sample (within a second).
  const std::int64_t offset = s.realtime_ns - s.event_clock_ns;
  const std::int64_t predicted = read_clock_ns(v1::ClockDomain::MONOTONIC) + offset;
  EXPECT_LT(std::abs(predicted - read_clock_ns(v1::ClockDomain::REALTIME)), 1'000'000'000);
}

TEST_F(TraceSinkTest, PeriodicFlushesReachTheFileWithoutFlushOrClose) {
  TraceSinkOptions o = options();
  o.flush_interval = std::chrono::milliseconds(10);
  o.poll_interval = std::chrono::milliseconds(1);
  auto sink = open(std::move(o));
  RecordProducer p = sink->producer();  // kept: its partly filled buffer is taken by the flush
  std::string name;
  for (std::uint64_t id = 0; id < 25; ++id) p.append(testing::synthetic_record(id, kStartNs, name));
  std::size_t seen = 0;
  for (int i = 0; i < 400 && seen < 25; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    seen = read(sink->temporary_path()).events.size();
  }
  EXPECT_EQ(seen, 25u);
  EXPECT_FALSE(fs::exists(sink->path()));  // still under its temporary name
  ASSERT_EQ(sink->close(), SinkStatus::kOk);
}

TEST_F(TraceSinkTest, AProcessKilledAfterAFlushLeavesAReadablePrefix) {
  const fs::path out = dir_ / "out";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child: write, flush, write more, die without closing.
    TraceSinkOptions o = options(1);
    o.log = nullptr;
    std::string error;
    auto sink = TraceSink::open(std::move(o), &error);
    if (!sink) ::_exit(10);
    // Few records: a chunk smaller than the stream's buffer, which only
    // reaches the file because flush() hands it to the OS.
    testing::run_mock_source(*sink, 2, 20, kStartNs);
    if (sink->flush() != SinkStatus::kOk) ::_exit(11);
    testing::run_mock_source(*sink, 2, 10, kStartNs + 1'000'000);  // never flushed
    ::raise(SIGKILL);
    ::_exit(12);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
  ASSERT_EQ(WTERMSIG(status), SIGKILL);

  EXPECT_FALSE(fs::exists(out / "rank-1.ssgdt"));  // never renamed into place
  std::vector<fs::path> partial;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().filename().string().starts_with("rank-1.ssgdt.tmp." +
                                                     std::to_string(child) + ".")) {
      partial.push_back(entry.path());
    }
  }
  ASSERT_EQ(partial.size(), 1u);
  const ReadBack r = read(partial[0]);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(r.footer);
  EXPECT_EQ(r.metadata.rank(), 1);
  ASSERT_EQ(r.events.size(), 20u);  // exactly the flushed records
  std::vector<std::uint64_t> ids;
  for (const auto& e : r.events) ids.push_back(testing::synthetic_id(e));
  std::sort(ids.begin(), ids.end());
  for (std::uint64_t i = 0; i < 20; ++i) EXPECT_EQ(ids[i], i);
}

TEST_F(TraceSinkTest, EntryPointsAfterCloseReturnClosedAndNothingGoesToStdout) {
  ::testing::internal::CaptureStdout();
  auto sink = open(options());
  testing::run_mock_source(*sink, 1, 30, kStartNs);
  EXPECT_EQ(sink->flush(), SinkStatus::kOk);
  EXPECT_EQ(sink->close(), SinkStatus::kOk);
  EXPECT_EQ(sink->close(), SinkStatus::kClosed);
  EXPECT_EQ(sink->flush(), SinkStatus::kClosed);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

TEST_F(TraceSinkTest, AnUnwritableFolderFailsOpenWithAMessageAndNoThrow) {
  ssgd::testing::write_file_bytes(dir_ / "file", "x");
  TraceSinkOptions o = options();
  o.out_dir = dir_ / "file" / "sub";  // under a regular file
  std::string error;
  std::unique_ptr<TraceSink> sink;
  EXPECT_NO_THROW(sink = TraceSink::open(std::move(o), &error));
  EXPECT_FALSE(sink);
  EXPECT_NE(error.find("cannot open the trace in"), std::string::npos) << error;
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0], error);
}

// The process session opens its file from the environment on first use and
// closes it (footer, rename) at exit, with no call from the program.
TEST_F(TraceSinkTest, TheProcessSessionOpensFromTheEnvironmentAndClosesAtExit) {
  const fs::path out = dir_ / "session";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("SSGD_TRACER_OUT", out.c_str(), 1);
    ::setenv("SSGD_TRACER_FLUSH_MS", "0", 1);
    ::setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    ::unsetenv("RANK");
    ProcessSession& session = ProcessSession::get();
    if (!session.is_open() || session.rank() != 5) ::_exit(20);
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC_RAW, &now);
    const std::int64_t t = std::int64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
    KernelActivity k;
    k.start_ns = t;
    k.end_ns = t + 1000;
    k.correlation_id = 42;
    if (session.append(ActivityRecord{k, "gemm"}) != AppendStatus::kStored) ::_exit(21);
    std::exit(0);  // atexit closes the session
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const ReadBack r = read(out / "rank-5.ssgdt");
  EXPECT_FALSE(r.truncated);
  ASSERT_TRUE(r.footer);
  EXPECT_EQ(r.metadata.rank(), 5);
  ASSERT_EQ(r.events.size(), 1u);
}

}  // namespace
}  // namespace ssgd::tracer
