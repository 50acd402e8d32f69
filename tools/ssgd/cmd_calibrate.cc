// ssgd calibrate INPUT... [-o network.yaml]: fits per-size-band alpha-beta
// costs to measured collective times (simulator/calibration/band_fit.h) and
// writes a network calibration file that scenarios use through
// network.calibration.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "common/error.h"
#include "common/units.h"
#include "simulator/calibration/band_fit.h"
#include "simulator/calibration/measurement.h"
#include "simulator/calibration/network_calibration.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct CalibrateArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string format = "auto";
  std::string op;
  std::string algorithm = "ring";
  std::int64_t ranks = 0;
  std::string bands;
  std::int64_t max_bands = 4;
  std::int64_t holdout = 0;
  std::string level = "inter_node";
  bool per_ranks = false;
};

InputError flag_error(const std::string& flag, const std::string& why) {
  return InputError(InputLocation{flag, std::nullopt, std::nullopt, ""}, why);
}

void run(const CalibrateArgs& a) {
  sim::MeasurementOptions mo;
  const auto format = sim::parse_measurement_format(a.format);
  if (!format) {
    throw flag_error("--format", fmt::format("unknown format '{}'; expected auto, osu, nccl-tests, "
                                             "nccl-tests-json or trace", a.format));
  }
  mo.format = *format;
  if (!a.op.empty()) {
    mo.op = sim::parse_collective_op(a.op);
    if (!mo.op) {
      throw flag_error("--op", fmt::format("unknown op '{}'; known: {}", a.op, sim::collective_op_names()));
    }
  }
  if (a.ranks < 0) throw flag_error("--ranks", "must be at least 1");
  if (a.ranks > 0) mo.ranks = a.ranks;
  sim::FitOptions fo;
  const auto algorithm = sim::parse_collective_algorithm(a.algorithm);
  if (!algorithm || *algorithm == sim::CollectiveAlgorithm::kAuto) {
    throw flag_error("--algorithm", fmt::format("unknown algorithm '{}'; known: {} (not auto)", a.algorithm,
                                                sim::collective_algorithm_names()));
  }
  fo.algorithm = *algorithm;
  if (a.max_bands < 1 || a.max_bands > 16) throw flag_error("--max-bands", "must be between 1 and 16");
  fo.max_bands = a.max_bands;
  if (a.holdout < 0 || a.holdout == 1) throw flag_error("--holdout", "must be 0 (none) or at least 2");
  fo.holdout = a.holdout;
  if (!a.bands.empty()) {
    std::size_t pos = 0;
    while (pos <= a.bands.size()) {
      const auto comma = a.bands.find(',', pos);
      const std::string item = a.bands.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      try {
        fo.boundaries.push_back(static_cast<double>(parse_bytes(item)));
      } catch (const std::invalid_argument& e) {
        throw flag_error("--bands", e.what());
      }
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    if (!std::is_sorted(fo.boundaries.begin(), fo.boundaries.end())) {
      throw flag_error("--bands", "boundaries must be in increasing order");
    }
  }
  if (a.level != "inter_node" && a.level != "intra_node") {
    throw flag_error("--level", "expected inter_node or intra_node");
  }
  // Points by op: one fit each.
  // One fit per op, or per op and rank count with --per-ranks.
  std::map<std::pair<sim::CollectiveOp, std::int64_t>, std::vector<sim::Measurement>> by_op;
  std::size_t total = 0;
  for (const auto& input : a.inputs) {
    for (auto& m : sim::read_measurements(input, mo)) {
      by_op[{m.op, a.per_ranks ? m.ranks : 0}].push_back(std::move(m));
      ++total;
    }
  }
  sim::NetworkCalibration cal;
  cal.level = a.level;
  std::cout << fmt::format("ssgd calibrate: {} measurements from {} file(s), {} terms\n", total,
                           a.inputs.size(), sim::to_string(fo.algorithm));
  for (const auto& [key, points] : by_op) {
    const sim::CollectiveOp op = key.first;
    sim::FitResult fit;
    try {
      fit = sim::fit_bands(points, fo);
    } catch (const std::invalid_argument& e) {
      throw InputError(InputLocation{a.inputs.front(), std::nullopt, std::nullopt, sim::to_string(op)}, e.what());
    }
    std::string ranks;
    for (auto r : fit.collective.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    std::cout << fmt::format("\n  {} over {} ranks:\n", sim::to_string(op), ranks);
    std::cout << fmt::format("  {:>12} {:>12} {:>12} {:>7} {:>8} {:>8}\n", "up to", "alpha", "bandwidth",
                             "points", "median", "max");
    for (const auto& b : fit.collective.bands) {
      std::cout << fmt::format("  {:>12} {:>12} {:>12} {:>7} {:>7.1f}% {:>7.1f}%\n",
                               std::isinf(b.max_bytes) ? std::string("-") : format_bytes(static_cast<std::int64_t>(b.max_bytes)),
                               format_duration(b.latency), format_rate(b.bandwidth_bytes_per_s), b.points,
                               100 * b.median_error, 100 * b.max_error);
    }
    for (const auto& h : fit.holdout) {
      std::cout << fmt::format("  held back, {} ranks: {} sizes, median error {:.1f}%, max {:.1f}%\n", h.ranks,
                               h.points, 100 * h.median_error, 100 * h.max_error);
    }
    cal.collectives.push_back(std::move(fit.collective));
  }
  if (!a.output.empty()) {
    sim::write_network_calibration(cal, a.output);
    std::cout << fmt::format("\n  wrote {}\n", a.output);
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit per-size-band alpha-beta network costs to OSU, nccl-tests or trace measurements");
  cmd->add_option("inputs", args->inputs, "measurement files (OSU log, nccl-tests text or JSON, ssgd trace)")
      ->required();
  cmd->add_option("-o,--output", args->output, "write the network calibration file here");
  cmd->add_option("--format", args->format, "auto, osu, nccl-tests, nccl-tests-json or trace (default auto)");
  cmd->add_option("--op", args->op, "the collective, when the files do not say (all_reduce, ...)");
  cmd->add_option("--algorithm", args->algorithm, "whose alpha-beta terms to fit (default ring)");
  cmd->add_option("--ranks", args->ranks, "ranks, when the files do not say");
  cmd->add_option("--bands", args->bands, "band limits, e.g. 8KiB,256KiB (default: found by the fit)");
  cmd->add_option("--max-bands", args->max_bands, "most bands the search may use (default 4)");
  cmd->add_option("--holdout", args->holdout, "keep every N-th size out of the fit and report its error");
  cmd->add_option("--level", args->level, "link level the fit describes: inter_node (default) or intra_node");
  cmd->add_flag("--per-ranks", args->per_ranks,
                "fit each rank count on its own (exact at the measured counts; scenarios with "
                "other counts use a joint fit if the file has one, else the first)");
  cmd->callback([args] { run(*args); });
}

}  // namespace ssgd::tools
