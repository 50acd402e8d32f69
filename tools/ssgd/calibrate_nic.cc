// ssgd calibrate --nic: the scenario platform's NIC fitted through the
// scenario's own model (simulator/api/nic_fit.h), the fitted and predicted
// curves printed, and the factors written as scenario keys (-o).
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "common/units.h"
#include "simulator/api/nic_fit.h"
#include "tools/ssgd/calibrate_fits.h"
#include "tools/ssgd/commands.h"
#include "traces/import/measurement_files.h"

namespace ssgd::tools {
namespace {

void print_nic_curve(const sim::NicFitCurve& c, std::ostream& out) {
  out << fmt::format("\n{} {} over {} ranks ({} node(s)) from {}\n",
                     c.fitted ? "fitted:" : "predicted:", to_string(c.op), c.ranks, c.nodes,
                     fmt::join(c.sources, ", "));
  out << fmt::format("  {:>12} {:>12} {:>12} {:>8} {:>10} {:>10} {:>7}  {}\n", "size", "measured",
                     "predicted", "error", "busbw", "predicted", "", "algorithm");
  const double factor = sim::bus_bandwidth_factor(c.op, c.ranks);
  for (const auto& p : c.points) {
    const auto m = static_cast<double>(p.measured.ns());
    const auto t = static_cast<double>(p.predicted.ns());
    const std::string how = p.protocol.empty()
                                ? p.algorithm
                                : fmt::format("{} {} {} ch", p.algorithm, p.protocol, p.channels);
    out << fmt::format("  {:>12} {:>12} {:>12} {:>+7.1f}% {:>10} {:>10} {:>7}  {}\n",
                       size_label(p.bytes), format_duration(p.measured),
                       format_duration(p.predicted), 100 * (t - m) / m,
                       format_rate(p.bytes / (m * 1e-9) * factor),
                       format_rate(p.bytes / (t * 1e-9) * factor), "", how);
  }
  out << fmt::format("  {} sizes: median error {}, max {}\n", c.points.size(),
                     percent(c.median_error), percent(c.max_error));
}

}  // namespace

void run_nic_fit(const CalibrateArgs& a, const trace::MeasurementOptions& mo) {
  refuse_given_flags({{!a.bands.empty(), "--bands"},
                      {a.max_bands_given, "--max-bands"},
                      {a.holdout != 0, "--holdout"},
                      {a.per_ranks, "--per-ranks"},
                      {!a.tcp_streams.empty(), "--tcp-streams"},
                      {!a.line_rate.empty(), "--line-rate"},
                      {a.level != "inter_node", "--level"},
                      {a.algorithm != "ring", "--algorithm"}},
                     "does not apply with --nic (it fits the platform's NIC through the "
                     "scenario's model; set the algorithm with --set network.algorithm or "
                     "network.nccl_algo, and use --predict for curves to check)");
  check_inputs(a.predict, "--predict");
  const sim::Scenario scenario = load_scenario(a.scenario);
  std::vector<trace::Measurement> fit;
  std::vector<trace::Measurement> predict;
  for (const auto& input : a.inputs) {
    for (auto& m : trace::read_measurements(input, mo)) fit.push_back(std::move(m));
  }
  for (const auto& input : a.predict) {
    for (auto& m : trace::read_measurements(input, mo)) predict.push_back(std::move(m));
  }
  auto log = logger("tools");
  log->info("fitting the NIC: {} curve point(s) to fit, {} to predict", fit.size(), predict.size());
  const sim::NicFitResult r = sim::fit_nic(scenario, fit, predict);
  print_read(fit.size() + predict.size(), a.inputs.size() + a.predict.size());
  std::cout << fmt::format(
      "\nplatform {}, {} NIC(s) a node: bandwidth x {:.4f} = {} (was {}), latency x {:.4f} = {} "
      "(was "
      "{}); {} models searched\n",
      r.platform, r.nics, r.bandwidth_factor, format_rate(r.bandwidth),
      format_rate(r.base_bandwidth), r.latency_factor, format_duration(r.latency),
      format_duration(r.base_latency), r.evaluations);
  if (!r.latency_fitted)
    std::cout << "  note: the NIC has no latency to scale; only its bandwidth is fitted\n";
  if (r.bandwidth_at_edge) {
    std::cout << fmt::format(
        "  note: the bandwidth is at the edge of the search ({}x the platform's NIC to its line "
        "rate, x {:.4f}): the curves may not be bound by the NIC, or the platform may be the wrong "
        "one\n",
        sim::kNicFitBandwidthLow, r.line_factor);
  }
  if (r.latency_at_edge) {
    std::cout
        << "  note: the latency is at the edge of the search (100 ns to 1 ms): the curves say "
           "little about it\n";
  }
  for (const auto& c : r.curves) print_nic_curve(c, std::cout);
  // The factor lists with the NIC's fitted, the other kinds' as given.
  const auto factors = [&](const auto& given, double nic) {
    std::string list;
    for (int k = 0; k < sim::kLinkKindCount; ++k) {
      const auto kind = static_cast<sim::LinkKind>(k);
      const double f = kind == sim::LinkKind::kNic ? nic : given[static_cast<std::size_t>(k)];
      if (f == 1 && kind != sim::LinkKind::kNic) continue;
      list += fmt::format("{}{}:{:.6g}", list.empty() ? "" : ",", sim::to_string(kind), f);
    }
    return list;
  };
  const std::string bw = factors(scenario.perturb.bandwidth_factors, r.bandwidth_factor);
  const std::string lat = factors(scenario.perturb.latency_factors, r.latency_factor);
  std::cout << fmt::format(
      "\nscenario keys: --set perturb.bandwidth_factors={} --set perturb.latency_factors={}\n", bw,
      lat);
  if (a.output.given()) {
    write_output(a.output, [&] {
      AtomicFile file(a.output.path);
      std::ostream& out = file.stream();
      out << "# ssgd calibrate --nic: the platform's NIC fitted through the scenario's model, as\n"
             "# factors on the NIC the platform names (docs/calibration.md, \"Fitting the NIC\")\n";
      out << fmt::format("# platform {}: NIC {} and {}; fitted to:\n", comment_safe(r.platform),
                         format_rate(r.bandwidth), format_duration(r.latency));
      for (const auto& i : a.inputs) out << "#   " << comment_safe(i) << "\n";
      for (const auto& c : r.curves) {
        out << fmt::format("# {} {} over {} ranks: median error {}, max {}\n",
                           c.fitted ? "fitted" : "predicted", to_string(c.op), c.ranks,
                           percent(c.median_error), percent(c.max_error));
      }
      out << "perturb:\n";
      out << fmt::format("  bandwidth_factors: {}\n", bw);
      out << fmt::format("  latency_factors: {}\n", lat);
      file.commit();
    });
    std::cout << fmt::format(
        "wrote {} (the keys, as a scenario; add your own platform keys to it)\n", a.output.path);
  }
  std::cout.flush();
}

}  // namespace ssgd::tools
