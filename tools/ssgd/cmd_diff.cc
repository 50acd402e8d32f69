// ssgd diff MEASURED SIMULATED [--iteration N] [--simulated-iteration M]
//                              [--rank R] [--top K] [--by start|end|duration] [--json FILE]
#include <algorithm>
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "common/fixed_decimal.h"
#include "common/logging.h"
#include "dag/iteration_diff.h"
#include "tools/ssgd/commands.h"
#include "tools/ssgd/output_path.h"

namespace ssgd::tools {
namespace {

struct DiffArgs {
  std::string measured, simulated, json;
  std::optional<std::int64_t> iteration, simulated_iteration;
  std::optional<std::int32_t> rank;
  std::int64_t top = 10;
  dag::DiffBy by = dag::DiffBy::kDuration;
  bool allow_truncated = false;
};

// Exact milliseconds with six decimals (nanoseconds) from integer ns.
std::string ms(std::int64_t ns) { return format_fixed_decimal(ns, 6); }

// `diff` as a percentage of `base`, or "-" when base is 0.
std::string percent(std::int64_t diff, std::int64_t base) {
  if (base == 0) return "-";
  return fmt::format("{:+.1f}%", 100.0 * static_cast<double>(diff) / static_cast<double>(base));
}

std::int64_t duration_of(const dag::IterationTask& t, dag::DiffBy by) {
  return by == dag::DiffBy::kDuration ? t.busy_ns : by == dag::DiffBy::kEnd ? t.end_ns : t.start_ns;
}

const char* by_meaning(dag::DiffBy by) {
  switch (by) {
    case dag::DiffBy::kStart: return "start (from the iteration's start)";
    case dag::DiffBy::kEnd: return "end (from the iteration's start; delays add up along the iteration)";
    case dag::DiffBy::kDuration: return "duration (busy time: where a task's own time is mispredicted)";
  }
  return "";
}

nlohmann::json task_json(const std::optional<dag::IterationTask>& t) {
  if (!t) return nullptr;
  return {{"start_ns", t->start_ns}, {"end_ns", t->end_ns}, {"busy_ns", t->busy_ns},
          {"bytes", t->bytes}};
}

nlohmann::json row_json(const dag::DiffRow& row) {
  const auto& t = row.task();
  nlohmann::json j{{"rank", t.rank},          {"kind", dag::to_string(t.kind)},
                   {"task", dag::task_label(t)}, {"measured", task_json(row.measured)},
                   {"simulated", task_json(row.simulated)}};
  if (row.measured && row.simulated) {
    j["start_diff_ns"] = row.start_diff_ns;
    j["end_diff_ns"] = row.end_diff_ns;
    j["duration_diff_ns"] = row.duration_diff_ns;
  }
  return j;
}

nlohmann::json diff_json(const DiffArgs& a, const dag::IterationDiff& d) {
  auto side = [](const std::string& path, const dag::IterationSpan& s, const std::string& how) {
    return nlohmann::json{{"path", path}, {"iteration", s.number}, {"chosen", how},
                          {"iteration_time_ns", s.duration_ns()}};
  };
  nlohmann::json j{{"measured", side(a.measured, d.measured, d.measured_choice)},
                   {"simulated", side(a.simulated, d.simulated, d.simulated_choice)},
                   {"iteration_time_diff_ns", d.simulated.duration_ns() - d.measured.duration_ns()},
                   {"by", dag::to_string(d.by)}};
  for (const char* key : {"matched", "measured_only", "simulated_only"}) j[key] = nlohmann::json::array();
  for (const auto& r : d.matched) j["matched"].push_back(row_json(r));
  for (const auto& r : d.measured_only) j["measured_only"].push_back(row_json(r));
  for (const auto& r : d.simulated_only) j["simulated_only"].push_back(row_json(r));
  return j;
}

void print_side_only(const char* title, const std::vector<dag::DiffRow>& rows, std::size_t top,
                     std::ostream& out) {
  if (rows.empty()) return;
  out << fmt::format("\n{} ({}{}):\n", title, rows.size(),
                     rows.size() > top ? fmt::format(", first {}", top) : "");
  std::size_t w = 28;  // the task column fits the longest label shown
  for (std::size_t k = 0; k < rows.size() && k < top; ++k) {
    w = std::max(w, dag::task_label(rows[k].task()).size());
  }
  out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14}\n", "rank", "task", w, "start ms", "busy ms");
  for (std::size_t k = 0; k < rows.size() && k < top; ++k) {
    const auto& t = rows[k].task();
    out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14}\n", t.rank, dag::task_label(t), w,
                       ms(t.start_ns), ms(t.busy_ns));
  }
}

