// ssgd calibrate INPUT... [-o network.yaml] [--allow-truncated]: fits per-size-band alpha-beta
// costs to measured collective times (simulator/calibration/band_fit.h) and
// writes a network calibration file that scenarios use through
// network.calibration (docs/calibration.md).
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/units.h"
#include "simulator/api/nic_fit.h"
#include "simulator/calibration/band_fit.h"
#include "traces/import/measurement_files.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/calibration/scheduler_fit.h"
#include "simulator/calibration/stream_fit.h"
#include "simulator/platform/link_preset.h"
#include "tools/ssgd/calibrate_interference.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct CalibrateArgs {
  std::vector<std::string> inputs;
  OutputFile output;
  std::string format = "auto";
  std::string op;
  std::string algorithm = "ring";
  std::int64_t ranks = 0;
  std::string bands;
  std::int64_t max_bands = 4;
  std::int64_t holdout = 0;
  std::string level = "inter_node";
  bool per_ranks = false;
  bool in_place = false;
  bool allow_truncated = false;
  bool max_bands_given = false;
  std::string tcp_streams;  // "auto" or a count: fit the TCP stream model instead of bands
  std::string line_rate;    // with --tcp-streams: a rate or a link preset
  bool scheduler = false;   // fit the scheduler's costs from traces instead
  bool interference = false;  // fit the interference factors from traces instead
  std::string alone_calibration;  // with --interference: collectives' alone times
  bool nic = false;         // fit the scenario platform's NIC through its model instead
  std::vector<std::string> predict;  // with --nic: curves predicted, not fitted
  ScenarioOptions scenario;          // with --nic: the platform
};


