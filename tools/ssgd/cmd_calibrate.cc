// ssgd calibrate INPUT... [-o network.yaml] [--allow-truncated]: fits per-size-band alpha-beta
// costs to measured collective times (simulator/calibration/band_fit.h) and
// writes a network calibration file that scenarios use through
// network.calibration (docs/calibration.md). The flags are checked here;
// the other fits (--tcp-streams, --scheduler, --nic, --interference) are
// each in a file of their own (calibrate_fits.h).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/units.h"
#include "simulator/calibration/band_fit.h"
#include "simulator/calibration/network_calibration.h"
#include "tools/ssgd/calibrate_fits.h"
#include "tools/ssgd/calibrate_interference.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/import/measurement_files.h"

namespace ssgd::tools {
namespace {

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

// "<= 8.0 KiB", "8.0 KiB - 256.0 KiB", "> 256.0 KiB", or "all sizes".
std::string band_range(const sim::CalibratedCollective& c, std::size_t b) {
  const auto& bands = c.bands;
  if (bands.size() == 1) return "all sizes";
  if (b == 0) return "<= " + size_label(bands[0].max_bytes);
  if (b + 1 == bands.size()) return "> " + size_label(bands[b - 1].max_bytes);
  return size_label(bands[b - 1].max_bytes) + " - " + size_label(bands[b].max_bytes);
}

// A fitted point this far off its band is named: a spike in the benchmark
// (a scheduler's slice, another job) or another regime the bands do not have.
constexpr double kNamedPointError = 0.5;

void print_fit(const sim::FitResult& fit, const sim::FitOptions& options,
               const std::vector<trace::Measurement>& points, std::ostream& out) {
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
  // The worst point, where it is far off: a reader should look at it.
  const trace::Measurement* worst = nullptr;
  Duration worst_fitted;
  double worst_error = 0;
  for (const auto& m : points) {
    const double measured = static_cast<double>(m.time.ns());
    if (measured <= 0) continue;
    const Duration fitted = sim::predict(c, m.ranks, m.bytes);
    const double error = (static_cast<double>(fitted.ns()) - measured) / measured;
    if (std::abs(error) > std::abs(worst_error)) {
      worst = &m;
      worst_fitted = fitted;
      worst_error = error;
    }
  }
  if (worst != nullptr && std::abs(worst_error) > kNamedPointError) {
    const std::string where =
        worst->line > 0 ? fmt::format("{}:{}", worst->source, worst->line) : worst->source;
    out << fmt::format(
        "  note: {}: {} over {} ranks measured {}, the fit gives {} ({:+.0f}%{}): a spike in the "
        "benchmark or a regime the bands do not follow; check it\n",
        where, size_label(worst->bytes), worst->ranks, format_duration(worst->time),
        format_duration(worst_fitted), 100 * worst_error,
        options.holdout > 0 ? ", fitted or held back" : "");
  }
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
  for (std::size_t i = 0; i < fits.size(); ++i) {
    print_fit(fits[i], fo, groups[i], std::cout);
    cal.collectives.push_back(std::move(fits[i].collective));
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
                  "calibrate on a sweep) that times the collectives alone, for the comm factor "
                  "and, on host traces, interference.host.concurrent (collectives run beside "
                  "others of their rank against one at a time)");
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
