#pragma once
// The NCCL profiler plugin's exported tables, `ncclProfiler_v5` and
// `ncclProfiler_v4` (C linkage, default visibility; NCCL finds them with
// dlsym in the library NCCL_PROFILER_PLUGIN names), and the one
// CollectiveTracker behind both. Their functions never throw and always
// return ncclSuccess: a problem is counted, never reported to NCCL.

#include <cstddef>

#include "tracer/nccl/collective_tracker.h"
#include "tracer/nccl/nccl_profiler_abi.h"

extern "C" {
__attribute__((visibility("default"))) extern ssgd::tracer::nccl_abi::ProfilerV5 ncclProfiler_v5;
__attribute__((visibility("default"))) extern ssgd::tracer::nccl_abi::ProfilerV4 ncclProfiler_v4;
}

namespace ssgd::tracer {

// The events the plugin asks NCCL for, per interface version.
inline constexpr int kNcclV5ActivationMask =
    nccl_abi::kProfileGroupApi | nccl_abi::kProfileCollApi | nccl_abi::kProfileP2pApi |
    nccl_abi::kProfileKernelLaunch | nccl_abi::kProfileColl | nccl_abi::kProfileP2p |
    nccl_abi::kProfileKernelCh;
inline constexpr int kNcclV4ActivationMask =
    nccl_abi::kProfileColl | nccl_abi::kProfileP2p | nccl_abi::kProfileKernelCh;

// The external correlation functions the plugin will use, set by the CUPTI
// layer once CUPTI is up, before NCCL's first init() (CUDA injection runs
// before any communicator exists). The first init() takes them, or, without
// a call, looks them up with resolve_cupti_external_correlation(); a call
// after that init has no effect.
void set_nccl_external_correlation(const ExternalCorrelationApi& api) noexcept;

// The plugin's tracker, created by the first init() (null before).
CollectiveTracker* nccl_plugin_tracker() noexcept;

// Tests only: replaces the tracker with a fresh one using `hooks` (an
// unusable `hooks.correlation` means none) and `slot_count` slots. Never
// while NCCL may call the plugin.
void reset_nccl_plugin_for_testing(const PluginHooks& hooks,
                                   std::size_t slot_count = CollectiveTracker::kDefaultSlots);

}  // namespace ssgd::tracer
