// ssgd: capture S-SGD training and replay it under what-if scenarios.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include "common/error.h"
#include "common/logging.h"
#include "common/version.h"
#include "common/work_context.h"
#include "simulator/engine/deadlock_error.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

int main(int argc, char** argv) {
  using namespace ssgd::tools;
  CLI::App app{"ssgd: capture synchronous-SGD training on GPU clusters and replay it "
               "in a discrete-event simulator"};
  app.require_subcommand(1);
  app.fallthrough();  // --log works before or after the subcommand
  app.set_version_flag("--version", "ssgd " + std::string(ssgd::ssgd_version()));
  std::string log_spec;
  app.add_option("--log", log_spec,
                 "log levels: LEVEL or COMPONENT=LEVEL[,...] (trace, debug, info, warn, error, off)")
      ->each([](const std::string& spec) {
        try {
          ssgd::set_log_levels(spec);
        } catch (const std::invalid_argument& e) {
          throw flag_error("--log", spec, e.what());  // names the flag and the value
        }
      });
  // CLI11 quotes what it could not take, whole: shown bounded (common/error.h),
  // long enough for its own words and a few arguments.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return ssgd::bounded(e.what(), 4 * ssgd::kMaxEchoBytes) +
           "\nRun with --help for more information.\n";
  });

  add_simulate_command(app);
  add_info_command(app);
  add_pack_command(app);
  add_merge_command(app);
  add_import_command(app);
  add_presets_command(app);
  add_calibrate_command(app);
  add_optimize_command(app);
  add_scale_command(app);
  add_trace_command(app);
  add_export_command(app);
  add_diff_command(app);
  add_dataset_command(app);
  add_sweep_command(app);
  add_report_command(app);
  add_collectives_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  } catch (const ssgd::InputError& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const ssgd::sim::DeadlockError& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitDeadlock;
  } catch (const std::bad_alloc&) {
    // Replays say what they were building (simulator/replay/replay.h); for
    // the rest, the input and the stage come from the work context a reader
    // or a command had open when memory ran out (common/work_context.h).
    const std::string during = ssgd::work_context_at_failure();
    std::cerr << "ssgd: error: out of memory" << (during.empty() ? "" : " while ") << during
              << "; see docs/performance.md for what a run needs\n";
    return kExitFailure;
  } catch (const std::invalid_argument& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}
