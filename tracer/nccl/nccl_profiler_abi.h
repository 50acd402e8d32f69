#pragma once
// The NCCL profiler plugin interface, versions 5 and 4, declared here because
// NCCL installs nccl.h but not its plugin headers. Written from the layout of
// NVIDIA/nccl v2.28.9-1, src/include/plugin/nccl_profiler.h and
// src/include/plugin/profiler/profiler_v{5,4}.h: NCCL 2.28 asks a plugin for
// `ncclProfiler_v5` first and falls back to `ncclProfiler_v4` (NCCL 2.26 and
// 2.27 know v4 as their newest). The types live in a namespace: only their
// layout matters to NCCL, and the exported tables (nccl_profiler_plugin.cc)
// have C linkage whatever their type's name.
//
// The static_asserts pin every offset the plugin reads on LP64 Linux, the one
// ABI NCCL ships for; a mismatch fails the build, never a training run.

#include <cstddef>
#include <cstdint>

namespace ssgd::tracer::nccl_abi {

// ncclResult_t: an int-sized enum; the plugin only ever returns ncclSuccess.
enum NcclResult : int { kNcclSuccess = 0, kNcclInternalError = 3 };

// ncclDebugLogger_t (nccl_common.h): level, subsystem flags, file, line, printf format.
using NcclDebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                                 const char* fmt, ...);

// Event types: the descriptor's `type`, and the bits of the activation mask
// init() hands back.
enum EventType : std::uint64_t {
  kProfileGroup = 1u << 0,         // a group of tasks launched together (v4 parent of Coll/P2p)
  kProfileColl = 1u << 1,          // one collective, started when NCCL hands it to the GPU/proxy
  kProfileP2p = 1u << 2,           // one send or receive
  kProfileProxyOp = 1u << 3,       // a proxy operation on one channel
  kProfileProxyStep = 1u << 4,     // one network step of a proxy operation
  kProfileProxyCtrl = 1u << 5,     // proxy thread state
  kProfileKernelCh = 1u << 6,      // one channel of the collective's kernel (GPU timer)
  kProfileNetPlugin = 1u << 7,     // network plugin events
  kProfileGroupApi = 1u << 8,      // v5: ncclGroupStart..End as the application called it
  kProfileCollApi = 1u << 9,       // v5: one collective API call (ncclAllReduce, ...)
  kProfileP2pApi = 1u << 10,       // v5: one ncclSend/ncclRecv call
  kProfileKernelLaunch = 1u << 11  // v5: around cuLaunchKernel, on the launching thread
};

// ncclProfilerEventState_t: the states recordEventState reports. Only the
// kernel channel's stop carries data the plugin uses (its GPU timer).
enum EventState : int {
  kProxyOpInProgressV4 = 19,
  kKernelChStop = 22,
  kGroupStartApiStop = 23,
  kGroupEndApiStart = 24
};

// --- version 5 (NCCL 2.28) -------------------------------------------------

struct GroupApiV5 {
  bool graph_captured;
  int group_depth;
};
struct CollApiV5 {
  const char* func;
  std::size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graph_captured;
};
struct P2pApiV5 {
  const char* func;
  std::size_t count;
  const char* datatype;
  void* stream;
  bool graph_captured;
};
struct KernelLaunchV5 {
  void* stream;
};
struct CollV5 {
  std::uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t n_channels;
  std::uint8_t n_warps;
  const char* algo;
  const char* proto;
  void* parent_group;  // the Group event, as v4's parentObj was
};
struct P2pV5 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t n_channels;
  void* parent_group;
};
struct ProxyOp {
  int pid;  // pid_t
  std::uint8_t channel_id;
  int peer;
  int n_steps;
  int chunk_size;
  int is_send;
};
struct ProxyStep {
  int step;
};
struct KernelCh {
  std::uint8_t channel_id;
  std::uint64_t gpu_timer_start;  // GPU globaltimer, ns
};
struct NetPlugin {
  std::int64_t id;
  void* data;
};

// ncclProfilerEventDescr_v5_t
struct EventDescrV5 {
  std::uint64_t type;  // one EventType
  void* parent_obj;    // the handle this plugin returned for the parent event, or null
  int rank;            // rank in the communicator
  union {
    GroupApiV5 group_api;
    CollApiV5 coll_api;
    P2pApiV5 p2p_api;
    KernelLaunchV5 kernel_launch;
    CollV5 coll;
    P2pV5 p2p;
    ProxyOp proxy_op;
    ProxyStep proxy_step;
    KernelCh kernel_ch;
    NetPlugin net_plugin;
  };
};

