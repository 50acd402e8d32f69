// ssgd calibrate --scheduler: a partitioning scheduler's costs from one
// trace (simulator/calibration/scheduler_fit.h), printed and written as
// scenario keys (-o).
#include <iostream>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/units.h"
#include "simulator/calibration/scheduler_fit.h"
#include "tools/ssgd/calibrate_fits.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

std::string summary_text(const sim::SampleSummary& s) {
  return fmt::format("{} (10th-90th percentile {} - {}, {} samples)", format_duration(s.median),
                     format_duration(s.p10), format_duration(s.p90), s.samples);
}

}  // namespace

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
    std::cout << fmt::format(
        "  partition_overhead  {}: host time between launches in {} burst(s)\n",
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
      out << "# medians over " << f.partitions << " partition(s) of " << comment_safe(input)
          << "\n";
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

}  // namespace ssgd::tools
