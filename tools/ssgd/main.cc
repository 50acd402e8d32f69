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
    // The input and the stage come from the work context a reader or a
    // stage had open when memory ran out (common/work_context.h). A replay
    // that runs out says it as its refusal would (simulator/replay/replay.h).
    std::cerr << "ssgd: error: " << ssgd::out_of_memory_message() << "\n";
    return kExitFailure;
  } catch (const std::invalid_argument& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ssgd: error: " << ssgd::failure_message(e) << "\n";
    return kExitFailure;
  }
  return kExitOk;
}