// ncclProfilerEventStateArgs_v5_t (identical in v4)
union EventStateArgs {
  struct {
    std::size_t trans_size;
  } proxy_step;
  struct {
    int appended_proxy_ops;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    std::uint64_t gpu_timer;  // GPU globaltimer at the channel's stop, ns
  } kernel_ch;
};

// ncclProfiler_v5_t
struct ProfilerV5 {
  const char* name;
  NcclResult (*init)(void** context, std::uint64_t comm_id, int* activation_mask,
                     const char* comm_name, int n_nodes, int nranks, int rank,
                     NcclDebugLogger log);
  NcclResult (*start_event)(void* context, void** handle, EventDescrV5* descr);
  NcclResult (*stop_event)(void* handle);
  NcclResult (*record_event_state)(void* handle, EventState state, EventStateArgs* args);
  NcclResult (*finalize)(void* context);
};

// --- version 4 (NCCL 2.26, 2.27) -------------------------------------------

struct CollV4 {
  std::uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t n_channels;
  std::uint8_t n_warps;
  const char* algo;
  const char* proto;
};
struct P2pV4 {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t n_channels;
};

// ncclProfilerEventDescr_v4_t: `type` is one byte in v4.
struct EventDescrV4 {
  std::uint8_t type;
  void* parent_obj;
  int rank;
  union {
    CollV4 coll;
    P2pV4 p2p;
    ProxyOp proxy_op;
    ProxyStep proxy_step;
    KernelCh kernel_ch;
    NetPlugin net_plugin;
  };
};

// ncclProfiler_v4_t: init takes the communicator name before its hash.
struct ProfilerV4 {
  const char* name;
  NcclResult (*init)(void** context, int* activation_mask, const char* comm_name,
                     std::uint64_t comm_hash, int n_nodes, int nranks, int rank,
                     NcclDebugLogger log);
  NcclResult (*start_event)(void* context, void** handle, EventDescrV4* descr);
  NcclResult (*stop_event)(void* handle);
  NcclResult (*record_event_state)(void* handle, EventState state, EventStateArgs* args);
  NcclResult (*finalize)(void* context);
};

// The layouts NCCL compiles against (C rules on LP64).
static_assert(sizeof(void*) == 8, "the NCCL profiler ABI is declared for LP64 only");
static_assert(sizeof(NcclResult) == sizeof(int));
static_assert(offsetof(EventDescrV5, parent_obj) == 8 && offsetof(EventDescrV5, rank) == 16);
static_assert(offsetof(EventDescrV5, coll) == 24);
static_assert(offsetof(CollV5, count) == 32 && offsetof(CollV5, root) == 40);
static_assert(offsetof(CollV5, datatype) == 48 && offsetof(CollV5, n_channels) == 56);
static_assert(offsetof(CollV5, n_warps) == 57 && offsetof(CollV5, algo) == 64);
static_assert(offsetof(CollV5, proto) == 72 && offsetof(CollV5, parent_group) == 80);
static_assert(sizeof(CollV5) == 88 && sizeof(EventDescrV5) == 112);
static_assert(offsetof(P2pV5, count) == 24 && offsetof(P2pV5, peer) == 32);
static_assert(offsetof(P2pV5, n_channels) == 36 && sizeof(P2pV5) == 48);
static_assert(offsetof(CollApiV5, stream) == 32 && sizeof(CollApiV5) == 48);
static_assert(offsetof(ProxyOp, channel_id) == 4 && offsetof(ProxyOp, peer) == 8);
static_assert(offsetof(KernelCh, gpu_timer_start) == 8 && sizeof(KernelCh) == 16);
static_assert(sizeof(EventStateArgs) == 8);
static_assert(sizeof(ProfilerV5) == 6 * sizeof(void*) && sizeof(ProfilerV4) == 6 * sizeof(void*));
static_assert(offsetof(EventDescrV4, parent_obj) == 8 && offsetof(EventDescrV4, coll) == 24);
static_assert(sizeof(CollV4) == 80 && sizeof(EventDescrV4) == 104);
static_assert(offsetof(P2pV4, n_channels) == 36 && sizeof(P2pV4) == 40);

}  // namespace ssgd::tracer::nccl_abi
