// ssgd: capture S-SGD training and replay it under what-if scenarios.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/suggest.h"
#include "common/logging.h"
#include "common/version.h"
#include "common/work_context.h"
#include "simulator/engine/deadlock_error.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace {

using ssgd::tools::kExitBadInput;
using ssgd::tools::kExitOk;

std::vector<std::string_view> command_names(const CLI::App& app) {
  std::vector<std::string_view> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.emplace_back(sub->get_name());
  }
  return names;
}

std::string command_list(const CLI::App& app) {
  std::string out;
  for (const std::string_view n : command_names(app)) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// Before CLI11 parses: `ssgd` alone and `ssgd help [COMMAND]` print the
// help; a first word that is no command gets "did you mean". Returns the
// exit status when it answered, else -1. Global options (--log LEVEL) may
// come first.
int answer_without_a_command(const CLI::App& app, int argc, char** argv) {
  int i = 1;
  while (i < argc) {
    const std::string_view a = argv[i];
    if (a == "--log") {
      i += 2;
    } else if (a.starts_with("--log=")) {
      ++i;
    } else {
      break;
    }
  }
  if (i >= argc) {
    std::cout << app.help();
    return argc == 1 ? kExitBadInput : -1;
  }
  std::string_view word = argv[i];
  if (word.starts_with('-')) return -1;  // --help, --version, or CLI11's own error
  if (word == "help") {
    if (i + 1 >= argc) {
      std::cout << app.help();
      return kExitOk;
    }
    const std::string_view topic = argv[i + 1];
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == topic) {
        std::cout << sub->help();
        return kExitOk;
      }
    }
    word = topic;
  }
  for (const std::string_view n : command_names(app)) {
    if (n == word) return -1;
  }
  std::cerr << "ssgd: error: unknown command '" << ssgd::bounded(word) << "'"
            << ssgd::did_you_mean(word, command_names(app)) << "; commands: " << command_list(app)
            << "\nRun 'ssgd help' or 'ssgd COMMAND --help' for more information.\n";
  return kExitBadInput;
}

// CLI11's "The following arguments were not expected": each unknown flag
// named, with the nearest flag of the command it was given to.
void explain_extras(const CLI::App& app) {
  const CLI::App* command = &app;
  std::string who = "ssgd";
  while (!command->get_subcommands().empty()) {
    command = command->get_subcommands().front();
    who += " " + command->get_name();
  }
  std::vector<std::string> flags;
  for (const CLI::Option* o : command->get_options()) {
    for (const std::string& l : o->get_lnames()) flags.push_back("--" + l);
  }
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) flags.push_back("--" + l);
  }
  const std::vector<std::string_view> names(flags.begin(), flags.end());
  for (const std::string& extra : app.remaining(true)) {
    if (!extra.starts_with("-")) continue;
    const std::string_view flag = std::string_view(extra).substr(0, extra.find('='));
    std::cerr << who << ": unknown flag '" << ssgd::bounded(flag) << "'"
              << ssgd::did_you_mean(flag, names) << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ssgd::tools;
  CLI::App app{"ssgd: capture synchronous-SGD training on GPU clusters and replay it "
               "in a discrete-event simulator",
               "ssgd"};
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

  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "print nothing on stdout and only warnings and errors on stderr");

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

  if (const int status = answer_without_a_command(app, argc, argv); status >= 0) return status;
  // -q, --quiet on every command, before or after it: nothing on stdout (the
  // summary, tables; an output a flag names is a file and still written) and
  // only warnings and errors on stderr. A later --log still sets levels.
  std::streambuf* const stdout_buffer = std::cout.rdbuf();
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;  // ssgd trace -- CMD ARGS: the command's own
    if (a == "-q" || a == "--quiet") {
      ssgd::set_log_levels("warn");
      std::cout.rdbuf(nullptr);
      break;
    }
  }
  struct RestoreStdout {
    std::streambuf* buffer;
    ~RestoreStdout() {
      std::cout.rdbuf(buffer);
      std::cout.clear();
    }
  } restore{stdout_buffer};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    explain_extras(app);
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  } catch (const ssgd::InputError& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const OutOfTolerance& e) {
    std::cerr << "ssgd: error: " << e.what() << "\n";
    return kExitOutOfTolerance;
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
