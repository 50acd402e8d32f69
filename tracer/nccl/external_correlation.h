#pragma once
// The seam between the NCCL profiler plugin and CUPTI's external correlation
// stack. Around each NCCL kernel launch the plugin pushes an id of its own
// (cuptiActivityPushExternalCorrelationId) and pops it afterwards; CUPTI
// then writes an EXTERNAL_CORRELATION activity record pairing that id with
// the CUPTI correlation id of the launch, which is also the kernel record's
// correlation id. The calls go through two function pointers so that the
// plugin neither links CUPTI nor needs it in tests: the CUPTI layer sets the
// real functions, tests set recorders, and by default they are looked up
// with dlsym(RTLD_DEFAULT, ...) and left null (no push, no pop) when the
// process has no CUPTI loaded.

#include <cstdint>

namespace ssgd::tracer {

// CUpti_ExternalCorrelationKind CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2. The
// plugin uses CUSTOM2 because PyTorch's profiler (Kineto) pushes CUSTOM0 and
// CUSTOM1 for its own operators; a kind is a separate stack in CUPTI, so the
// two never pop each other's ids.
inline constexpr int kNcclExternalCorrelationKind = 5;

struct ExternalCorrelationApi {
  // Signatures of cuptiActivityPushExternalCorrelationId and
  // cuptiActivityPopExternalCorrelationId: the kind is a
  // CUpti_ExternalCorrelationKind, the result a CUptiResult (0 = success).
  int (*push)(int kind, std::uint64_t id) = nullptr;
  int (*pop)(int kind, std::uint64_t* last_id) = nullptr;

  [[nodiscard]] bool usable() const noexcept { return push != nullptr && pop != nullptr; }
};

// The two CUPTI functions as the process has them loaded (dlsym with
// RTLD_DEFAULT), or an unusable API when it has not.
ExternalCorrelationApi resolve_cupti_external_correlation() noexcept;

}  // namespace ssgd::tracer
