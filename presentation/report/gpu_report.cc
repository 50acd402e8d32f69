#include "presentation/report/gpu_report.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "common/units.h"

namespace ssgd::report {
namespace {

std::string percent_of(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "-";
  const double share = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return part > 0 && share < 0.05 ? std::string("<0.1%") : fmt::format("{:.1f}%", share);
}

std::string target_text(const sim::GpuChange& c) {
  return fmt::format("{} ({})", c.target,
                     c.target_captured ? "the capture's"
                     : c.target_named  ? "platform.gpu.model"
                                       : "the platform preset's");
}

}  // namespace

std::string kernel_class_shares(const trace::KernelClassTable& classes) {
  std::int64_t all = 0;
  for (const auto v : classes.ns) all += v;
  std::string out;
  for (int k = 0; k < trace::kKernelClassCount; ++k) {
    const auto i = static_cast<std::size_t>(k);
    if (classes.kernels[i] == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ",
                       trace::to_string(static_cast<trace::KernelClass>(k)),
                       percent_of(classes.ns[i], all));
  }
  return out;
}

nlohmann::json gpu_change_json(const sim::GpuChange& c, const trace::KernelClassTable& classes) {
  nlohmann::json j;
  j["model"] = c.target.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.target);
  j["model_from"] = c.target.empty()    ? "none"
                    : c.target_captured ? "capture"
                    : c.target_named    ? "platform.gpu.model"
                                        : "platform preset";
  // Only where workload.fp32_matmul moved the work: reports of runs as
  // captured keep the form they had.
  if (c.fp32_matmul != sim::Fp32Matmul::kCapture) j["fp32_matmul"] = sim::to_string(c.fp32_matmul);
  j["measured_on"] = c.captured.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.captured);
  j["measured_on_preset"] =
      c.captured_preset.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.captured_preset);
  j["scaled"] = c.applied;
  j["notes"] = c.notes;
  if (c.applied) {
    nlohmann::json factors = nlohmann::json::object();
    nlohmann::json split = nlohmann::json::object();
    for (int k = 0; k < trace::kWorkRateCount; ++k) {
      const auto r = static_cast<trace::WorkRate>(k);
      if (r == trace::WorkRate::kHost) continue;
      factors[trace::to_string(r)] = c.factor[static_cast<std::size_t>(k)];
      split[trace::to_string(r)] = c.split[r];
    }
    j["time_factors"] = factors;
    j["kernel_ns_by_rate"] = split;
    j["kernel_ns_before"] = c.kernel_ns_before;
    j["kernel_ns_after"] = c.kernel_ns_after;
    j["host_ns"] = c.host_ns;
  }
  if (!classes.empty()) {
    nlohmann::json by_class = nlohmann::json::object();
    for (int k = 0; k < trace::kKernelClassCount; ++k) {
      const auto i = static_cast<std::size_t>(k);
      by_class[trace::to_string(static_cast<trace::KernelClass>(k))] = {
          {"ns", classes.ns[i]}, {"kernels", classes.kernels[i]}};
    }
    nlohmann::json unclassified = nlohmann::json::array();
    for (const auto& [name, ns] : classes.unclassified) unclassified.push_back({{"name", name}, {"ns", ns}});
    j["kernel_classes"] = {{"per_iteration", by_class},
                           {"math_unknown_ns", classes.math_unknown_ns},
                           {"one_wave_memory_ns", classes.latency_ns},
                           {"unclassified", unclassified}};
  }
  return j;
}

void print_gpu_change(const sim::GpuChange& c, const trace::KernelClassTable& classes,
                      std::ostream& out) {
  if (c.target.empty() && c.captured.empty()) return;
  if (!c.applied) {
    if (c.target.empty()) {
      out << fmt::format("  gpu: {} as measured (the scenario names no GPU)\n", c.captured);
    } else if (!c.captured_preset.empty() && c.captured_preset == c.target) {
      out << fmt::format("  gpu: {}, as measured on {}\n", target_text(c), c.captured);
    } else {
      for (const auto& note : c.notes) out << fmt::format("  gpu: {}\n", note);
    }
    return;
  }
  const double ratio = c.kernel_ns_before > 0 ? static_cast<double>(c.kernel_ns_after) /
                                                    static_cast<double>(c.kernel_ns_before)
                                              : 1.0;
  out << fmt::format(
      "  gpu: {}, measured on {}: kernels {} -> {} an iteration (x{:.3f}); host {} kept\n",
      target_text(c), c.captured, format_duration(Duration(c.kernel_ns_before)),
      format_duration(Duration(c.kernel_ns_after)), ratio, format_duration(Duration(c.host_ns)));
  std::string rates;
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    const auto r = static_cast<trace::WorkRate>(k);
    if (r == trace::WorkRate::kHost || c.split[r] == 0) continue;
    // The part workload.fp32_matmul moved, where it runs on the other unit.
    const bool moved = sim::fp32_matmul_moves(c.fp32_matmul) == r && c.moved_as && *c.moved_as != r;
    rates += fmt::format("{}{} {} x{:.3f}{}", rates.empty() ? "" : ", ", trace::to_string(r),
                         percent_of(c.split[r], c.kernel_ns_before),
                         c.factor[static_cast<std::size_t>(k)],
                         moved ? fmt::format(" (as {})", trace::to_string(*c.moved_as)) : "");
  }
  out << fmt::format("    by rate: {}\n", rates);
  if (!classes.empty()) {
    out << fmt::format("    kernels by class: {}\n", kernel_class_shares(classes));
    if (!classes.unclassified.empty()) {
      std::string names;
      for (std::size_t i = 0; i < classes.unclassified.size() && i < 3; ++i) {
        names += fmt::format("{}{} ({})", i ? ", " : "", classes.unclassified[i].first,
                             format_duration(Duration(classes.unclassified[i].second)));
      }
      out << fmt::format("    in no class: {}{}\n", names,
                         classes.unclassified.size() > 3 ? ", ... (JSON report)" : "");
    }
  }
  for (const auto& note : c.notes) out << fmt::format("    note: {}\n", note);
}

}  // namespace ssgd::report