void print_diff(const DiffArgs& a, const dag::IterationDiff& d, std::ostream& out) {
  const std::int64_t tm = d.measured.duration_ns(), ts = d.simulated.duration_ns();
  out << fmt::format("measured   {}: iteration {} ({}), {} ms\n", a.measured, d.measured.number,
                     d.measured_choice, ms(tm));
  out << fmt::format("simulated  {}: iteration {} ({}), {} ms\n", a.simulated, d.simulated.number,
                     d.simulated_choice, ms(ts));
  out << fmt::format("difference (simulated - measured): {} ms ({})\n", ms(ts - tm), percent(ts - tm, tm));
  out << fmt::format("tasks: {} matched, {} measured only, {} simulated only; times in ms from each "
                     "iteration's start\n",
                     d.matched.size(), d.measured_only.size(), d.simulated_only.size());
  const auto top = static_cast<std::size_t>(std::max<std::int64_t>(a.top, 0));
  out << fmt::format("\nlargest {} differences by {}, simulated - measured:\n",
                     std::min(top, d.matched.size()), by_meaning(d.by));
  std::size_t w = 28;  // the task column fits the longest label shown
  for (std::size_t k = 0; k < d.matched.size() && k < top; ++k) {
    w = std::max(w, dag::task_label(*d.matched[k].measured).size());
  }
  out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14} {:>14} {:>14} {:>14} {:>9}\n", "rank", "task",
                     w, "meas start", "meas busy", "sim start", "sim busy", "diff ms", "diff %");
  for (std::size_t k = 0; k < d.matched.size() && k < top; ++k) {
    const auto& r = d.matched[k];
    const auto diff = r.diff(d.by);
    out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14} {:>14} {:>14} {:>14} {:>9}\n", r.measured->rank,
                       dag::task_label(*r.measured), w, ms(r.measured->start_ns),
                       ms(r.measured->busy_ns), ms(r.simulated->start_ns), ms(r.simulated->busy_ns),
                       ms(diff), percent(diff, duration_of(*r.measured, d.by)));
  }
  print_side_only("measured only", d.measured_only, top, out);
  print_side_only("simulated only", d.simulated_only, top, out);
}

void run_diff(const DiffArgs& a) {
  check_output_path(a.json, "--json");
  const auto measured = dag::TraceIterations::read(a.measured, a.allow_truncated);
  const auto simulated = dag::TraceIterations::read(a.simulated, a.allow_truncated);
  auto log = logger("tools");
  for (const auto* side : {&measured, &simulated}) {
    for (const auto& w : side->warnings()) log->warn("{}: {}", side->source(), w);
  }
  dag::DiffOptions options;
  options.iteration = a.iteration;
  options.simulated_iteration = a.simulated_iteration;
  options.rank = a.rank;
  options.by = a.by;
  const dag::IterationDiff d = dag::diff_iterations(measured, simulated, options);
  if (!a.json.empty()) write_file_atomically(a.json, diff_json(a, d).dump(2) + "\n");
  print_diff(a, d, std::cout);
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare one iteration of a measured trace with its simulated replay, task by task "
      "(e.g. after `ssgd simulate measured.ssgdt --trace-out sim.ssgdt`)");
  cmd->add_option("MEASURED", args->measured, "measured ssgd trace (.ssgdt)")->required();
  cmd->add_option("SIMULATED", args->simulated, "simulated (or another) ssgd trace")->required();
  cmd->add_option("--iteration", args->iteration,
                  "measured iteration number (default: the median-duration iteration)");
  cmd->add_option("--simulated-iteration", args->simulated_iteration,
                  "simulated iteration number (default: the measured one's number, else the "
                  "simulated trace's median)");
  cmd->add_option("--rank", args->rank, "compare this rank only");
  cmd->add_option("--top", args->top, "rows of largest differences to print")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  const std::map<std::string, dag::DiffBy> by{{"start", dag::DiffBy::kStart},
                                              {"end", dag::DiffBy::kEnd},
                                              {"duration", dag::DiffBy::kDuration}};
  cmd->add_option("--by", args->by, "order rows by the difference of: start, end or duration")
      ->transform(CLI::CheckedTransformer(by, CLI::ignore_case))
      ->default_str("duration");
  cmd->add_option("--json", args->json, "also write the whole comparison as JSON here");
  cmd->add_flag("--allow-truncated", args->allow_truncated,
                "read the readable prefix of traces that were cut short");
  cmd->callback([args] { run_diff(*args); });
}

}  // namespace ssgd::tools
