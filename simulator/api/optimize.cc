#include "simulator/api/optimize.h"

#include <charconv>
#include <chrono>
#include <initializer_list>
#include <optional>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"
#include "simulator/api/request_error.h"
#include "simulator/replay/replay.h"
#include "simulator/replay/replay_estimate.h"

namespace ssgd::sim {
namespace {

constexpr std::int64_t kMaxPoints = 10'000;

void tell(const std::function<void(const std::string&)>& f, const std::string& line) {
  if (f) f(line);
}

// A value of the key's type as a number, for spacing candidates.
double to_number(const ScenarioKey& key, const std::string& text, const std::string& flag) {
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
      if (used != text.size()) {
        throw std::invalid_argument(fmt::format("expected a number, got '{}'", text));
      }
      return v;
    }
  } catch (const std::invalid_argument& e) {
    throw request_error(flag, text, e.what());
  } catch (const std::out_of_range&) {
    throw request_error(flag, text, "out of range");
  }
  throw request_error("--param", key.path,
                      fmt::format("a {} key: --from/--to need an int, number, size, duration or "
                                  "rate key; give --values instead",
                                  key.type));
}

// `n` in the largest of `units` (factor, suffix; largest first) that divides
// it exactly, so that the text reads back as the same number.
std::string exact_in(std::int64_t n, std::initializer_list<std::pair<std::int64_t, const char*>> units,
                     const char* base) {
  for (const auto& [factor, suffix] : units) {
    if (n != 0 && n % factor == 0) return fmt::format("{}{}", n / factor, suffix);
  }
  return fmt::format("{}{}", n, base);
}

// The number written back in the key's units, in the largest unit that
// keeps it exact (16MiB, not 16777216B).
std::string to_text(const ScenarioKey& key, double v) {
  const std::int64_t n = std::llround(v);
  if (key.type == "size") return exact_bytes_text(n);
  if (key.type == "duration") {
    return exact_in(n, {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}}, "ns");
  }
  if (key.type == "rate") {
    return exact_in(n, {{1'000'000'000, "GB/s"}, {1'000'000, "MB/s"}, {1'000, "kB/s"}}, "B/s");
  }
  if (key.type == "int") return fmt::format("{}", std::llround(v));
  return fmt::format("{}", v);
}

std::vector<std::string> candidates(const OptimizeRequest& a, const ScenarioKey& key) {
  std::vector<std::string> out;
  if (!a.values.empty()) {
    if (!a.from.empty() || !a.to.empty()) {
      throw request_error("--values", a.values,
                          "give either --values or --from and --to, not both");
    }
    for (const auto v : split_list(a.values)) {
      if (v.empty()) throw request_error("--values", a.values, "an empty value");
      out.emplace_back(v);
    }
    return out;
  }
  if (a.from.empty() || a.to.empty()) {
    throw request_error("--from", "give the values to search: --values LIST, or --from A --to B");
  }
  if (a.points < 2 || a.points > kMaxPoints) {
    throw request_error("--points", std::to_string(a.points),
                        fmt::format("must be between 2 and {}", kMaxPoints));
  }
  const double lo = to_number(key, a.from, "--from");
  const double hi = to_number(key, a.to, "--to");
  if (!(hi > lo)) {
    throw request_error("--to", a.to, fmt::format("must be above --from ({} <= {})", a.to, a.from));
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
OptimizePoint point(const std::string& value, const ReplayResult& r) {
  OptimizePoint p;
  p.value = value;
  p.iteration_time = r.iteration_time;
  p.throughput_samples_per_s = r.throughput_samples_per_s;
  p.collectives_per_iteration = r.collectives_per_iteration;
  p.exposed_comm = r.breakdown.exposed_comm;
  p.memory_bytes = r.memory.total();
  p.activations_known = r.memory.activations.has_value();
  if (r.gpu_memory > 0) p.fits = r.memory.total() <= r.gpu_memory;
  return p;
}

// The --also keys: each KEY and its values, checked.
std::vector<std::pair<std::string, std::vector<std::string>>> also_keys(const OptimizeRequest& a) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const std::string& entry : a.also) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq + 1 == entry.size()) {
      throw request_error("--also", entry, "expected KEY=V1,V2,...");
    }
    const std::string key = entry.substr(0, eq);
    if (find_scenario_key(key) == nullptr) {
      throw request_error("--also", entry,
                          fmt::format("unknown scenario key '{}' (`ssgd presets` lists them)", key));
    }
    if (key == a.param) throw request_error("--also", entry, "the key --param searches already");
    std::vector<std::string> values;
    const std::string listed = entry.substr(eq + 1);  // split_list's views point into it
    for (const auto v : split_list(listed)) {
      if (v.empty()) throw request_error("--also", entry, "an empty value");
      values.emplace_back(v);
    }
    out.emplace_back(key, std::move(values));
  }
  return out;
}

}  // namespace

