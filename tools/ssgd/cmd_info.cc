// ssgd info [--dump] [--allow-truncated] FILE: summarise a .ssgdt trace, or
// print it as text. A trace cut short is always read up to its last whole
// chunk, with a warning: --allow-truncated is accepted, as on every command
// that reads traces, and changes nothing.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"
#include "walk/trace_profile.h"
#include "presentation/report/gpu_report.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::tools {
namespace {

// What a replay would take from the trace: the layer profile's size, in a
// few lines (or why there is none), after the summary.
void print_profile_summary(const std::string& file, std::ostream& out) {
  auto reader = trace::TraceReader::open(file);
  try {
    const walk::TraceProfileResult r = walk::profile_from_trace(reader, file);
    const trace::LayerProfile& p = r.profile;
    out << fmt::format("{:<17}{} layer(s) over {} rank(s), {} of {} iteration(s) used{}\n",
                       "as a profile", p.layers.size(), r.ranks, r.iterations_used,
                       r.iterations_seen,
                       p.model.empty() ? "" : fmt::format(" ({})", p.model));
    out << fmt::format("{:<17}forward {}, backward {}{}, gradients {} an iteration{}\n", "",
                       format_duration(p.total_forward()), format_duration(p.total_backward()),
                       p.micro_batches
                           ? fmt::format(" a micro-batch ({} an iteration)", *p.micro_batches)
                           : std::string(),
                       format_bytes(p.total_grad_bytes()),
                       p.batch_per_gpu ? fmt::format(", batch {}", *p.batch_per_gpu) : "");
    if (!p.sharding.empty()) {
      out << fmt::format("{:<17}sharding {}{}\n", "", p.sharding,
                         r.units.empty() ? "" : fmt::format(", {} unit(s)", r.units.size()));
    }
    // What a move to another GPU scales (simulator/perturb/gpu_change.h).
    const auto& c = p.kernel_classes;
    if (!c.empty()) {
      out << fmt::format("{:<17}kernels on {}: {}\n", "", p.gpu.empty() ? "an unnamed GPU" : p.gpu,
                         report::kernel_class_shares(c));
      if (!c.unclassified.empty()) {
        out << fmt::format("{:<17}in no class: {} ({}){}\n", "", c.unclassified.front().first,
                           format_duration(Duration(c.unclassified.front().second)),
                           c.unclassified.size() > 1
                               ? fmt::format(" and {} more", c.unclassified.size() - 1)
                               : "");
      }
    }
  } catch (const InputError& e) {
    out << fmt::format("{:<17}none: {}\n", "as a profile", bounded(e.reason(), 300));
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool dump = false;
    bool allow_truncated = false;  // info reads the readable prefix anyway
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "info",
      "Summarise a .ssgdt trace: metadata, events per kind and rank, time span, top "
      "kernels, collectives, and the layer profile a replay takes from it. A file cut short is read up to its last whole chunk, with "
      "a warning on stderr.");
  cmd->add_option("FILE", options->file, "trace file (.ssgdt)")->required();
  cmd->add_flag("--dump", options->dump,
                "print every event as protobuf text (deterministic, for golden tests) instead "
                "of the summary");
  add_allow_truncated_flag(*cmd, options->allow_truncated,
                           "accepted as by every command that reads traces; info reads the "
                           "readable prefix of a trace cut short with or without it");
  cmd->callback([options] {
    // The reader logs the truncation warning on stderr itself.
    check_input(options->file, "FILE");
    auto reader = trace::TraceReader::open(options->file);
    if (options->dump) {
      trace::dump_trace_text(reader, std::cout);
    } else {
      trace::print_summary(trace::summarize_trace(reader), std::cout);
      print_profile_summary(options->file, std::cout);
    }
    std::cout.flush();
  });
}

}  // namespace ssgd::tools
