#pragma once
// What bounds each part of a layer's time, for the what-if to another GPU
// (simulator/perturb/gpu_change.h): a layer profile built from a trace
// (walk/trace_profile.h) splits every layer's forward and backward, and the
// update, by the rate its kernels ran at:
//
//   fp32 tf32 fp16 bf16 fp8   matrix and convolution kernels (traces/kernel_class.h)
//                             in that arithmetic: the GPU's peak rate for it
//   memory     elementwise, normalization, reduction and copy kernels whose
//              grid fills more than one wave of the GPU's SMs: its memory
//              bandwidth
//   latency    those whose whole grid fits in one wave (at most SMs x 2048
//              threads): too few to keep the memory busy, bound by the SMs'
//              clock
//   host       the host's time: CPU operators, and the device's idle time a
//              kernel owns because the host launched it late
//              (walk/trace_walk.h); no GPU changes it
//   other      kernels in no class: kept at the capture's speed
//
// In a layer profile CSV the split is a column value such as
// "tf32=1200;memory=3400;host=50": rate=nanoseconds pairs separated by ';',
// each rate at most once, zeros left out, summing to the row's time.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ssgd::trace {

enum class WorkRate { kFp32, kTf32, kFp16, kBf16, kFp8, kMemory, kLatency, kHost, kOther };
inline constexpr int kWorkRateCount = 9;

const char* to_string(WorkRate r);
std::optional<WorkRate> parse_work_rate(std::string_view name);

// Nanoseconds by rate.
struct RateSplit {
  std::array<std::int64_t, kWorkRateCount> ns{};
  [[nodiscard]] std::int64_t& operator[](WorkRate r) { return ns[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::int64_t operator[](WorkRate r) const { return ns[static_cast<std::size_t>(r)]; }
  [[nodiscard]] std::int64_t total() const;
  bool operator==(const RateSplit&) const = default;
};

// "tf32=1200;memory=3400" (rates in enum order, zeros left out; "" when all are zero).
std::string format_rate_split(const RateSplit& split);
// Parses format_rate_split's form. Throws std::invalid_argument saying what is
// wrong (an unknown rate, one given twice, a value that is not a non-negative
// integer, a total past 2^62) for the caller to locate.
RateSplit parse_rate_split(std::string_view text);

// `values` (sums over `samples` rank-iterations) averaged, each rounded, then
// the largest moved so that the parts add up to exactly `total`, the row's
// own rounded mean (>= 0).
RateSplit averaged_split(const RateSplit& sums, std::int64_t samples, std::int64_t total);

}  // namespace ssgd::trace
