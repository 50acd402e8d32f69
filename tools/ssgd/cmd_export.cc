// ssgd export perfetto TRACE.ssgdt -o OUT.json[.gz] [--allow-truncated]
// ssgd export chakra INPUT [--scenario FILE] [--set k=v]... -o DIR [--prefix NAME] [--gzip]
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "common/chrome_trace_writer.h"
#include "common/logging.h"
#include "simulator/input/replay_input.h"
#include "simulator/replay/replay.h"
#include "presentation/report/chakra_export.h"
#include "simulator/scenario/scenario_platform.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/export/perfetto/perfetto_export.h"
#include "traces/trace_reader.h"

namespace ssgd::tools {

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Convert an ssgd trace into another tool's format");
  cmd->require_subcommand(1);
  struct Args {
    std::string trace;
    OutputFile out;
    bool allow_truncated = false;
  };
  auto args = std::make_shared<Args>();
  auto* perfetto = cmd->add_subcommand(
      "perfetto",
      "ssgd trace (measured, merged or simulated) -> Chrome trace-event JSON for ui.perfetto.dev "
      "and chrome://tracing (docs/export.md)");
  perfetto->add_option("TRACE", args->trace, "ssgd trace (.ssgdt)")->required();
  add_output_option(*perfetto, args->out, "-o,--output",
                    "JSON file to write; gzip-compressed when the name ends in .gz")
      ->required();
  add_allow_truncated_flag(*perfetto, args->allow_truncated);
  perfetto->callback([args] {
    check_outputs({&args->out}, {args->trace});
    check_input(args->trace, "TRACE");
    auto reader = trace::TraceReader::open(args->trace);
    // Written under a temporary name, renamed only once the whole trace is
    // exported: a damaged trace or a full disk leaves no output.
    trace::PerfettoExportResult result;
    write_output(args->out, [&] {
      ChromeTraceFile file(args->out.path);
      result = trace::export_perfetto(reader, file.writer(), {args->allow_truncated});
      file.commit();
    });
    logger("tools")->info(
        "{}: {} events of {} rank(s) -> {} slices and {} launch arrows in {} ({} correlation ids "
        "without a partner, at most {} held at once)",
        args->trace, result.events_read, result.ranks, result.slices, result.flows, args->out.path,
        result.unmatched, result.peak_pending);
  });

  struct ChakraArgs {
    std::string input;
    ScenarioOptions scenario;
    std::string dir;
    std::string prefix = "ssgd";
    bool gzip = false;
    bool allow_truncated = false;
    bool allow_large = false;
  };
  auto cargs = std::make_shared<ChakraArgs>();
  auto* chakra = cmd->add_subcommand(
      "chakra",
      "the S-SGD DAG ssgd simulates for an input under a scenario -> one Chakra execution trace "
      "per rank (<prefix>.<rank>.et), for ASTRA-sim and the Chakra tools (docs/chakra.md)");
  chakra
      ->add_option("INPUT", cargs->input,
                   "ssgd trace (.ssgdt), layer-profile CSV or B-Caffe log, as `ssgd simulate` takes")
      ->required();
  add_scenario_options(*chakra, cargs->scenario, ScenarioJobs::kRefuse);
  chakra->add_option("-o,--output", cargs->dir, "folder to write the files to (made if missing)")
      ->required();
  chakra->add_option("--prefix", cargs->prefix, "file name prefix: <prefix>.<rank>.et")
      ->capture_default_str();
  chakra->add_flag("--gzip", cargs->gzip,
                   "write <prefix>.<rank>.et.gz (ssgd and Chakra's Python tools read them; "
                   "ASTRA-sim does not)");
  add_allow_truncated_flag(*chakra, cargs->allow_truncated);
  add_allow_large_flag(*chakra, cargs->allow_large);
  chakra->callback([cargs] {
    const auto& a = *cargs;
    if (a.prefix.empty() || a.prefix.find('/') != std::string::npos) {
      throw flag_error("--prefix", a.prefix, "expected a file name prefix without '/'");
    }
    check_input(a.input, "INPUT");
    const std::filesystem::path dir(a.dir);
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
      throw flag_path_error("-o", a.dir, "exists and is not a folder");
    }
    const std::filesystem::path parent = dir.has_parent_path() ? dir.parent_path() : ".";
    if (!std::filesystem::is_directory(parent, ec)) {
      throw flag_path_error("-o", a.dir, "its parent folder does not exist");
    }
    const sim::Scenario scenario = load_scenario(a.scenario);
    const sim::ReplayInput input = sim::load_replay_input(a.input, {a.allow_truncated});
    sim::ReplayOptions options;
    options.keep_schedule = true;
    options.fold_ranks = false;
    options.single_worker_baseline = false;
    options.progress = true;
    options.allow_large = a.allow_large;
    const sim::ReplayResult result = sim::replay(input.profile, scenario, options);
    // A folder this run makes is removed again when the export fails (a full
    // disk, out of memory): a failed export leaves nothing new behind.
    const bool made = std::filesystem::create_directory(dir, ec);
    if (ec) throw flag_path_error("-o", a.dir, "cannot be made: " + ec.message());
    report::ChakraExportSummary summary;
    OutputFile out;
    out.path = a.dir;
    out.flag = "-o";
    try {
      write_output(out, [&] {
        summary = report::export_chakra(*result.task_graph, *result.schedule, result.workers, dir,
                                        {a.prefix, a.gzip, sim::scenario_gpus_per_node(scenario)});
      });
    } catch (...) {
      if (made) std::filesystem::remove(dir, ec);  // empty again: export_chakra took back its files
      throw;
    }
    std::cout << fmt::format(
        "{} -> {}/{}.{{0..{}}}.et{}\n  {} ranks, {} iterations: {} nodes ({} per rank on average), "
        "{} collectives, {} data and {} control dependencies\n  iteration time as simulated: {} "
        "ns\n",
        a.input, a.dir, a.prefix, summary.ranks - 1, a.gzip ? ".gz" : "", summary.ranks,
        result.iterations, summary.nodes, summary.nodes / std::max<std::int64_t>(1, summary.ranks),
        summary.collectives, summary.data_deps, summary.ctrl_deps, result.iteration_time.ns());
    if (summary.cross_rank_edges > 0) {
      logger("tools")->warn("{} dependencies between two ranks' own tasks cannot be written to "
                            "per-rank files and were left out",
                            summary.cross_rank_edges);
    }
  });
}

}  // namespace ssgd::tools
