#include "presentation/report/interference_report.h"

#include <string>

#include <fmt/format.h>

namespace ssgd::report {
namespace {

double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

nlohmann::json interference_json(const sim::InterferencePlan& plan,
                                 const sim::InterferenceStats* stats) {
  if (!plan.active) return {{"model", "none"}};
  nlohmann::json j = {{"model", plan.demand ? "demand" : "contention"},
                      {"resource", to_string(plan.resource)},
                      {"resource_reason", plan.why},
                      {"notes", plan.notes}};
  if (plan.demand) {
    j["cpu_per_byte_ns"] = plan.cpu_per_byte;
  } else {
    j["compute_factor"] = plan.compute;
    j["comm_factor"] = plan.comm;
  }
  if (plan.resource == sim::InterferenceResource::kGpu) j["memory_factor"] = plan.memory;
  if (plan.concurrent > 0) j["concurrent_factor"] = plan.concurrent;
  if (stats != nullptr) {
    j["compute_tasks"] = stats->compute_tasks;
    j["compute_ns"] = stats->compute_ns;
    j["compute_added_ns"] = stats->compute_added_ns;
    j["compute_slowed_ns"] = stats->compute_slowed_ns;
    j["comm_tasks"] = stats->comm_tasks;
    j["comm_ns"] = stats->comm_ns;
    j["comm_added_ns"] = stats->comm_added_ns;
    if (plan.concurrent > 0) {
      j["comm_queued"] = stats->comm_queued;
      j["comm_queued_added_ns"] = stats->comm_queued_added_ns;
    }
  }
  return j;
}

void print_interference(const sim::InterferencePlan& plan, const sim::InterferenceStats* stats,
                        std::ostream& out) {
  if (!plan.active) return;
  const std::string factors =
      plan.demand ? fmt::format(
                        "{:.3f} ns of the rank's CPU a byte a collective moves through it, "
                        "the CPU shared by demand",
                        plan.cpu_per_byte)
      : plan.resource == sim::InterferenceResource::kGpu
          ? fmt::format("SM-bound work +{:.1f}%, memory-bound +{:.1f}%, collectives +{:.1f}%",
                        100 * plan.compute, 100 * plan.memory, 100 * plan.comm)
          : fmt::format("operators +{:.1f}%, collectives +{:.1f}%", 100 * plan.compute,
                        100 * plan.comm);
  const std::string concurrent =
      plan.concurrent > 0
          ? fmt::format("; a collective that waited behind another of its group +{:.1f}%",
                        100 * plan.concurrent)
          : std::string();
  out << fmt::format("  interference: {}, {} {} ({}): {}{}{}\n",
                     plan.demand ? "demand" : "contention", to_string(plan.resource),
                     plan.demand ? "class" : "factors", plan.why, factors,
                     plan.demand ? "" : " while overlapped", concurrent);
  if (stats != nullptr) {
    // Shares of the run's own totals: compute over every compute task,
    // collectives over every collective.
    out << fmt::format(
        "    added: compute +{:.1f}% ({:.1f}% of its time ran beside a collective), "
        "collectives +{:.1f}%\n",
        100 * share(stats->compute_added_ns, stats->compute_ns),
        100 * share(stats->compute_slowed_ns, stats->compute_ns + stats->compute_added_ns),
        100 * share(stats->comm_added_ns, stats->comm_ns));
    if (plan.concurrent > 0) {
      out << fmt::format(
          "    {} of {} collectives waited behind another of their group (the library would "
          "have run them together): +{:.1f}% of all collectives' time\n",
          stats->comm_queued, stats->comm_tasks,
          100 * share(stats->comm_queued_added_ns, stats->comm_ns));
    }
    if (stats->compute_tasks > 0) {
      out << "    run as events (tasks' ends move): no list schedule, no closed form\n";
    }
  }
  for (const auto& note : plan.notes) out << fmt::format("    note: {}\n", note);
}

}  // namespace ssgd::report