std::vector<double> parse_band_limits(const std::string& list) {
  std::vector<double> limits;
  for (const std::string_view item : split_list(list)) {
    std::int64_t bytes = 0;
    try {
      bytes = parse_bytes(item);
    } catch (const std::invalid_argument& e) {
      throw flag_error("--bands", list, e.what());
    }
    if (bytes <= 0) {
      throw flag_error("--bands", list, fmt::format("band limit '{}' must be above zero", item));
    }
    if (!limits.empty() && !(static_cast<double>(bytes) > limits.back())) {
      throw flag_error("--bands", list,
                       "band limits must be in increasing order, e.g. 8KiB,256KiB");
    }
    limits.push_back(static_cast<double>(bytes));
  }
  return limits;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string size_label(double bytes) { return format_bytes(static_cast<std::int64_t>(bytes)); }

// "<= 8.0 KiB", "8.0 KiB - 256.0 KiB", "> 256.0 KiB", or "all sizes".
std::string band_range(const sim::CalibratedCollective& c, std::size_t b) {
  const auto& bands = c.bands;
  if (bands.size() == 1) return "all sizes";
  if (b == 0) return "<= " + size_label(bands[0].max_bytes);
  if (b + 1 == bands.size()) return "> " + size_label(bands[b - 1].max_bytes);
  return size_label(bands[b - 1].max_bytes) + " - " + size_label(bands[b].max_bytes);
}

std::string join_ranks(const std::vector<std::int64_t>& ranks) {
  std::string s;
  for (const auto r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

// --tcp-streams: "auto" (search 1 to 64) or a count from 1 to 64.
std::optional<std::int64_t> parse_tcp_streams(const std::string& text) {
  if (text == "auto") return std::nullopt;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 64) {
    throw flag_error("--tcp-streams", text, "expected 'auto' or a stream count from 1 to 64");
  }
  return n;
}

// --line-rate: a rate (10Gbit/s, 1.25GB/s) or a link preset (25gbe), whose
// sustained bandwidth bounds the fit as it bounds a simulation.
double parse_line_rate(const std::string& text) {
  if (const sim::LinkPreset* preset = sim::find_link_preset(text)) {
    return preset->bandwidth_bytes_per_s;
  }
  double rate = 0;
  try {
    rate = parse_rate_bytes_per_s(text);
  } catch (const std::invalid_argument& e) {
    throw flag_error("--line-rate", text,
                     fmt::format("{}; or a link preset ({})", e.what(), sim::link_preset_names()));
  }
  if (!(rate > 0) || !std::isfinite(rate)) {
    throw flag_error("--line-rate", text, "must be above 0");
  }
  return rate;
}

void print_stream_fit(const sim::StreamFitResult& f, std::ostream& out) {
  out << fmt::format("\n{} over {} ranks: {} steps, TCP stream model\n", to_string(f.op),
                     join_ranks(f.ranks), to_string(f.algorithm));
  out << fmt::format("  {:>8} {:>14} {:>12} {:>7} {:>7} {:>7}\n", "streams", "stream rate",
                     "latency", "points", "median", "max");
  out << fmt::format("  {:>8} {:>14} {:>12} {:>7} {:>7} {:>7}\n", f.streams,
                     format_rate(f.stream_rate_bytes_per_s), format_duration(f.latency), f.points,
                     percent(f.median_error), percent(f.max_error));
  if (f.by_streams.size() > 1) {
    out << "  rms relative error by stream count:";
    for (const auto& [s, rms] : f.by_streams) {
      if (s <= 8 || s == f.streams || s % 16 == 0) out << fmt::format(" {}: {}", s, percent(rms));
    }
    out << "\n";
  }
  if (!f.streams_identified) {
    out << fmt::format(
        "  note: other stream counts fit as well (within 1%): the smallest is shown, and only "
        "streams x stream rate = {} is well measured; small messages (steps under streams x 64 "
        "KiB) tell the count\n",
        format_rate(static_cast<double>(f.streams) * f.stream_rate_bytes_per_s));
  }
  if (f.rate_at_grid_edge) {
    out << "  note: the stream rate is at the edge of the search (1 MB/s to 1 TB/s): the curve "
           "may not be bound by TCP streams at all\n";
  }
  for (const sim::HoldoutError& h : f.holdout) {
    out << fmt::format("  held back, {} ranks: {} sizes predicted, median error {}, max {}\n",
                       h.ranks, h.points, percent(h.median_error), percent(h.max_error));
  }
}

// The scenario keys the stream fit gives, as a YAML file to copy from or to
// pass to --scenario, written whole or not at all (AtomicFile).
void write_stream_scenario(const sim::StreamFitResult& f, const std::vector<std::string>& inputs,
                           double line_rate, const std::filesystem::path& path) {
  AtomicFile file(path);
  std::ostream& out = file.stream();
  out << "# ssgd calibrate --tcp-streams: the TCP stream model (docs/platforms.md, TCP streams)\n";
  out << fmt::format("# fitted to {} {} measurement(s) over {} ranks ({} steps) from:\n",
                     f.points, to_string(f.op), join_ranks(f.ranks), to_string(f.algorithm));
  for (const auto& i : inputs) out << "#   " << comment_safe(i) << "\n";
  out << fmt::format("# median error {}, max {}\n", percent(f.median_error),
                     percent(f.max_error));
  if (line_rate > 0) {
    out << fmt::format(
        "# with the streams bounded by a line rate of {}: a replay gets the same bound from the "
        "NIC's bandwidth (platform.nic.bandwidth)\n",
        format_rate(line_rate));
  }
  out << "platform:\n  nic:\n";
  out << fmt::format("    tcp_streams: {}\n", f.streams);
  out << fmt::format("    tcp_stream_rate: {}B/s\n",
                     static_cast<std::int64_t>(std::llround(f.stream_rate_bytes_per_s)));
  out << fmt::format("    latency: {}ns\n", f.latency.ns());
  file.commit();
}

void print_fit(const sim::FitResult& fit, const sim::FitOptions& options, std::ostream& out) {
  const sim::CalibratedCollective& c = fit.collective;
  const std::string how =
      options.boundaries.empty()
          ? fmt::format("{} band(s) found (at most {})", c.bands.size(), options.max_bands)
          : fmt::format("{} band(s) given", c.bands.size());
  out << fmt::format("\n{} over {} ranks: {} terms, {}\n", to_string(c.op), join_ranks(c.ranks),
                     to_string(c.algorithm), how);
  const bool held = !fit.band_holdout.empty();
  out << fmt::format("  {:<22} {:>12} {:>13} {:>7} {:>7} {:>7}", "sizes", "latency", "bandwidth",
                     "points", "median", "max");
  if (held) out << fmt::format("  | {:>9} {:>7} {:>7}", "held back", "median", "max");
  out << "\n";
  for (std::size_t b = 0; b < c.bands.size(); ++b) {
    const sim::CalibrationBand& band = c.bands[b];
    out << fmt::format("  {:<22} {:>12} {:>13} {:>7} {:>7} {:>7}", band_range(c, b),
                       format_duration(band.latency), format_rate(band.bandwidth_bytes_per_s),
                       band.points, percent(band.median_error), percent(band.max_error));
    if (held) {
      const sim::HoldoutError& h = fit.band_holdout[b];
      if (h.points > 0) {
        out << fmt::format("  | {:>9} {:>7} {:>7}", h.points, percent(h.median_error),
                           percent(h.max_error));
      } else {
        out << fmt::format("  | {:>9} {:>7} {:>7}", 0, "-", "-");
      }
    }
    out << "\n";
  }
  for (const sim::HoldoutError& h : fit.holdout) {
    out << fmt::format("  held back, {} ranks: {} sizes predicted, median error {}, max {}\n",
                       h.ranks, h.points, percent(h.median_error), percent(h.max_error));
  }
}

// One fit per group of measurements, all made before anything is printed or
// written; a group the fit refuses is an input error naming its first file
// and the collective.
template <typename Fit>
auto fit_groups(const std::vector<std::vector<trace::Measurement>>& groups, Fit&& fit) {
  std::vector<decltype(fit(groups.front()))> fits;
  for (const auto& points : groups) {
    try {
      fits.push_back(fit(points));
    } catch (const std::invalid_argument& e) {
      throw InputError(InputLocation{points.front().source, std::nullopt, std::nullopt,
                                     sim::to_string(points.front().op)},
                       e.what());
    }
  }
  return fits;
}

void print_read(std::size_t measurements, std::size_t files) {
  std::cout << fmt::format("ssgd calibrate: {} measurements from {} file(s)\n", measurements,
                           files);
}

void run_stream_fit(const CalibrateArgs& a,
                    const std::map<sim::CollectiveOp, std::vector<trace::Measurement>>& by_op,
                    const std::vector<std::vector<trace::Measurement>>& groups, std::size_t total) {
  if (by_op.size() > 1) {
    throw flag_error("--tcp-streams", a.tcp_streams,
                     fmt::format("fits one collective, and the inputs measure {}; fit each on its "
                                 "own",
                                 fmt::join([&] {
                                   std::vector<std::string> names;
                                   for (const auto& [op, _] : by_op) names.push_back(to_string(op));
                                   return names;
                                 }(),
                                           " and ")));
  }
  sim::StreamFitOptions so;
  so.algorithm = sim::parse_collective_algorithm(a.algorithm).value();
  so.streams = parse_tcp_streams(a.tcp_streams);
  so.holdout = a.holdout;
  if (!a.line_rate.empty()) so.line_rate_bytes_per_s = parse_line_rate(a.line_rate);
  const auto fits = fit_groups(groups, [&](const auto& points) { return sim::fit_streams(points, so); });
  print_read(total, a.inputs.size());
  for (const auto& f : fits) print_stream_fit(f, std::cout);
  const sim::StreamFitResult& joint = fits.front();
  std::cout << fmt::format(
      "\nscenario keys: --set platform.nic.tcp_streams={} --set platform.nic.tcp_stream_rate={}B/s "
      "--set platform.nic.latency={}ns\n",
      joint.streams, static_cast<std::int64_t>(std::llround(joint.stream_rate_bytes_per_s)),
      joint.latency.ns());
  if (a.output.given()) {
    write_output(a.output, [&] {
      write_stream_scenario(joint, a.inputs, so.line_rate_bytes_per_s, a.output.path);
    });
    std::cout << fmt::format("wrote {} (the joint fit's keys, as a scenario)\n", a.output.path);
  }
  std::cout.flush();
}

std::string summary_text(const sim::SampleSummary& s) {
  return fmt::format("{} (10th-90th percentile {} - {}, {} samples)", format_duration(s.median),
                     format_duration(s.p10), format_duration(s.p90), s.samples);
}

// --scheduler: the costs of a partitioning scheduler, from traces where every
// partition is a collective of its own (simulator/calibration/scheduler_fit.h).
// One trace (one rank's, or a run's ranks merged); several are refused rather
// than silently reduced to one.
// The flags that shape a network fit do not apply to `mode`'s fit from traces.
void refuse_network_flags(const CalibrateArgs& a, const char* mode) {
  if (a.format != "auto" && a.format != "trace") {
    throw flag_error("--format", a.format, fmt::format("{} reads ssgd traces only", mode));
  }
  const std::pair<bool, const char*> network_flags[] = {
      {!a.op.empty(), "--op"},          {a.ranks != 0, "--ranks"},
      {!a.bands.empty(), "--bands"},    {a.max_bands_given, "--max-bands"},
      {a.holdout != 0, "--holdout"},    {a.per_ranks, "--per-ranks"},
      {a.in_place, "--in-place"},       {!a.tcp_streams.empty(), "--tcp-streams"},
      {!a.line_rate.empty(), "--line-rate"}, {a.level != "inter_node", "--level"},
      {a.algorithm != "ring", "--algorithm"}};
  for (const auto& [given, flag] : network_flags) {
    if (given) throw flag_error(flag, fmt::format("does not apply with {} (no network fit)", mode));
  }
}

void run_scheduler_fit(const CalibrateArgs& a) {
  refuse_network_flags(a, "--scheduler");
  if (a.inputs.size() != 1) {
    throw flag_error("--scheduler",
                     fmt::format("fits one trace at a time, got {}: one rank's, or the ranks of "
                                 "one run merged (ssgd merge)",
                                 a.inputs.size()));
  }
  const std::string& input = a.inputs.front();
  const sim::SchedulerFit f = sim::fit_scheduler_costs(input, a.allow_truncated);
  std::cout << fmt::format(
      "ssgd calibrate --scheduler: {} collective(s) in {}, {} linked to their launch on {} "
      "rank(s)\n",
      f.collectives, input, f.partitions, f.ranks);
  if (f.partition_overhead) {
    std::cout << fmt::format("  partition_overhead  {}: host time between launches in {} burst(s)\n",
                             summary_text(*f.partition_overhead), f.bursts);
  } else {
    std::cout << "  partition_overhead  not measured: no thread launched two partitions in a row "
                 "(every burst holds one partition)\n";
  }
  std::cout << fmt::format("  schedule_overhead   {}: from free to start\n",
                           summary_text(f.schedule_overhead));
  std::string keys;
  if (f.partition_overhead) {
    keys += fmt::format("--set policy.partition_overhead={}ns ", f.partition_overhead->median.ns());
  }
  keys += fmt::format("--set policy.schedule_overhead={}ns", f.schedule_overhead.median.ns());
  std::cout << "\nscenario keys: " << keys << "\n";
  if (a.output.given()) {
    write_output(a.output, [&] {
      AtomicFile file(a.output.path);
      std::ostream& out = file.stream();
      out << "# ssgd calibrate --scheduler: a partitioning scheduler's costs (docs/policies.md)\n";
      out << "# medians over " << f.partitions << " partition(s) of " << comment_safe(input) << "\n";
      out << "policy:\n";
      if (f.partition_overhead) {
        out << fmt::format("  partition_overhead: {}ns\n", f.partition_overhead->median.ns());
      }
      out << fmt::format("  schedule_overhead: {}ns\n", f.schedule_overhead.median.ns());
      file.commit();
    });
    std::cout << fmt::format("wrote {} (the keys, as a scenario)\n", a.output.path);
  }
  std::cout.flush();
}

void print_nic_curve(const sim::NicFitCurve& c, std::ostream& out) {
  out << fmt::format("\n{} {} over {} ranks ({} node(s)) from {}\n", c.fitted ? "fitted:" : "predicted:",
                     to_string(c.op), c.ranks, c.nodes, fmt::join(c.sources, ", "));
  out << fmt::format("  {:>12} {:>12} {:>12} {:>8} {:>10} {:>10} {:>7}  {}\n", "size", "measured",
                     "predicted", "error", "busbw", "predicted", "", "algorithm");
  const double factor = sim::bus_bandwidth_factor(c.op, c.ranks);
  for (const auto& p : c.points) {
    const auto m = static_cast<double>(p.measured.ns());
    const auto t = static_cast<double>(p.predicted.ns());
    const std::string how = p.protocol.empty()
                                ? p.algorithm
                                : fmt::format("{} {} {} ch", p.algorithm, p.protocol, p.channels);
    out << fmt::format("  {:>12} {:>12} {:>12} {:>+7.1f}% {:>10} {:>10} {:>7}  {}\n", size_label(p.bytes),
                       format_duration(p.measured), format_duration(p.predicted), 100 * (t - m) / m,
                       format_rate(p.bytes / (m * 1e-9) * factor),
                       format_rate(p.bytes / (t * 1e-9) * factor), "", how);
  }
  out << fmt::format("  {} sizes: median error {}, max {}\n", c.points.size(), percent(c.median_error),
                     percent(c.max_error));
}

// --nic: the scenario platform's NIC (bandwidth and latency) fitted to the
// inputs through the scenario's model; --predict's files are predicted.
void run_nic_fit(const CalibrateArgs& a, const trace::MeasurementOptions& mo) {
  const std::pair<bool, const char*> band_flags[] = {
      {!a.bands.empty(), "--bands"},          {a.max_bands_given, "--max-bands"},
      {a.holdout != 0, "--holdout"},          {a.per_ranks, "--per-ranks"},
      {!a.tcp_streams.empty(), "--tcp-streams"}, {!a.line_rate.empty(), "--line-rate"},
      {a.level != "inter_node", "--level"},   {a.algorithm != "ring", "--algorithm"}};
  for (const auto& [given, flag] : band_flags) {
    if (given) {
      throw flag_error(flag,
                       "does not apply with --nic (it fits the platform's NIC through the "
                       "scenario's model; set the algorithm with --set network.algorithm or "
                       "network.nccl_algo, and use --predict for curves to check)");
    }
  }
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
      "\nplatform {}, {} NIC(s) a node: bandwidth x {:.4f} = {} (was {}), latency x {:.4f} = {} (was "
      "{}); {} models searched\n",
      r.platform, r.nics, r.bandwidth_factor, format_rate(r.bandwidth), format_rate(r.base_bandwidth),
      r.latency_factor, format_duration(r.latency), format_duration(r.base_latency), r.evaluations);
  if (!r.latency_fitted) std::cout << "  note: the NIC has no latency to scale; only its bandwidth is fitted\n";
  if (r.bandwidth_at_edge) {
    std::cout << fmt::format(
        "  note: the bandwidth is at the edge of the search ({}x the platform's NIC to its line "
        "rate, x {:.4f}): the curves may not be bound by the NIC, or the platform may be the wrong "
        "one\n",
        sim::kNicFitBandwidthLow, r.line_factor);
  }
  if (r.latency_at_edge) {
    std::cout << "  note: the latency is at the edge of the search (100 ns to 1 ms): the curves say "
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
  std::cout << fmt::format("\nscenario keys: --set perturb.bandwidth_factors={} --set perturb.latency_factors={}\n",
                           bw, lat);
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
    std::cout << fmt::format("wrote {} (the keys, as a scenario; add your own platform keys to it)\n",
                             a.output.path);
  }
  std::cout.flush();
}

void run_calibrate(const CalibrateArgs& a) {
  check_outputs({&a.output}, a.inputs);
  if (!a.nic) {
    if (!a.predict.empty()) throw flag_error("--predict", "applies only with --nic");
    if (!a.scenario.file.empty()) throw flag_error("--scenario", a.scenario.file, "applies only with --nic");
    if (!a.scenario.sets.empty()) throw flag_error("--set", a.scenario.sets.front(), "applies only with --nic");
  } else if (a.scheduler) {
    throw flag_error("--scheduler", "does not apply with --nic");
  } else if (a.interference) {
    throw flag_error("--interference", "does not apply with --nic");
  }
  if (a.scheduler && a.interference) {
    throw flag_error("--interference", "does not apply with --scheduler (one fit at a time)");
  }
  check_inputs(a.inputs, "INPUT");
  if (a.scheduler) {
    run_scheduler_fit(a);
    return;
  }
  if (!a.alone_calibration.empty() && !a.interference) {
    throw flag_error("--calibration", a.alone_calibration, "applies only with --interference");
  }
  if (a.interference) {
    refuse_network_flags(a, "--interference");
    run_interference_fit(a.inputs, a.output, a.allow_truncated, a.alone_calibration);
    return;
  }
  trace::MeasurementOptions mo;
  const auto format = trace::parse_measurement_format(a.format);
  if (!format) {
    throw flag_error("--format", a.format,
                     fmt::format("unknown format '{}'; expected one of {}", a.format,
                                 trace::measurement_format_names()));
  }
  mo.format = *format;
  mo.in_place = a.in_place;
  mo.allow_truncated = a.allow_truncated;
  if (!a.op.empty()) {
    mo.op = sim::parse_collective_op(a.op);
    if (!mo.op) {
      throw flag_error(
          "--op", a.op,
          fmt::format("unknown op '{}'; expected one of {}", a.op, sim::collective_op_names()));
    }
  }
  if (a.ranks != 0) {
    if (a.ranks < 2 || a.ranks > trace::kMaxMeasuredRanks) {
      throw flag_error("--ranks", std::to_string(a.ranks),
                       fmt::format("must be from 2 to {}", trace::kMaxMeasuredRanks));
    }
    mo.ranks = a.ranks;
  }
  sim::FitOptions fo;
  const auto algorithm = sim::parse_collective_algorithm(a.algorithm);
  if (!algorithm || *algorithm == sim::CollectiveAlgorithm::kAuto) {
    throw flag_error("--algorithm", a.algorithm,
                     fmt::format("unknown algorithm '{}'; expected one of {}", a.algorithm,
                                 sim::calibration_algorithm_names()));
  }
  fo.algorithm = *algorithm;
  if (a.nic) {
    run_nic_fit(a, mo);
    return;
  }
  if (a.max_bands < 1 || a.max_bands > 16) {
    throw flag_error("--max-bands", std::to_string(a.max_bands), "must be between 1 and 16");
  }
  fo.max_bands = a.max_bands;
  if (a.holdout < 0 || a.holdout == 1) {
    throw flag_error("--holdout", std::to_string(a.holdout), "must be 0 (none) or at least 2");
  }
  fo.holdout = a.holdout;
  if (!a.bands.empty()) fo.boundaries = parse_band_limits(a.bands);
  if (a.level != "inter_node" && a.level != "intra_node") {
    throw flag_error("--level", a.level,
                     fmt::format("unknown level '{}'; expected inter_node or intra_node", a.level));
  }

  if (!a.line_rate.empty() && a.tcp_streams.empty()) {
    throw flag_error("--line-rate", a.line_rate, "applies only with --tcp-streams");
  }
  if (!a.tcp_streams.empty()) {
    parse_tcp_streams(a.tcp_streams);
    if (!a.line_rate.empty()) parse_line_rate(a.line_rate);
    if (!a.bands.empty()) {
      throw flag_error("--bands", a.bands, "does not apply with --tcp-streams (no bands are fitted)");
    }
    if (a.max_bands_given) {
      throw flag_error("--max-bands", std::to_string(a.max_bands),
                       "does not apply with --tcp-streams (no bands are fitted)");
    }
    if (a.level != "inter_node") {
      throw flag_error("--level", a.level,
                       "--tcp-streams fits the NIC's TCP streams: inter_node only");
    }
  }

  // Every file is read and checked before anything is fitted or written.
  std::map<sim::CollectiveOp, std::vector<trace::Measurement>> by_op;
  std::size_t total = 0;
  for (const auto& input : a.inputs) {
    for (auto& m : trace::read_measurements(input, mo)) {
      by_op[m.op].push_back(std::move(m));
      ++total;
    }
  }
  // The algorithm must have terms for every op measured (its fault: the flag
  // is named) and for every rank count (the measurement's: its file and line
  // are named).
  for (const auto& [op, points] : by_op) {
    try {
      sim::alpha_beta_terms(op, fo.algorithm, 2);
    } catch (const std::invalid_argument& e) {
      throw flag_error("--algorithm", a.algorithm, e.what());
    }
    for (const auto& m : points) {
      try {
        sim::alpha_beta_terms(op, fo.algorithm, m.ranks);
      } catch (const std::invalid_argument& e) {
        throw InputError(
            InputLocation{m.source, m.line > 0 ? std::optional<std::int64_t>(m.line) : std::nullopt,
                          std::nullopt, "nranks"},
            fmt::format("{} rank(s) with --algorithm {}: {}", m.ranks, a.algorithm, e.what()));
      }
    }
  }

  // One fit per op over every rank count; with --per-ranks also one per
  // rank count, after it.
  std::vector<std::vector<trace::Measurement>> groups;
  for (auto& [op, points] : by_op) {
    std::map<std::int64_t, std::vector<trace::Measurement>> by_ranks;
    for (const auto& m : points) by_ranks[m.ranks].push_back(m);
    groups.push_back(points);
    if (a.per_ranks && by_ranks.size() > 1) {
      for (auto& [ranks, list] : by_ranks) groups.push_back(std::move(list));
    }
  }
  if (!a.tcp_streams.empty()) {
    run_stream_fit(a, by_op, groups, total);
    return;
  }
  // Every fit is made before anything is printed or written.
  auto fits = fit_groups(groups, [&](const auto& points) { return sim::fit_bands(points, fo); });
  print_read(total, a.inputs.size());
  sim::NetworkCalibration cal;
  cal.level = a.level;
  for (auto& fit : fits) {
    print_fit(fit, fo, std::cout);
    cal.collectives.push_back(std::move(fit.collective));
  }
  if (a.output.given()) {
    write_output(a.output, [&] { sim::write_network_calibration(cal, a.output.path); });
    std::cout << fmt::format("\nwrote {} ({} level; use it with --set network.calibration={})\n",
                             a.output.path, a.level, a.output.path);
  }
  std::cout.flush();
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit per-size-band alpha-beta network costs to OSU, nccl-tests or trace measurements "
      "(docs/calibration.md)");
  cmd->add_option("INPUT", args->inputs,
                  "measurement files: OSU latency log, nccl-tests text or JSON output, ssgd trace")
      ->required();
  add_output_option(*cmd, args->output, "-o,--output",
                    "write the network calibration file (YAML) here");
  cmd->add_option("--format", args->format,
                  "input format: auto (by content), osu, nccl-tests, nccl-tests-json or trace")
      ->capture_default_str();
  cmd->add_option("--op", args->op,
                  "the collective, for files that do not name it (all_reduce, reduce_scatter, "
                  "all_gather, broadcast, all_to_all)");
  cmd->add_option("--algorithm", args->algorithm,
                  "the algorithm whose alpha-beta terms are fitted (ring, halving_doubling, ...)")
      ->capture_default_str();
  cmd->add_option("--ranks", args->ranks,
                  "ranks, for files and lines that do not say (an OSU log without 'nodes,' "
                  "prefixes, nccl-tests output without '#  Rank' lines)");
  cmd->add_option("--bands", args->bands,
                  "band limits, e.g. 8KiB,256KiB (default: found by the fit)");
  cmd->add_option("--max-bands", args->max_bands, "most bands the search may use")
      ->capture_default_str()
      ->each([args](const std::string&) { args->max_bands_given = true; });
  cmd->add_option("--holdout", args->holdout,
                  "validation: keep every N-th size of each rank count out of the fit and report "
                  "how well the fit predicts it");
  cmd->add_option("--level", args->level, "link level the fit describes: inter_node or intra_node")
      ->capture_default_str();
  cmd->add_flag("--per-ranks", args->per_ranks,
                "also fit each rank count on its own; the simulator prefers the fit made for its "
                "rank count and uses the joint fit for others");
  cmd->add_flag("--in-place", args->in_place,
                "nccl-tests: fit the in-place times, not the out-of-place");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  cmd->add_option("--tcp-streams", args->tcp_streams,
                  "fit the TCP stream model (platform.nic.tcp_streams, tcp_stream_rate, latency) "
                  "instead of bands: 'auto' searches 1 to 64 streams, a number fixes them; -o "
                  "writes the keys as a scenario");
  cmd->add_option("--line-rate", args->line_rate,
                  "with --tcp-streams: the NIC's rate (25Gbit/s) or link preset (25gbe) that bounds "
                  "the streams, as in a simulation (default: no bound)");
  cmd->add_flag("--scheduler", args->scheduler,
                "fit a partitioning scheduler's costs (policy.partition_overhead, "
                "policy.schedule_overhead) from one ssgd trace in which every partition is a "
                "collective of its own, instead of network bands; -o writes the keys as a scenario");
  cmd->add_flag("--interference", args->interference,
                "fit the interference factors (interference.gpu.* or interference.host.*) from "
                "ssgd traces: the same kernels or operators and collectives timed alone and "
                "beside the other kind, within one capture or across captures of one model (one "
                "with overlap off); -o writes the keys as a scenario");
  cmd->add_option("--calibration", args->alone_calibration,
                  "with --interference: a network calibration of the same network (ssgd "
                  "calibrate on a sweep) that times the collectives alone, for the comm factor");
  cmd->add_flag("--nic", args->nic,
                "fit the NIC of the scenario's platform (platform.nic.bandwidth, platform.nic.latency) "
                "to the inputs through the scenario's own model (NCCL's communicator by default), "
                "instead of bands; the platform comes from --scenario and --set; -o writes the keys "
                "as a scenario");
  cmd->add_option("--predict", args->predict,
                  "with --nic: measurement files predicted with the fitted NIC, not fitted (other "
                  "node counts of the same system)");
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  cmd->callback([args] { run_calibrate(*args); });
}

}  // namespace ssgd::tools
