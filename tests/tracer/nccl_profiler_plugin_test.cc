// The NCCL profiler plugin (tracer/nccl) driven through its exported
// ncclProfiler_v5 and ncclProfiler_v4 tables with synthetic descriptors, in
// the order NCCL 2.28 calls them: the exact CollectiveActivity written, the
// external correlation ids pushed and popped around kernel launches, pool
// exhaustion, and descriptors and handles that are garbage.
#include "tracer/nccl/nccl_profiler_plugin.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "tests/support/test_files.h"
#include "tracer/core/process_session.h"
#include "traces/trace_reader.h"

namespace ssgd::tracer {
namespace {

namespace abi = nccl_abi;

// What the hooks saw: function pointers cannot carry state, so it is global
// and reset by the fixture.
std::vector<CollectiveActivity> g_records;
std::vector<std::string> g_calls;
std::int64_t g_now = 0;
bool g_refuse = false;

AppendStatus capture(const ActivityRecord& record) noexcept {
  if (const auto* c = std::get_if<CollectiveActivity>(&record.payload)) g_records.push_back(*c);
  return g_refuse ? AppendStatus::kDropped : AppendStatus::kStored;
}
std::int64_t fake_now() noexcept { return g_now; }
int push(int kind, std::uint64_t id) {
  g_calls.push_back("push " + std::to_string(kind) + " " + std::to_string(id));
  return 0;
}
int pop(int kind, std::uint64_t* last) {
  g_calls.push_back("pop " + std::to_string(kind));
  *last = 0;
  return 0;
}

class NcclPluginTest : public ::testing::Test {
 protected:
  void reset(std::size_t slots = CollectiveTracker::kDefaultSlots, bool correlation = true) {
    g_records.clear();
    g_calls.clear();
    g_now = 0;
    g_refuse = false;
    PluginHooks hooks;
    hooks.append = capture;
    hooks.now_ns = fake_now;
    if (correlation) hooks.correlation = {push, pop};
    reset_nccl_plugin_for_testing(hooks, slots);
  }
  void SetUp() override { reset(); }

