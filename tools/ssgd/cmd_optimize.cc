// ssgd optimize INPUT --param KEY (--values LIST | --from A --to B [--points N] [--linear])
//                     [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//                     [--allow-truncated]
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

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/units.h"
#include "simulator/input/replay_input.h"
#include "simulator/replay/replay.h"
#include "simulator/replay/replay_estimate.h"
#include "simulator/report/optimize_report.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_schema.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct OptimizeArgs {
  std::string input;
  ScenarioOptions scenario;
  std::string param;
  std::string values;
  std::string from, to;
  std::int64_t points = 20;
  bool linear = false;
  OutputFile report;
  bool allow_truncated = false;
  bool allow_large = false;
};

constexpr std::int64_t kMaxPoints = 10'000;

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
    throw flag_error(flag, text, e.what());
  } catch (const std::out_of_range&) {
    throw flag_error(flag, text, "out of range");
  }
  throw flag_error("--param", key.path,
                   fmt::format("a {} key: --from/--to need an int, number, size, duration or "
                               "rate key; give --values instead",
                               key.type));
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
      throw flag_error("--values", a.values, "give either --values or --from and --to, not both");
    }
    for (const auto v : split_list(a.values)) {
      if (v.empty()) throw flag_error("--values", a.values, "an empty value");
      out.emplace_back(v);
    }
    return out;
  }
  if (a.from.empty() || a.to.empty()) {
    throw flag_error("--from", "give the values to search: --values LIST, or --from A --to B");
  }
  if (a.points < 2 || a.points > kMaxPoints) {
    throw flag_error("--points", std::to_string(a.points),
                     fmt::format("must be between 2 and {}", kMaxPoints));
  }
  const double lo = to_number(key, a.from, "--from");
  const double hi = to_number(key, a.to, "--to");
  if (!(hi > lo)) {
    throw flag_error("--to", a.to, fmt::format("must be above --from ({} <= {})", a.to, a.from));
  }
  const bool geometric = !a.linear && lo > 0;
  for (std::int64_t i = 0; i < a.points; ++i) {
    const double f = static_cast<double>(i) / static_cast<double>(a.points - 1);
    const double v = geometric ? lo * std::pow(hi / lo, f) : lo + (hi - lo) * f;
    std::string text = to_text(key, v);
    if (out.empty() || out.back() != text) out.push_back(std::move(text));  // rounding may repeat
  }
  return out;
}

// A candidate's figures, as the report and the table show them.
sim::OptimizePoint point(const std::string& value, const sim::ReplayResult& r) {
  return {value, r.iteration_time, r.throughput_samples_per_s, r.collectives_per_iteration,
          r.breakdown.exposed_comm};
}

void print_curve(const OptimizeArgs& a, const std::string& model, const sim::Scenario& base,
                 const sim::OptimizeResult& r, double seconds, std::ostream& out) {
  out << fmt::format("ssgd optimize: {} for {} ({} workers, policy {}), {} settings\n", a.param,
                     model.empty() ? a.input : model, base.workers(),
                     sim::to_string(base.overlap), r.curve.size());
  out << fmt::format("  {:>16} {:>14} {:>14} {:>12}\n", "value", "iteration", "exposed comm",
                     "collectives");
  for (std::size_t i = 0; i < r.curve.size(); ++i) {
    const sim::OptimizePoint& p = r.curve[i];
    out << fmt::format("  {:>16} {:>14} {:>14} {:>12}{}\n", p.value,
                       format_duration(p.iteration_time), format_duration(p.exposed_comm),
                       p.collectives_per_iteration, i == r.best ? "  <- best" : "");
  }
  const sim::OptimizePoint& b = r.curve[r.best];
  const std::int64_t as_given = r.as_given_iteration_time.ns();
  const double gain = as_given > 0 ? 100.0 * (1.0 - static_cast<double>(b.iteration_time.ns()) /
                                                        static_cast<double>(as_given))
                                   : 0.0;
  out << fmt::format(
      "\n  best: --set {}={}: iteration {} ({:+.1f}% vs the scenario as given, {})\n", a.param,
      b.value, format_duration(b.iteration_time), -gain,
      format_duration(r.as_given_iteration_time));
  out << fmt::format("  searched {} settings in {:.2f} s\n", r.curve.size(), seconds);
}

