// ssgd optimize INPUT --param KEY (--values LIST | --from A --to B [--points N] [--linear])
//                     [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//
// Searches one scenario key (a policy parameter such as policy.bucket_cap,
// or any int, size, duration or number key) for the setting with the
// shortest steady-state iteration time: each candidate is the scenario
// with `--set KEY=value` added last, replayed in full. Prints the curve it
// searched and the best setting; --report writes both as JSON.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/units.h"
#include "simulator/replay/replay.h"
#include "simulator/input/replay_input.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_schema.h"
#include "tools/ssgd/commands.h"
#include "tools/ssgd/output_path.h"

namespace ssgd::tools {
namespace {

struct OptimizeArgs {
  std::string input;
  std::string scenario;
  std::vector<std::string> sets;
  std::string param;
  std::string values;
  std::string from, to;
  std::int64_t points = 20;
  bool linear = false;
  std::string report;
};

constexpr std::int64_t kMaxPoints = 10'000;

InputError flag_error(const std::string& flag, const std::string& reason) {
  return InputError({"command line", std::nullopt, std::nullopt, flag}, reason);
}

// A value of the key's type as a number, for spacing candidates.
double to_number(const sim::ScenarioKey& key, const std::string& text, const std::string& flag) {
  try {
    if (key.type == "size") return static_cast<double>(parse_bytes(text));
    if (key.type == "duration") return static_cast<double>(parse_duration(text).ns());
    if (key.type == "rate") return parse_rate_bytes_per_s(text);
    if (key.type == "int") {
      std::int64_t v = 0;
      const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size()) {
        throw std::invalid_argument(fmt::format("expected an integer, got '{}'", text));
      }
      return static_cast<double>(v);
    }
    if (key.type == "number") {
      std::size_t used = 0;
      const double v = std::stod(text, &used);
      if (used != text.size()) throw std::invalid_argument(fmt::format("expected a number, got '{}'", text));
      return v;
    }
  } catch (const std::invalid_argument& e) {
    throw flag_error(flag, e.what());
  } catch (const std::out_of_range&) {
    throw flag_error(flag, fmt::format("'{}' is out of range", text));
  }
  throw flag_error("--param", fmt::format("'{}' is a {} key: --from/--to need an int, number, size, "
                                          "duration or rate key; give --values instead",
                                          key.path, key.type));
}

// The number written back in the key's units.
std::string to_text(const sim::ScenarioKey& key, double v) {
  if (key.type == "size") return fmt::format("{}B", std::llround(v));
  if (key.type == "duration") return fmt::format("{}ns", std::llround(v));
  if (key.type == "rate") return fmt::format("{}B/s", std::llround(v));
  if (key.type == "int") return fmt::format("{}", std::llround(v));
  return fmt::format("{}", v);
}

std::vector<std::string> candidates(const OptimizeArgs& a, const sim::ScenarioKey& key) {
  std::vector<std::string> out;
  if (!a.values.empty()) {
    if (!a.from.empty() || !a.to.empty()) {
      throw flag_error("--values", "give either --values or --from and --to, not both");
    }
    for (const auto v : split_list(a.values)) {
      if (v.empty()) throw flag_error("--values", fmt::format("empty value in '{}'", a.values));
      out.emplace_back(v);
    }
    return out;
  }
  if (a.from.empty() || a.to.empty()) {
    throw flag_error("--from", "give the values to search: --values LIST, or --from A --to B");
  }
  if (a.points < 2 || a.points > kMaxPoints) {
    throw flag_error("--points", fmt::format("must be between 2 and {}, got {}", kMaxPoints, a.points));
  }
  const double lo = to_number(key, a.from, "--from");
  const double hi = to_number(key, a.to, "--to");
  if (!(hi > lo)) throw flag_error("--to", fmt::format("must be above --from ({} <= {})", a.to, a.from));
  const bool geometric = !a.linear && lo > 0;
  for (std::int64_t i = 0; i < a.points; ++i) {
    const double f = static_cast<double>(i) / static_cast<double>(a.points - 1);
    const double v = geometric ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f;
    std::string text = to_text(key, v);
    if (out.empty() || out.back() != text) out.push_back(std::move(text));  // rounding may repeat
  }
  return out;
}

struct Point {
  std::string value;
  sim::ReplayResult result;
};

void run_optimize(const OptimizeArgs& a) {
  auto log = logger("tools");
  check_output_path(a.report, "--report");
  const sim::ScenarioKey* key = sim::find_scenario_key(a.param);
  if (key == nullptr) {
    throw flag_error("--param", fmt::format("unknown scenario key '{}' (`ssgd presets` lists them)",
                                            a.param));
  }
  const std::vector<std::string> values = candidates(a, *key);
  const std::optional<std::filesystem::path> scenario_file =
      a.scenario.empty() ? std::nullopt : std::optional<std::filesystem::path>(a.scenario);
  // Every candidate is checked before anything runs, so a bad one fails at once.
  std::vector<sim::Scenario> scenarios;
  for (const auto& v : values) {
    std::vector<std::string> sets = a.sets;
    sets.push_back(a.param + "=" + v);
    scenarios.push_back(sim::load_scenario(scenario_file, sets));
  }
  const sim::Scenario base = sim::load_scenario(scenario_file, a.sets);
  sim::ReplayInput input = sim::load_replay_input(a.input);
  for (const auto& w : input.warnings) log->warn("{}", w);

  sim::ReplayOptions options;
  options.single_worker_baseline = false;
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  std::vector<Point> curve;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    curve.push_back({values[i], sim::replay(input.profile, scenarios[i], options)});
    const auto now = std::chrono::steady_clock::now();
    if (now - last > std::chrono::seconds(2)) {
      last = now;
      log->info("optimize: {} of {} settings replayed", i + 1, scenarios.size());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const sim::ReplayResult as_given = sim::replay(input.profile, base, options);
  // The best: the shortest iteration; ties to the first value tried.
  std::size_t best = 0;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    if (curve[i].result.iteration_time < curve[best].result.iteration_time) best = i;
  }

  if (!a.report.empty()) {
    nlohmann::json j;
    j["param"] = a.param;
    j["input"] = a.input;
    j["scenario_file"] = a.scenario;
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& p : curve) {
      pts.push_back({{"value", p.value},
                     {"iteration_time_ns", p.result.iteration_time.ns()},
                     {"throughput_samples_per_s", p.result.throughput_samples_per_s},
                     {"collectives_per_iteration", p.result.collectives_per_iteration},
                     {"exposed_comm_ns", p.result.breakdown.exposed_comm.ns()}});
    }
    j["curve"] = pts;
    j["best"] = {{"value", curve[best].value},
                 {"iteration_time_ns", curve[best].result.iteration_time.ns()}};
    j["as_given_iteration_time_ns"] = as_given.iteration_time.ns();
    AtomicFile file(a.report);
    file.stream() << j.dump(2) << "\n";
    file.commit();
  }