  void* init_v5(std::uint64_t comm, int nranks, int rank) {
    void* ctx = nullptr;
    int mask = -1;
    EXPECT_EQ(ncclProfiler_v5.init(&ctx, comm, &mask, "c", 1, nranks, rank, nullptr),
              abi::kNcclSuccess);
    EXPECT_EQ(mask, kNcclV5ActivationMask);
    EXPECT_NE(ctx, nullptr);
    return ctx;
  }
  void* start5(void* ctx, abi::EventDescrV5 d) {
    void* h = reinterpret_cast<void*>(0x1);  // must be overwritten
    EXPECT_EQ(ncclProfiler_v5.start_event(ctx, &h, &d), abi::kNcclSuccess);
    return h;
  }
  static abi::EventDescrV5 descr(std::uint64_t type, void* parent, int rank = 0) {
    abi::EventDescrV5 d{};
    d.type = type;
    d.parent_obj = parent;
    d.rank = rank;
    return d;
  }
  static abi::EventDescrV5 channel(void* task, std::uint8_t id) {
    abi::EventDescrV5 d = descr(abi::kProfileKernelCh, task);
    d.kernel_ch.channel_id = id;
    d.kernel_ch.gpu_timer_start = 123;
    return d;
  }
  static void stop(void* h) { EXPECT_EQ(ncclProfiler_v5.stop_event(h), abi::kNcclSuccess); }
  static void channel_stop(void* h) {
    abi::EventStateArgs args{};
    args.kernel_ch.gpu_timer = 456;
    EXPECT_EQ(ncclProfiler_v5.record_event_state(h, abi::kKernelChStop, &args), abi::kNcclSuccess);
  }
};

TEST_F(NcclPluginTest, V5AllReduceIsRecordedExactlyAndJoinedByItsGroupId) {
  void* ctx = init_v5(0xC0FFEE, 8, 3);
  // ncclAllReduce: GroupApi, CollApi, the kernel launch, then NCCL's host
  // task (Coll), after the API events have stopped.
  g_now = 100;
  void* group = start5(ctx, descr(abi::kProfileGroupApi, nullptr, 3));
  auto api_d = descr(abi::kProfileCollApi, group, 3);
  api_d.coll_api.func = "AllReduce";
  void* api = start5(ctx, api_d);
  stop(api);
  void* launch = start5(ctx, descr(abi::kProfileKernelLaunch, group, 3));
  EXPECT_EQ(g_calls, (std::vector<std::string>{"push 5 1"}));
  stop(launch);
  stop(group);
  EXPECT_EQ(g_calls, (std::vector<std::string>{"push 5 1", "pop 5"}));

  g_now = 1000;
  auto coll = descr(abi::kProfileColl, api, 3);
  coll.coll.seq_number = 7;
  coll.coll.func = "AllReduce";
  coll.coll.count = 1024;
  coll.coll.datatype = "ncclFloat32";
  coll.coll.n_channels = 2;
  coll.coll.algo = "RING";
  coll.coll.proto = "LL128";
  void* task = start5(ctx, coll);
  ASSERT_NE(task, nullptr);
  g_now = 1100;
  stop(task);
  EXPECT_TRUE(g_records.empty()) << "written before its channels ended";

  g_now = 2000;
  void* ch0 = start5(ctx, channel(task, 0));
  void* ch3 = start5(ctx, channel(task, 3));
  g_now = 5000;
  channel_stop(ch0);
  stop(ch0);
  EXPECT_TRUE(g_records.empty()) << "written with one of two channels open";
  g_now = 5200;
  channel_stop(ch3);
  g_now = 9000;  // the stop comes later than the channel's end
  stop(ch3);

  ASSERT_EQ(g_records.size(), 1u);
  const CollectiveActivity& a = g_records[0];
  EXPECT_EQ(a.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(a.communicator_id, 0xC0FFEEu);
  EXPECT_EQ(a.rank, 3);
  EXPECT_EQ(a.nranks, 8);
  EXPECT_EQ(a.count, 1024);
  EXPECT_EQ(a.size_bytes, 4096);
  EXPECT_EQ(a.datatype.view(), "float32");
  EXPECT_EQ(a.sequence_number, 7u);
  EXPECT_EQ(a.algorithm.view(), "RING");
  EXPECT_EQ(a.protocol.view(), "LL128");
  EXPECT_EQ(a.channels, 2);
  EXPECT_EQ(a.start_ns, 1000);
  EXPECT_EQ(a.end_ns, 5200);
  EXPECT_EQ(a.correlation_id, 1u);  // the id pushed around the launch
  EXPECT_EQ(ncclProfiler_v5.finalize(ctx), abi::kNcclSuccess);
  EXPECT_EQ(g_records.size(), 1u);
  const TrackerCounters c = nccl_plugin_tracker()->counters();
  EXPECT_EQ(c.records_written, 1u);
  EXPECT_EQ(c.ids_pushed, 1u);
  EXPECT_EQ(c.events_dropped + c.orphan_children + c.ignored_events + c.incomplete_flushed, 0u);
}

TEST_F(NcclPluginTest, V5GroupWithTwoLaunchesAndASendPushesOneIdPerGroupInOrder) {
  void* ctx = init_v5(42, 2, 0);
  void* g1 = start5(ctx, descr(abi::kProfileGroupApi, nullptr));
  auto send_api = descr(abi::kProfileP2pApi, g1);
  void* api = start5(ctx, send_api);
  stop(api);
  stop(start5(ctx, descr(abi::kProfileKernelLaunch, g1)));
  stop(start5(ctx, descr(abi::kProfileKernelLaunch, g1)));
  stop(g1);
  void* g2 = start5(ctx, descr(abi::kProfileGroupApi, nullptr));
  stop(start5(ctx, descr(abi::kProfileKernelLaunch, g2)));
  stop(g2);
  EXPECT_EQ(g_calls, (std::vector<std::string>{"push 5 1", "pop 5", "push 5 1", "pop 5",
                                                "push 5 2", "pop 5"}));

  g_now = 10;
  auto p2p = descr(abi::kProfileP2p, api);
  p2p.p2p.func = "Send";
  p2p.p2p.count = 3;
  p2p.p2p.datatype = "ncclBfloat16";
  p2p.p2p.peer = 1;
  p2p.p2p.n_channels = 1;
  void* task = start5(ctx, p2p);
  g_now = 20;
  stop(task);
  void* ch = start5(ctx, channel(task, 5));
  g_now = 30;
  stop(ch);  // no recordEventState: the stop marks the end
  ASSERT_EQ(g_records.size(), 1u);
  EXPECT_EQ(g_records[0].op, CollectiveOp::kSend);
  EXPECT_EQ(g_records[0].peer, 1);
  EXPECT_EQ(g_records[0].size_bytes, 6);
  EXPECT_EQ(g_records[0].datatype.view(), "bfloat16");
  EXPECT_EQ(g_records[0].sequence_number, 0u);
  EXPECT_EQ(g_records[0].channels, 1);
  EXPECT_EQ(g_records[0].start_ns, 10);
  EXPECT_EQ(g_records[0].end_ns, 30);  // the channel stop, as no KernelChStop came
  EXPECT_EQ(g_records[0].correlation_id, 1u);
}

TEST_F(NcclPluginTest, V5WithoutCuptiPushesNothingAndStillRecords) {
  reset(CollectiveTracker::kDefaultSlots, /*correlation=*/false);
  void* ctx = init_v5(1, 1, 0);
  void* group = start5(ctx, descr(abi::kProfileGroupApi, nullptr));
  void* api = start5(ctx, descr(abi::kProfileCollApi, group));
  stop(start5(ctx, descr(abi::kProfileKernelLaunch, group)));
  auto coll = descr(abi::kProfileColl, api);
  coll.coll.func = "Broadcast";
  coll.coll.root = 2;
  stop(start5(ctx, coll));  // no channels expected: written at its stop
  EXPECT_TRUE(g_calls.empty());
  ASSERT_EQ(g_records.size(), 1u);
  EXPECT_EQ(g_records[0].op, CollectiveOp::kBroadcast);
  EXPECT_EQ(g_records[0].peer, 2);
  EXPECT_EQ(g_records[0].correlation_id, 1u);  // still the group's id, for the record
  EXPECT_EQ(nccl_plugin_tracker()->counters().ids_pushed, 0u);
}

TEST_F(NcclPluginTest, V4RecordsCollectivesWithoutExternalIds) {
  void* ctx = nullptr;
  int mask = 0;
  ASSERT_EQ(ncclProfiler_v4.init(&ctx, &mask, "c", 77, 1, 4, 2, nullptr), abi::kNcclSuccess);
  EXPECT_EQ(mask, kNcclV4ActivationMask);
  abi::EventDescrV4 group{};
  group.type = abi::kProfileGroup;
  void* gh = reinterpret_cast<void*>(0x1);
  ASSERT_EQ(ncclProfiler_v4.start_event(ctx, &gh, &group), abi::kNcclSuccess);
  EXPECT_EQ(gh, nullptr);  // groups are not followed
  abi::EventDescrV4 coll{};
  coll.type = abi::kProfileColl;
  coll.rank = 2;
  coll.coll.seq_number = 9;
  coll.coll.func = "ReduceScatter";
  coll.coll.count = 10;
  coll.coll.datatype = "ncclInt64";
  coll.coll.n_channels = 1;
  coll.coll.algo = "RING";
  coll.coll.proto = "Simple";
  g_now = 50;
  void* task = nullptr;
  ASSERT_EQ(ncclProfiler_v4.start_event(ctx, &task, &coll), abi::kNcclSuccess);
  ASSERT_NE(task, nullptr);
  g_now = 60;
  ncclProfiler_v4.stop_event(task);
  abi::EventDescrV4 ch{};
  ch.type = abi::kProfileKernelCh;
  ch.parent_obj = task;
  ch.kernel_ch.channel_id = 0;
  void* chh = nullptr;
  ncclProfiler_v4.start_event(ctx, &chh, &ch);
  g_now = 70;
  ncclProfiler_v4.record_event_state(chh, abi::kKernelChStop, nullptr);
  g_now = 80;
  ncclProfiler_v4.stop_event(chh);
  ASSERT_EQ(g_records.size(), 1u);
  EXPECT_EQ(g_records[0].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(g_records[0].communicator_id, 77u);
  EXPECT_EQ(g_records[0].rank, 2);
  EXPECT_EQ(g_records[0].nranks, 4);
  // NCCL's count is one rank's share (recvcount); the trace holds the whole
  // unreduced buffer, 4 ranks x 10 x 8 bytes.
  EXPECT_EQ(g_records[0].count, 40);
  EXPECT_EQ(g_records[0].size_bytes, 320);
  EXPECT_EQ(g_records[0].sequence_number, 9u);
  EXPECT_EQ(g_records[0].protocol.view(), "Simple");
  EXPECT_EQ(g_records[0].start_ns, 50);
  EXPECT_EQ(g_records[0].end_ns, 70);
  EXPECT_EQ(g_records[0].correlation_id, 0u);
  EXPECT_TRUE(g_calls.empty());

  // An all-gather likewise: NCCL's sendcount, the trace's gathered buffer.
  coll.coll.seq_number = 10;
  coll.coll.func = "AllGather";
  coll.coll.count = 3;
  coll.coll.datatype = "ncclFloat16";
  coll.coll.n_channels = 0;  // no channel events: the task's stop ends it
  task = nullptr;
  ASSERT_EQ(ncclProfiler_v4.start_event(ctx, &task, &coll), abi::kNcclSuccess);
  ASSERT_NE(task, nullptr);
  g_now = 90;
  ncclProfiler_v4.stop_event(task);
  ASSERT_EQ(g_records.size(), 2u);
  EXPECT_EQ(g_records[1].op, CollectiveOp::kAllGather);
  EXPECT_EQ(g_records[1].count, 12);
  EXPECT_EQ(g_records[1].size_bytes, 24);

  // A whole buffer past the trace's 2^50 bytes is written as unknown (0),
  // not wrapped, and not left for the writer to refuse.
  coll.coll.seq_number = 11;
  coll.coll.count = std::size_t{1} << 48;  // x 4 ranks x 4 bytes = 2^52
  coll.coll.datatype = "ncclFloat32";
  task = nullptr;
  ASSERT_EQ(ncclProfiler_v4.start_event(ctx, &task, &coll), abi::kNcclSuccess);
  ASSERT_NE(task, nullptr);
  ncclProfiler_v4.stop_event(task);
  ASSERT_EQ(g_records.size(), 3u);
  EXPECT_EQ(g_records[2].count, 0);
  EXPECT_EQ(g_records[2].size_bytes, 0);
  EXPECT_EQ(ncclProfiler_v4.finalize(ctx), abi::kNcclSuccess);
}

TEST_F(NcclPluginTest, FullPoolDropsAndCountsThenRecovers) {
  reset(3);
  void* ctx = init_v5(5, 2, 0);
  void* group = start5(ctx, descr(abi::kProfileGroupApi, nullptr));
  void* api = start5(ctx, descr(abi::kProfileCollApi, group));
  void* launch = start5(ctx, descr(abi::kProfileKernelLaunch, group));
  ASSERT_NE(launch, nullptr);
  auto coll = descr(abi::kProfileColl, api);
  coll.coll.func = "AllGather";
  EXPECT_EQ(start5(ctx, coll), nullptr);
  EXPECT_EQ(nccl_plugin_tracker()->counters().events_dropped, 1u);
  stop(nullptr);  // NCCL never stops a null handle, but it must be harmless
  stop(launch);
  stop(api);
  stop(group);
  void* task = start5(ctx, coll);
  ASSERT_NE(task, nullptr);
  stop(task);
  EXPECT_EQ(g_records.size(), 1u);
  EXPECT_EQ(nccl_plugin_tracker()->counters().events_dropped, 1u);
}

TEST_F(NcclPluginTest, GarbageDescriptorsAndHandlesAreIgnored) {
  void* ctx = init_v5(6, 2, 0);
  EXPECT_EQ(start5(ctx, descr(0, nullptr)), nullptr);
  EXPECT_EQ(start5(ctx, descr(std::uint64_t{1} << 40, nullptr)), nullptr);
  EXPECT_EQ(start5(reinterpret_cast<void*>(0x1234), descr(abi::kProfileColl, nullptr)), nullptr);
  void* h = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(ncclProfiler_v5.start_event(ctx, &h, nullptr), abi::kNcclSuccess);
  EXPECT_EQ(h, nullptr);
  int local = 0;
  stop(&local);
  channel_stop(&local);
  auto coll = descr(abi::kProfileColl, nullptr);
  void* task = start5(ctx, coll);  // null func and datatype
  ASSERT_NE(task, nullptr);
  // A pointer inside the pool that is not a slot's start.
  stop(static_cast<char*>(task) + 1);
  EXPECT_TRUE(g_records.empty());
  stop(task);
  stop(task);  // a second stop of a written (freed) slot
  ASSERT_EQ(g_records.size(), 1u);
  EXPECT_EQ(g_records[0].op, CollectiveOp::kUnknown);
  EXPECT_EQ(g_records[0].datatype.view(), "");
  // A kernel channel whose task is gone.
  EXPECT_EQ(start5(ctx, channel(task, 0)), nullptr);
  const TrackerCounters c = nccl_plugin_tracker()->counters();
  EXPECT_EQ(c.ignored_events, 7u);
  EXPECT_EQ(c.orphan_children, 1u);
}

TEST_F(NcclPluginTest, FinalizeWritesUnfinishedCollectivesAndSinkRefusalsAreCounted) {
  void* ctx = init_v5(8, 2, 1);
  auto coll = descr(abi::kProfileColl, nullptr, 1);
  coll.coll.func = "AllReduce";
  coll.coll.n_channels = 4;
  g_now = 10;
  void* task = start5(ctx, coll);
  void* ch = start5(ctx, channel(task, 2));
  g_now = 40;
  channel_stop(ch);
  stop(ch);
  stop(task);
  EXPECT_TRUE(g_records.empty());  // three of four channels never came
  g_refuse = true;
  EXPECT_EQ(ncclProfiler_v5.finalize(ctx), abi::kNcclSuccess);
  ASSERT_EQ(g_records.size(), 1u);
  EXPECT_EQ(g_records[0].channels, 1);
  EXPECT_EQ(g_records[0].end_ns, 40);
  const TrackerCounters c = nccl_plugin_tracker()->counters();
  EXPECT_EQ(c.incomplete_flushed, 1u);
  EXPECT_EQ(c.records_dropped, 1u);
  EXPECT_EQ(c.records_written, 0u);
  // The context is gone: later events on it are ignored.
  EXPECT_EQ(start5(ctx, coll), nullptr);
}

// The plugin with the real process session, in a forked child: the 4096
// slots overflow, a collective stays incomplete, a channel comes after its
// collective was written; at exit the plugin's counters reach the footer.
class NcclPluginFooterTest : public ssgd::testing::TempDirTest {};

TEST_F(NcclPluginFooterTest, PoolOverflowAndIncompleteCollectivesReachTheFooter) {
  const std::filesystem::path out = dir_ / "out";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("SSGD_TRACER_OUT", out.c_str(), 1);
    ::setenv("SSGD_TRACER_FLUSH_MS", "0", 1);
    ::setenv("RANK", "2", 1);
    // The session first, as the plugin's init does, so that the file is
    // closed after the plugin's exit handler has run.
    if (!ProcessSession::get().is_open()) ::_exit(20);
    reset_nccl_plugin_for_testing(PluginHooks{});  // the session and the real clock
    void* ctx = nullptr;
    int mask = 0;
    ncclProfiler_v5.init(&ctx, 77, &mask, "c", 1, 2, 0, nullptr);
    if (ctx == nullptr) ::_exit(21);
    auto start = [ctx](abi::EventDescrV5 d) {
      void* h = nullptr;
      ncclProfiler_v5.start_event(ctx, &h, &d);
      return h;
    };
    abi::EventDescrV5 group{};
    group.type = abi::kProfileGroupApi;
    std::vector<void*> groups;
    for (std::size_t i = 0; i < CollectiveTracker::kDefaultSlots; ++i) groups.push_back(start(group));
    if (start(group) != nullptr || start(group) != nullptr) ::_exit(22);  // 2 events dropped
    abi::EventDescrV5 coll{};
    coll.type = abi::kProfileColl;
    coll.coll.func = "AllReduce";
    coll.coll.datatype = "ncclFloat32";
    coll.coll.count = 256;
    for (int i = 0; i < 3; ++i) {
      if (start(coll) != nullptr) ::_exit(23);  // 3 collectives dropped
    }
    for (int i = 0; i < 3; ++i) ncclProfiler_v5.stop_event(groups[i]);
    // A: two channels announced, one comes: incomplete, written at exit.
    coll.coll.n_channels = 2;
    void* a = start(coll);
    abi::EventDescrV5 ch{};
    ch.type = abi::kProfileKernelCh;
    ch.parent_obj = a;
    void* a_ch = start(ch);
    abi::EventStateArgs args{};
    ncclProfiler_v5.record_event_state(a_ch, abi::kKernelChStop, &args);
    ncclProfiler_v5.stop_event(a_ch);
    ncclProfiler_v5.stop_event(a);
    // B: no channel announced: written at its stop; a channel after that is an orphan.
    coll.coll.n_channels = 0;
    void* b = start(coll);
    ncclProfiler_v5.stop_event(b);
    ch.parent_obj = b;
    if (start(ch) != nullptr) ::_exit(24);
    std::exit(0);  // atexit: the plugin's flush, then the session's close
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  trace::TraceReader reader = trace::TraceReader::open(out / "rank-2.ssgdt");
  trace::v1::Event e;
  std::string events;
  while (reader.next(e)) events += e.ShortDebugString() + "\n";
  ASSERT_NE(reader.footer(), nullptr);
  const trace::v1::Footer& f = *reader.footer();
  EXPECT_EQ(f.invalid_timestamps(), 0u);
  EXPECT_EQ(f.collective_count(), 2u) << events;
  EXPECT_EQ(f.nccl_events_dropped(), 5u);
  EXPECT_EQ(f.dropped_records(), 3u);  // the collectives lost; nothing else was lost
  EXPECT_EQ(f.nccl_incomplete_collectives(), 1u);
  EXPECT_EQ(f.nccl_orphan_events(), 1u);
}

// The plugin with no trace to write to, or a disk that fills up during the
// run: every exported call still returns ncclSuccess, nothing is written on
// stdout or stderr, the program's exit status is its own, and what is left
// is nothing or a trace TraceReader reads (cut short).
TEST_F(NcclPluginFooterTest, WithoutRoomForTheTraceEveryCallStillSucceeds) {
  for (const bool full_disk : {false, true}) {
    SCOPED_TRACE(full_disk ? "disk full after the header" : "unwritable folder");
    const std::filesystem::path out =
        full_disk ? dir_ / "out" : dir_ / "file" / "sub";  // under a regular file
    ssgd::testing::write_file_bytes(dir_ / "file", "x");
    std::filesystem::remove_all(dir_ / "out");
    const std::filesystem::path stdout_path = dir_ / "stdout";
    const std::filesystem::path stderr_path = dir_ / "stderr";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const int out_fd = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out_fd < 0 || err_fd < 0) ::_exit(19);
      ::dup2(out_fd, STDOUT_FILENO);
      ::dup2(err_fd, STDERR_FILENO);
      ::setenv("SSGD_TRACER_OUT", out.c_str(), 1);
      ::setenv("SSGD_TRACER_FLUSH_MS", "0", 1);
      ::setenv("RANK", "2", 1);
      ::unsetenv("SSGD_TRACER_LOG");
      if (full_disk) {
        ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG
        const rlimit fsize{1024, 1024};  // the header (~100 bytes) fits, a chunk does not
        ::setrlimit(RLIMIT_FSIZE, &fsize);
      }
      if (ProcessSession::get().is_open() != full_disk) ::_exit(20);
      reset_nccl_plugin_for_testing(PluginHooks{});  // the session and the real clock
      void* ctx = nullptr;
      int mask = 0;
      if (ncclProfiler_v5.init(&ctx, 77, &mask, "c", 1, 2, 0, nullptr) != abi::kNcclSuccess) {
        ::_exit(21);
      }
      abi::EventDescrV5 coll{};
      coll.type = abi::kProfileColl;
      coll.coll.func = "AllReduce";
      coll.coll.datatype = "ncclFloat32";
      coll.coll.count = 256;
      for (int i = 0; i < 2000; ++i) {
        void* h = nullptr;
        if (ncclProfiler_v5.start_event(ctx, &h, &coll) != abi::kNcclSuccess) ::_exit(22);
        if (ncclProfiler_v5.stop_event(h) != abi::kNcclSuccess) ::_exit(23);
        if (i == 1000) ProcessSession::get().flush();  // the disk fills up here
      }
      if (ncclProfiler_v5.finalize(ctx) != abi::kNcclSuccess) ::_exit(24);
      std::exit(5);  // atexit: the plugin's flush, then the session's close
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 5) << "20: session state; 21-24: a call failed";
    EXPECT_EQ(ssgd::testing::read_file_bytes(stdout_path), "");
    EXPECT_EQ(ssgd::testing::read_file_bytes(stderr_path), "");
    if (!full_disk) {
      EXPECT_FALSE(std::filesystem::exists(out));
      continue;
    }
    std::vector<std::filesystem::path> left;
    for (const auto& entry : std::filesystem::directory_iterator(dir_ / "out")) {
      left.push_back(entry.path());
    }
    ASSERT_EQ(left.size(), 1u);
    EXPECT_NE(left[0].filename().string().find(".tmp."), std::string::npos);
    trace::TraceReader reader = trace::TraceReader::open(left[0]);
    trace::v1::Event e;
    std::uint64_t n = 0;
    while (reader.next(e)) ++n;
    EXPECT_TRUE(reader.truncated());
    EXPECT_EQ(n, 0u);  // the first chunk did not fit
  }
}

TEST(NcclAbiTest, TablesAreFilledAndNamed) {
  EXPECT_STREQ(ncclProfiler_v5.name, "ssgd");
  EXPECT_STREQ(ncclProfiler_v4.name, "ssgd");
  EXPECT_NE(ncclProfiler_v5.init, nullptr);
  EXPECT_NE(ncclProfiler_v5.finalize, nullptr);
  EXPECT_NE(ncclProfiler_v4.record_event_state, nullptr);
}

}  // namespace
}  // namespace ssgd::tracer