void run_optimize(const OptimizeArgs& a) {
  auto log = logger("tools");
  check_outputs({&a.report}, {a.input, a.scenario.file});
  check_input(a.input, "INPUT");
  const sim::ScenarioKey* key = sim::find_scenario_key(a.param);
  if (key == nullptr) {
    throw flag_error("--param", a.param,
                     fmt::format("unknown scenario key '{}' (`ssgd presets` lists them)", a.param));
  }
  const std::vector<std::string> values = candidates(a, *key);
  // The scenario as given first: a bad --set or scenario file is named as such.
  const sim::Scenario base = load_scenario(a.scenario);
  // Every candidate is checked before anything runs, so a bad one fails at
  // once, naming the flag that gave it: --values, or --from and --to (the
  // ends first, so that an end out of the key's range is named as that end).
  const auto candidate = [&](const std::string& value, const std::string& flag,
                             const std::string& given) {
    try {
      return load_scenario(a.scenario, {a.param + "=" + value});
    } catch (const InputError& e) {
      throw flag_error(flag, given, fmt::format("{}={}: {}", a.param, value, e.reason()));
    }
  };
  if (a.values.empty()) {
    candidate(a.from, "--from", a.from);
    candidate(a.to, "--to", a.to);
  }
  std::vector<sim::Scenario> scenarios;
  for (const auto& v : values) {
    scenarios.push_back(a.values.empty() ? candidate(v, "--from", a.from)
                                         : candidate(v, "--values", a.values));
  }
  sim::ReplayInput input = sim::load_replay_input(a.input, {a.allow_truncated});
  for (const auto& w : input.warnings) log->warn("{}", w);

  sim::ReplayOptions options;
  options.single_worker_baseline = false;
  options.allow_large = a.allow_large;
  // Every run is estimated before the first (simulator/replay/replay_estimate.h):
  // the scenario as given at the key that drives it, each candidate at the
  // flag that gave it.
  double seconds_estimate = 0;
  const auto estimate = [&](const sim::Scenario& s) {
    return sim::with_located_errors(
        s, [&] { return sim::estimate_replay(input.profile, s, options); });
  };
  {
    const sim::ReplayEstimate e = estimate(base);
    seconds_estimate += e.seconds;
    sim::with_located_errors(base, [&] { sim::check_fits(e, a.allow_large); });
  }
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const sim::ReplayEstimate e = estimate(scenarios[i]);
    seconds_estimate += e.seconds;
    if (a.allow_large) continue;
    if (const auto why = sim::too_large(e)) {
      const bool listed = !a.values.empty();
      throw flag_error(listed ? "--values" : "--from", listed ? a.values : a.from,
                       fmt::format("{}={}: {}; leave out values this large, or give "
                                   "--allow-large to run anyway",
                                   a.param, values[i], *why));
    }
  }
  if (seconds_estimate > 2) {
    log->info("optimize: {} settings, about {:.0f} s in all (estimate)", scenarios.size() + 1,
              seconds_estimate);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  sim::OptimizeResult result{a.param, a.input, a.scenario.file, {}, 0, {}};
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    result.curve.push_back(point(values[i], sim::replay(input.profile, scenarios[i], options)));
    const auto now = std::chrono::steady_clock::now();
    if (now - last > std::chrono::seconds(2)) {
      last = now;
      log->info("optimize: {} of {} settings replayed", i + 1, scenarios.size());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.as_given_iteration_time = sim::replay(input.profile, base, options).iteration_time;
  // The best: the shortest iteration; ties to the first value tried.
  for (std::size_t i = 1; i < result.curve.size(); ++i) {
    if (result.curve[i].iteration_time < result.curve[result.best].iteration_time) result.best = i;
  }

  if (a.report.given()) {
    const std::string report = json_report_text(sim::optimize_report_json(result));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  print_curve(a, input.profile.model, base, result, seconds, std::cout);
  if (a.report.given()) log->info("report written to {}", a.report.path);
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
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  add_output_option(*cmd, args->report, "--report",
                    "write the curve and the best value as JSON here");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->callback([args] { run_optimize(*args); });
}

}  // namespace ssgd::tools