  std::cout << fmt::format("ssgd optimize: {} for {} ({} workers, policy {}), {} settings\n",
                           a.param, input.profile.model.empty() ? a.input : input.profile.model,
                           base.workers(), sim::to_string(base.overlap), curve.size());
  std::cout << fmt::format("  {:>16} {:>14} {:>14} {:>12}\n", "value", "iteration", "exposed comm",
                           "collectives");
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const auto& r = curve[i].result;
    std::cout << fmt::format("  {:>16} {:>14} {:>14} {:>12}{}\n", curve[i].value,
                             format_duration(r.iteration_time), format_duration(r.breakdown.exposed_comm),
                             r.collectives_per_iteration, i == best ? "  <- best" : "");
  }
  const auto& b = curve[best].result;
  const double gain = as_given.iteration_time.ns() > 0
                          ? 100.0 * (1.0 - static_cast<double>(b.iteration_time.ns()) /
                                               static_cast<double>(as_given.iteration_time.ns()))
                          : 0.0;
  std::cout << fmt::format("\n  best: --set {}={}: iteration {} ({:+.1f}% vs the scenario as given, {})\n",
                           a.param, curve[best].value, format_duration(b.iteration_time), -gain,
                           format_duration(as_given.iteration_time));
  std::cout << fmt::format("  searched {} settings in {:.2f} s\n", curve.size(), seconds);
  if (!a.report.empty()) log->info("report written to {}", a.report);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  auto* cmd = app.add_subcommand(
      "optimize", "Search one scenario key (e.g. policy.bucket_cap) for the fastest iteration");
  cmd->add_option("INPUT", args->input, "ssgd trace, layer-profile CSV or B-Caffe log")->required();
  cmd->add_option("--param", args->param, "the scenario key to search, e.g. policy.bucket_cap")
      ->required();
  cmd->add_option("--values", args->values, "comma-separated values to try");
  cmd->add_option("--from", args->from, "smallest value (int, number, size, duration or rate key)");
  cmd->add_option("--to", args->to, "largest value");
  cmd->add_option("--points", args->points, "values from --from to --to")->capture_default_str();
  cmd->add_flag("--linear", args->linear, "space them evenly (default: geometrically)");
  cmd->add_option("--scenario", args->scenario, "scenario YAML file (see scenarios/README.md)");
  cmd->add_option("--set", args->sets, "override a scenario key: key.path=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--report", args->report, "write the curve and the best value as JSON here");
  cmd->callback([args] { run_optimize(*args); });
}

}  // namespace ssgd::tools
