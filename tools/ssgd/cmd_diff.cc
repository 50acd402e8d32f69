// ssgd diff MEASURED SIMULATED [--iteration N] [--simulated-iteration M]
//                              [--rank R] [--top K] [--by start|end|duration] [--report FILE]
//                              [--allow-truncated]
#include <algorithm>
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/atomic_file.h"
#include "common/fixed_decimal.h"
#include "common/logging.h"
#include "walk/iteration_diff.h"
#include "presentation/report/diff_report.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct DiffArgs {
  std::string measured, simulated;
  OutputFile report;
  std::optional<std::int64_t> iteration, simulated_iteration;
  std::optional<std::int32_t> rank;
  std::int64_t top = 10;
  walk::DiffBy by = walk::DiffBy::kDuration;
  bool allow_truncated = false;
};

// Exact milliseconds with six decimals (nanoseconds) from integer ns.
std::string ms(std::int64_t ns) { return format_fixed_decimal(ns, 6); }

// `diff` as a percentage of `base`, or "-" when base is 0.
std::string percent(std::int64_t diff, std::int64_t base) {
  if (base == 0) return "-";
  return fmt::format("{:+.1f}%", 100.0 * static_cast<double>(diff) / static_cast<double>(base));
}

std::int64_t duration_of(const walk::IterationTask& t, walk::DiffBy by) {
  return by == walk::DiffBy::kDuration ? t.busy_ns : by == walk::DiffBy::kEnd ? t.end_ns : t.start_ns;
}

const char* by_meaning(walk::DiffBy by) {
  switch (by) {
    case walk::DiffBy::kStart: return "start (from the iteration's start)";
    case walk::DiffBy::kEnd: return "end (from the iteration's start; delays add up along the iteration)";
    case walk::DiffBy::kDuration: return "duration (busy time: where a task's own time is mispredicted)";
  }
  return "";
}

void print_side_only(const char* title, const std::vector<walk::DiffRow>& rows, std::size_t top,
                     std::ostream& out) {
  if (rows.empty()) return;
  out << fmt::format("\n{} ({}{}):\n", title, rows.size(),
                     rows.size() > top ? fmt::format(", first {}", top) : "");
  std::size_t w = 28;  // the task column fits the longest label shown
  for (std::size_t k = 0; k < rows.size() && k < top; ++k) {
    w = std::max(w, walk::task_label(rows[k].task()).size());
  }
  out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14}\n", "rank", "task", w, "start ms", "busy ms");
  for (std::size_t k = 0; k < rows.size() && k < top; ++k) {
    const auto& t = rows[k].task();
    out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14}\n", t.rank, walk::task_label(t), w,
                       ms(t.start_ns), ms(t.busy_ns));
  }
}

void print_diff(const DiffArgs& a, const walk::IterationDiff& d, std::ostream& out) {
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
    w = std::max(w, walk::task_label(*d.matched[k].measured).size());
  }
  out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14} {:>14} {:>14} {:>14} {:>9}\n", "rank", "task",
                     w, "meas start", "meas busy", "sim start", "sim busy", "diff ms", "diff %");
  for (std::size_t k = 0; k < d.matched.size() && k < top; ++k) {
    const auto& r = d.matched[k];
    const auto diff = r.diff(d.by);
    out << fmt::format("  {:>4}  {:<{}} {:>14} {:>14} {:>14} {:>14} {:>14} {:>9}\n", r.measured->rank,
                       walk::task_label(*r.measured), w, ms(r.measured->start_ns),
                       ms(r.measured->busy_ns), ms(r.simulated->start_ns), ms(r.simulated->busy_ns),
                       ms(diff), percent(diff, duration_of(*r.measured, d.by)));
  }
  print_side_only("measured only", d.measured_only, top, out);
  print_side_only("simulated only", d.simulated_only, top, out);
}

void run_diff(const DiffArgs& a) {
  check_outputs({&a.report}, {a.measured, a.simulated});
  check_input(a.measured, "MEASURED");
  check_input(a.simulated, "SIMULATED");
  const auto measured = walk::TraceIterations::read(a.measured, a.allow_truncated);
  const auto simulated = walk::TraceIterations::read(a.simulated, a.allow_truncated);
  auto log = logger("tools");
  for (const auto* side : {&measured, &simulated}) {
    for (const auto& w : side->warnings()) log->warn("{}: {}", side->source(), w);
  }
  walk::DiffOptions options;
  options.iteration = a.iteration;
  options.simulated_iteration = a.simulated_iteration;
  options.rank = a.rank;
  options.by = a.by;
  const walk::IterationDiff d = walk::diff_iterations(measured, simulated, options);
  if (a.report.given()) {
    const std::string report =
        json_report_text(report::diff_report_json(a.measured, a.simulated, d));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  print_diff(a, d, std::cout);
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare one iteration of a measured trace with its simulated replay, task by task "
      "(e.g. after `ssgd simulate measured.ssgdt --trace sim.ssgdt`)");
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
  const std::map<std::string, walk::DiffBy> by{{"start", walk::DiffBy::kStart},
                                              {"end", walk::DiffBy::kEnd},
                                              {"duration", walk::DiffBy::kDuration}};
  cmd->add_option("--by", args->by, "order rows by the difference of: start, end or duration")
      ->transform(CLI::CheckedTransformer(by, CLI::ignore_case))
      ->default_str("duration");
  add_output_option(*cmd, args->report, "--report",
                    "also write the whole comparison as JSON here", {"--json"});
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  cmd->callback([args] { run_diff(*args); });
}

}  // namespace ssgd::tools