OptimizePlan plan_optimize(const OptimizeRequest& request, const ScenarioLoader& load) {
  const OptimizeRequest& a = request;
  OptimizePlan plan;
  plan.request = request;
  plan.key = find_scenario_key(a.param);
  if (plan.key == nullptr) {
    throw request_error(
        "--param", a.param,
        fmt::format("unknown scenario key '{}' (`ssgd presets` lists them)", a.param));
  }
  const std::vector<std::string> main_values = candidates(a, *plan.key);
  const auto also = also_keys(a);
  // Every combination of the --also values with each value of --param.
  std::vector<std::vector<std::string>> combos = {{}};
  for (const auto& [key, values] : also) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : combos) {
      for (const auto& v : values) {
        next.push_back(c);
        next.back().push_back(key + "=" + v);
      }
    }
    combos = std::move(next);
  }
  if (static_cast<double>(main_values.size()) * static_cast<double>(combos.size()) > kMaxPoints) {
    throw request_error("--also", a.also.back(),
                        fmt::format("{} x {} candidates, more than {}", main_values.size(),
                                    combos.size(), kMaxPoints));
  }
  for (const auto& v : main_values) {
    for (const auto& c : combos) {
      std::vector<std::string> sets = {a.param + "=" + v};
      std::string name = v;
      for (const auto& kv : c) {
        sets.push_back(kv);
        name += " " + kv;
      }
      plan.values.push_back(std::move(name));
      plan.sets.push_back(std::move(sets));
    }
  }
  // The scenario as given first: a bad --set or scenario file is named as such.
  plan.base = load({});
  // Every candidate is checked before anything runs, so a bad one fails at
  // once, naming the flag that gave it: --values, or --from and --to (the
  // ends first, so that an end out of the key's range is named as that end).
  const auto candidate = [&](const std::vector<std::string>& sets, const std::string& flag,
                             const std::string& given) {
    try {
      return load(sets);
    } catch (const InputError& e) {
      std::string which = sets.front();
      for (std::size_t k = 1; k < sets.size(); ++k) which += " " + sets[k];
      // The flag that gave the value the scenario refused.
      const std::string field = e.where().field;
      for (std::size_t k = 1; k < sets.size(); ++k) {
        if (sets[k].rfind(field + "=", 0) == 0) {
          throw request_error("--also", sets[k], fmt::format("{}: {}", which, e.reason()));
        }
      }
      throw request_error(flag, given, fmt::format("{}: {}", which, e.reason()));
    }
  };
  if (a.values.empty()) {
    candidate({a.param + "=" + a.from}, "--from", a.from);
    candidate({a.param + "=" + a.to}, "--to", a.to);
  }
  for (const auto& sets : plan.sets) {
    plan.scenarios.push_back(a.values.empty() ? candidate(sets, "--from", a.from)
                                              : candidate(sets, "--values", a.values));
  }
  return plan;
}

OptimizeRun run_optimize(const SimulationInput& input, const OptimizePlan& plan,
                         const OptimizeOptions& opts) {
  require_profile_input(input);
  const OptimizeRequest& a = plan.request;
  const trace::LayerProfile& profile = input.content.profile;
  ReplayOptions options;
  options.single_worker_baseline = false;
  options.allow_large = opts.allow_large;
  // Every run is estimated before the first (simulator/replay/replay_estimate.h):
  // the scenario as given at the key that drives it, each candidate at the
  // flag that gave it.
  double seconds_estimate = 0;
  const auto estimate = [&](const Scenario& s) {
    return with_located_errors(s, [&] { return estimate_replay(profile, s, options); });
  };
  {
    const ReplayEstimate e = estimate(plan.base);
    seconds_estimate += e.seconds;
    with_located_errors(plan.base, [&] { check_fits(e, opts.allow_large); });
  }
  for (std::size_t i = 0; i < plan.scenarios.size(); ++i) {
    const ReplayEstimate e = estimate(plan.scenarios[i]);
    seconds_estimate += e.seconds;
    if (opts.allow_large) continue;
    if (const auto why = too_large(e)) {
      const bool listed = !a.values.empty();
      throw request_error(listed ? "--values" : "--from", listed ? a.values : a.from,
                          fmt::format("{}={}: {}; leave out values this large, or give "
                                      "--allow-large to run anyway",
                                      a.param, plan.values[i], *why));
    }
  }
  if (seconds_estimate > 2) {
    tell(opts.info, fmt::format("optimize: {} settings, about {:.0f} s in all (estimate)",
                                plan.scenarios.size() + 1, seconds_estimate));
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  OptimizeRun run;
  run.result.param = a.param;
  run.result.input = input.path;
  run.result.scenario_file = opts.scenario_file;
  run.result.scenario_sets = opts.scenario_sets;
  OptimizeResult& result = run.result;
  for (std::size_t i = 0; i < plan.scenarios.size(); ++i) {
    result.curve.push_back(point(plan.values[i], replay(profile, plan.scenarios[i], options)));
    const auto now = std::chrono::steady_clock::now();
    if (now - last > std::chrono::seconds(2)) {
      last = now;
      tell(opts.info,
           fmt::format("optimize: {} of {} settings replayed", i + 1, plan.scenarios.size()));
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ReplayResult as_given = replay(profile, plan.base, options);
  result.as_given_iteration_time = as_given.iteration_time;
  result.gpu_memory = as_given.gpu_memory;
  result.gpu_change = as_given.gpu_change;
  result.interference = as_given.interference;
  result.kernel_classes = as_given.kernel_classes;
  // The best: the shortest iteration of those that fit (or whose fit is
  // unknown); ties to the first value tried. None fits: the shortest of all.
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < result.curve.size(); ++i) {
    const OptimizePoint& p = result.curve[i];
    if (p.fits == false) continue;
    if (!best || p.iteration_time < result.curve[*best].iteration_time) best = i;
  }
  result.none_fit = !best.has_value();
  if (!best) {
    best = 0;
    for (std::size_t i = 1; i < result.curve.size(); ++i) {
      if (result.curve[i].iteration_time < result.curve[*best].iteration_time) best = i;
    }
  }
  result.best = *best;
  return run;
}

}  // namespace ssgd::sim
