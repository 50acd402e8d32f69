#include "tracer/nccl/nccl_profiler_plugin.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "tracer/core/process_session.h"

namespace ssgd::tracer {

namespace abi = nccl_abi;

namespace {

struct PluginState {
  std::mutex init_mutex;  // init() and finalize() only, never the event path
  std::unique_ptr<CollectiveTracker> tracker;
  std::atomic<CollectiveTracker*> current{nullptr};
  ExternalCorrelationApi correlation;
  bool correlation_set = false;
  bool uses_session = false;  // the tracker appends to the ProcessSession (not a test's hook)
};

// Never destroyed: NCCL's threads and the session's close hook (at exit,
// after static destructors registered later have run) may still use it.
PluginState& state() {
  static PluginState* s = new PluginState();
  return *s;
}

// The session's close hook (at exit, or at shutdown()): the unfinished
// collectives, then the plugin's counters for the footer.
void flush_at_close() noexcept {
  CollectiveTracker* t = state().current.load(std::memory_order_acquire);
  if (t == nullptr) return;
  t->flush_all();
  const TrackerCounters c = t->counters();
  NcclPluginCounts counts;
  counts.events_dropped = c.events_dropped;
  counts.collectives_dropped = c.collectives_dropped;
  counts.incomplete_collectives = c.incomplete_flushed;
  counts.orphan_events = c.orphan_children;
  ProcessSession::get().set_nccl_plugin_counts(counts);
}

// The tracker for init(): created on the first call with the real hooks.
CollectiveTracker* tracker_for_init() {
  PluginState& s = state();
  std::lock_guard lock(s.init_mutex);
  if (s.tracker == nullptr) {
    PluginHooks hooks;
    hooks.correlation = s.correlation_set ? s.correlation : resolve_cupti_external_correlation();
    s.tracker = std::make_unique<CollectiveTracker>(hooks);
    s.current.store(s.tracker.get(), std::memory_order_release);
    s.uses_session = true;
  }
  // Every init (cheap, and a forked process has a session of its own): the
  // session writes the unfinished collectives and the counters before it
  // closes the file.
  if (s.uses_session) ProcessSession::get().add_close_hook(flush_at_close);
  return s.tracker.get();
}

CollectiveTracker* tracker() noexcept { return state().current.load(std::memory_order_acquire); }

abi::NcclResult init_common(void** context, int* activation_mask, std::uint64_t comm_id,
                            int nranks, int rank, int mask) noexcept {
  if (context == nullptr) return abi::kNcclSuccess;
  *context = nullptr;
  CollectiveTracker* t = nullptr;
  try {
    t = tracker_for_init();
  } catch (...) {  // a failed allocation or lock: trace nothing, harm nothing
    t = nullptr;
  }
  if (t != nullptr) *context = t->open_communicator(comm_id, nranks, rank, mask);
  if (activation_mask != nullptr) *activation_mask = *context != nullptr ? mask : 0;
  return abi::kNcclSuccess;
}

abi::NcclResult init_v5(void** context, std::uint64_t comm_id, int* activation_mask,
                        const char* /*comm_name*/, int /*n_nodes*/, int nranks, int rank,
                        abi::NcclDebugLogger /*log*/) {
  return init_common(context, activation_mask, comm_id, nranks, rank, kNcclV5ActivationMask);
}

abi::NcclResult init_v4(void** context, int* activation_mask, const char* /*comm_name*/,
                        std::uint64_t comm_hash, int /*n_nodes*/, int nranks, int rank,
                        abi::NcclDebugLogger /*log*/) {
  return init_common(context, activation_mask, comm_hash, nranks, rank, kNcclV4ActivationMask);
}

// v4 and v5 name the fields this reads alike; only their layouts differ.
template <typename Descr>
NcclEventStart from_descr(const Descr& d) noexcept {
  NcclEventStart e;
  e.type = d.type;
  e.parent = d.parent_obj;
  e.rank = d.rank;
  switch (d.type) {
    case abi::kProfileColl:
      e.seq_number = d.coll.seq_number;
      e.func = d.coll.func;
      e.count = d.coll.count;
      e.root_or_peer = d.coll.root;
      e.datatype = d.coll.datatype;
      e.n_channels = d.coll.n_channels;
      e.algo = d.coll.algo;
      e.proto = d.coll.proto;
      break;
    case abi::kProfileP2p:
      e.func = d.p2p.func;
      e.count = d.p2p.count;
      e.root_or_peer = d.p2p.peer;
      e.datatype = d.p2p.datatype;
      e.n_channels = d.p2p.n_channels;
      break;
    case abi::kProfileKernelCh:
      e.channel_id = d.kernel_ch.channel_id;
      break;
    case abi::kProfileProxyOp:
      e.channel_id = d.proxy_op.channel_id;
      break;
    default:
      break;
  }
  return e;
}

abi::NcclResult start_v5(void* context, void** handle, abi::EventDescrV5* descr) {
  if (handle == nullptr) return abi::kNcclSuccess;
  *handle = nullptr;
  CollectiveTracker* t = tracker();
  if (t != nullptr && descr != nullptr) *handle = t->start(context, from_descr(*descr));
  return abi::kNcclSuccess;
}

abi::NcclResult start_v4(void* context, void** handle, abi::EventDescrV4* descr) {
  if (handle == nullptr) return abi::kNcclSuccess;
  *handle = nullptr;
  CollectiveTracker* t = tracker();
  if (t != nullptr && descr != nullptr) *handle = t->start(context, from_descr(*descr));
  return abi::kNcclSuccess;
}

abi::NcclResult stop_event(void* handle) {
  if (CollectiveTracker* t = tracker(); t != nullptr && handle != nullptr) t->stop(handle);
  return abi::kNcclSuccess;
}

abi::NcclResult record_state(void* handle, abi::EventState state, abi::EventStateArgs* /*args*/) {
  if (CollectiveTracker* t = tracker();
      t != nullptr && handle != nullptr && state == abi::kKernelChStop) {
    t->kernel_channel_stopped(handle);
  }
  return abi::kNcclSuccess;
}

abi::NcclResult finalize(void* context) {
  if (CollectiveTracker* t = tracker(); t != nullptr && context != nullptr) {
    t->close_communicator(context);
  }
  return abi::kNcclSuccess;
}

}  // namespace

void set_nccl_external_correlation(const ExternalCorrelationApi& api) noexcept {
  PluginState& s = state();
  std::lock_guard lock(s.init_mutex);
  s.correlation = api;
  s.correlation_set = true;
}

CollectiveTracker* nccl_plugin_tracker() noexcept { return tracker(); }

void reset_nccl_plugin_for_testing(const PluginHooks& hooks, std::size_t slot_count) {
  PluginState& s = state();
  std::lock_guard lock(s.init_mutex);
  s.current.store(nullptr, std::memory_order_release);
  s.tracker = std::make_unique<CollectiveTracker>(hooks, slot_count);
  s.uses_session = hooks.append == nullptr;
  s.current.store(s.tracker.get(), std::memory_order_release);
}

}  // namespace ssgd::tracer

extern "C" {
ssgd::tracer::nccl_abi::ProfilerV5 ncclProfiler_v5 = {
    "ssgd", ssgd::tracer::init_v5, ssgd::tracer::start_v5, ssgd::tracer::stop_event,
    ssgd::tracer::record_state, ssgd::tracer::finalize};
ssgd::tracer::nccl_abi::ProfilerV4 ncclProfiler_v4 = {
    "ssgd", ssgd::tracer::init_v4, ssgd::tracer::start_v4, ssgd::tracer::stop_event,
    ssgd::tracer::record_state, ssgd::tracer::finalize};
}
