#include "tools/ssgd/calibrate_interference.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "simulator/calibration/interference_fit.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/perturb/interference.h"

namespace ssgd::tools {
namespace {

std::string percent(double f) { return fmt::format("{:+.1f}%", 100 * f); }

// A factor as the scenario takes it: at least 0 (a median below 0, work
// faster beside the other kind, is noise), at most the key's bound.
double key_value(double f) { return std::clamp(f, 0.0, 10.0); }

// `noise`: what FactorFit::alone_spread is, in words.
void print_factor(const char* key, const std::optional<sim::FactorFit>& f, const char* what,
                  std::ostream& out, const char* noise = "alone, the same names vary") {
  if (!f) {
    out << fmt::format("  {:<28} not measured\n", key);
    return;
  }
  out << fmt::format(
      "  {:<28} {} (10th-90th percentile {} .. {}; {} {} of {} name(s); {} {:.1f}%)\n", key,
      percent(f->median), percent(f->p10), percent(f->p90), f->samples, what, f->names, noise,
      100 * f->alone_spread);
}

}  // namespace

void run_interference_fit(const std::vector<std::string>& inputs, const OutputFile& output,
                          bool allow_truncated, const std::string& calibration) {
  std::vector<std::filesystem::path> paths(inputs.begin(), inputs.end());
  std::optional<sim::NetworkCalibration> alone;
  if (!calibration.empty()) alone = sim::read_network_calibration(calibration);
  const sim::InterferenceFit f =
      sim::fit_interference(paths, allow_truncated, alone ? &*alone : nullptr);
  const std::string cls = f.gpu ? "gpu" : "host";
  std::vector<std::pair<std::string, double>> keys;
  if (f.compute) keys.emplace_back(cls + ".compute", key_value(f.compute->median));
  if (f.memory) keys.emplace_back(cls + ".memory", key_value(f.memory->median));
  if (f.comm) keys.emplace_back(cls + ".comm", key_value(f.comm->median));
  if (f.concurrent) keys.emplace_back(cls + ".concurrent", key_value(f.concurrent->median));
  if (keys.empty() && output.given()) {
    throw flag_error(output.flag, output.path,
                     fmt::format("no factor was measured in {} trace(s), so there is no scenario "
                                 "to write: {}",
                                 inputs.size(), f.notes.empty() ? "" : f.notes.front()));
  }
  std::ostream& out = std::cout;
  out << fmt::format(
      "ssgd calibrate --interference: {} trace(s), {} ({} {} used), {} collective(s) on {} "
      "rank(s)\n",
      inputs.size(), f.gpu ? "GPU kernels" : "host operators (no GPU kernel)", f.compute_records,
      f.gpu ? "kernels" : "innermost operators", f.collectives, f.ranks);
  out << "  each: how much slower the work ran beside the other kind than alone\n";
  if (f.gpu) {
    print_factor("interference.gpu.compute", f.compute, "kernels", out);
    print_factor("interference.gpu.memory", f.memory, "kernels", out);
  } else {
    print_factor("interference.host.compute", f.compute, "operators", out);
  }
  if (f.comm_from_calibration) {
    print_factor(f.gpu ? "interference.gpu.comm" : "interference.host.comm", f.comm,
                 "collectives against the calibration", out, "the calibration's median error");
  } else {
    print_factor(f.gpu ? "interference.gpu.comm" : "interference.host.comm", f.comm,
                 "collectives", out);
  }
  if (f.concurrent) {
    out << fmt::format(
        "  {:<28} {} (10th-90th percentile {} .. {}; {} busy periods of {} "
        "collectives of {} size(s) against the calibration; its median error "
        "{:.1f}%)\n",
        "interference.host.concurrent", percent(f.concurrent->median), percent(f.concurrent->p10),
        percent(f.concurrent->p90), f.concurrent->samples, f.concurrent_collectives,
        f.concurrent->names, 100 * f.concurrent->alone_spread);
  }
  if (f.cpu_per_byte) {
    out << fmt::format(
        "  {:<28} {:.3f} ns a byte (10th-90th percentile {:.3f} .. {:.3f}; {} operators of {} "
        "name(s), each's slowdown over the bytes a ns its rank's collectives moved through "
        "it meanwhile)\n",
        "interference.host.cpu_per_byte", f.cpu_per_byte->median, f.cpu_per_byte->p10,
        f.cpu_per_byte->p90, f.cpu_per_byte->samples, f.cpu_per_byte->names);
  }
  for (const auto& note : f.notes) out << "  note: " << note << "\n";
  if (!f.gpu) {
    out << "  first principles: where a rank's training thread and the library's workers share "
           "one CPU budget (a rank held to a core or less), each runs at half speed while both "
           "do: host.compute = host.comm = 1 (processor sharing; docs/validation.md, section "
           "12)\n";
  }
  if (keys.empty()) {
    out << "\nno factor measured: no scenario keys\n";
    out.flush();
    return;
  }
  std::string line = "--set interference.model=contention";
  for (const auto& [k, v] : keys) line += fmt::format(" --set interference.{}={:.3f}", k, v);
  out << "\nscenario keys: " << line << "\n";
  if (f.cpu_per_byte && f.cpu_per_byte->median > 0) {
    out << fmt::format(
        "  or, the CPU shared by demand (one constant for any link rate): --set "
        "interference.model=demand --set interference.host.cpu_per_byte={:.3f}{}\n",
        std::min(f.cpu_per_byte->median, sim::kMaxCpuPerByteNs),
        f.concurrent ? fmt::format(" --set interference.host.concurrent={:.3f}",
                                   key_value(f.concurrent->median))
                     : std::string());
  }
  if (output.given()) {
    write_output(output, [&] {
      AtomicFile file(output.path);
      std::ostream& y = file.stream();
      y << "# ssgd calibrate --interference: compute and collectives slowed beside each other "
           "(scenarios/README.md, Interference)\n";
      y << "# weighted medians from:\n";
      for (const auto& i : inputs) y << "#   " << comment_safe(i) << "\n";
      if (!calibration.empty()) {
        y << "# collectives alone: " << comment_safe(calibration) << "\n";
      }
      y << "interference:\n  model: contention\n  " << cls << ":\n";
      for (const auto& [k, v] : keys) {
        y << fmt::format("    {}: {:.3f}\n", k.substr(cls.size() + 1), v);
      }
      if (f.cpu_per_byte && f.cpu_per_byte->median > 0) {
        y << fmt::format(
            "    # for model: demand, the CPU ns a byte through the rank takes\n"
            "    cpu_per_byte: {:.3f}\n",
            std::min(f.cpu_per_byte->median, sim::kMaxCpuPerByteNs));
      }
      file.commit();
    });
    out << fmt::format("wrote {} (the keys, as a scenario)\n", output.path);
  }
  out.flush();
}

}  // namespace ssgd::tools
