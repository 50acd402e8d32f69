#include "traces/rate_split.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

#include "common/enum_names.h"

namespace ssgd::trace {

namespace {

constexpr EnumNames<WorkRate, kWorkRateCount> kWorkRateNames{{{
    {WorkRate::kFp32, "fp32"},
    {WorkRate::kTf32, "tf32"},
    {WorkRate::kFp16, "fp16"},
    {WorkRate::kBf16, "bf16"},
    {WorkRate::kFp8, "fp8"},
    {WorkRate::kMemory, "memory"},
    {WorkRate::kLatency, "latency"},
    {WorkRate::kHost, "host"},
    {WorkRate::kOther, "other"},
}}};

}  // namespace

const char* to_string(WorkRate r) { return kWorkRateNames.name(r); }

std::optional<WorkRate> parse_work_rate(std::string_view name) {
  return kWorkRateNames.parse(name);
}

std::int64_t RateSplit::total() const {
  std::int64_t sum = 0;
  for (const std::int64_t v : ns) sum += v;
  return sum;
}

std::string format_rate_split(const RateSplit& split) {
  std::string out;
  for (int k = 0; k < kWorkRateCount; ++k) {
    const std::int64_t v = split.ns[static_cast<std::size_t>(k)];
    if (v == 0) continue;
    if (!out.empty()) out += ';';
    out += fmt::format("{}={}", to_string(static_cast<WorkRate>(k)), v);
  }
  return out;
}

RateSplit parse_rate_split(std::string_view text) {
  RateSplit split;
  std::array<bool, kWorkRateCount> seen{};
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  std::int64_t sum = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find(';'), text.size());
    const std::string_view part = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      throw std::invalid_argument(fmt::format(
          "'{}' is not rate=nanoseconds (rates: fp32, tf32, fp16, bf16, fp8, memory, latency, "
          "host, other)",
          part.substr(0, 40)));
    }
    const std::string_view name = part.substr(0, eq);
    const std::string_view value = part.substr(eq + 1);
    const auto rate = parse_work_rate(name);
    if (!rate) {
      throw std::invalid_argument(fmt::format(
          "unknown rate '{}' (rates: fp32, tf32, fp16, bf16, fp8, memory, latency, host, other)",
          name.substr(0, 40)));
    }
    const auto k = static_cast<std::size_t>(*rate);
    if (seen[k]) throw std::invalid_argument(fmt::format("rate '{}' is given twice", name));
    seen[k] = true;
    std::int64_t v = -1;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || v < 0 || v > kMax) {
      throw std::invalid_argument(fmt::format(
          "'{}' of rate '{}' is not a number of nanoseconds from 0 to 2^62", value.substr(0, 40),
          name));
    }
    sum += v;
    if (sum > kMax) throw std::invalid_argument("the rates add up to more than 2^62 ns");
    split.ns[k] = v;
  }
  return split;
}

RateSplit averaged_split(const RateSplit& sums, std::int64_t samples, std::int64_t total) {
  RateSplit out;
  if (samples <= 0) return out;
  std::size_t largest = 0;
  std::int64_t sum = 0;
  for (std::size_t k = 0; k < out.ns.size(); ++k) {
    const std::int64_t v = sums.ns[k];
    out.ns[k] = v / samples + (v % samples >= samples - samples / 2);
    sum += out.ns[k];
    if (out.ns[k] > out.ns[largest]) largest = k;
  }
  // Rounding each part may miss the row's own rounded total by a few ns.
  out.ns[largest] = std::max<std::int64_t>(0, out.ns[largest] + (total - sum));
  if (out.total() != total) {
    // The largest could not absorb it (only when every part is tiny): the
    // difference goes to the first part that can.
    std::int64_t rest = total - out.total();
    for (auto& v : out.ns) {
      const std::int64_t take = std::max(rest, -v);
      v += take;
      rest -= take;
      if (rest == 0) break;
    }
  }
  return out;
}

}  // namespace ssgd::trace
