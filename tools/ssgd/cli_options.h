#pragma once
// What the subcommands of `ssgd` share on their command lines (README.md,
// "Command-line conventions"):
//
// - flag_error: the one error for a bad flag value; it names the flag and
//   the value;
// - OutputFile, add_output_option, check_outputs: a file a command writes.
//   `-o/--output` names a command's one main output, `--report` a JSON
//   report, `--timeline` and `--trace` the other outputs of `simulate`. Old
//   spellings (`--json`, `--trace-out`, `--out`) are deprecated aliases:
//   they still work and print a one-line note on stderr;
// - ScenarioOptions: `--scenario` and `--set`, and the scenario they load,
//   refusing `jobs:` in a command that cannot run them;
// - add_allow_truncated_flag: `--allow-truncated`, on every command that
//   reads traces;
// - check_input: every input is a regular file (not a FIFO, a folder or a
//   device), checked before it is opened;
// - write_output: a failure to write an output (a full disk) names the
//   output's path and flag;
// - add_allow_large_flag: `--allow-large`, on every command that replays,
//   to run what the estimate says will not fit in memory.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <exception>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::tools {

// ---------------------------------------------------------------- errors

// Errors about flags read as every ssgd input error does, "WHERE: field
// 'NAME': WHY" (common/error.h), with the flag as the field. Exit status 2.

// A bad value of a flag: the value, quoted, stands where an error names a
// file, e.g. "'1,x,4': field '--gpus': item 2 ('x'): expected a GPU count
// from 1 to ...".
[[nodiscard]] InputError flag_error(std::string_view flag, std::string_view value,
                                    std::string_view reason);

// A bad path given to a flag, shown as any file is, unquoted: "out/r.json:
// field '--report': cannot write here: folder 'out' does not exist".
[[nodiscard]] InputError flag_path_error(std::string_view flag, std::string_view path,
                                         std::string_view reason);

// A flag that is missing, or that cannot go with another, when no one value
// is at fault: "command line: field '--from': give the values to search: ...".
[[nodiscard]] InputError flag_error(std::string_view flag, std::string_view reason);

// ---------------------------------------------------------------- outputs

// The release that drops the deprecated spellings.
inline constexpr std::string_view kDeprecatedFlagsRemovedIn = "0.3";

// A file name in a YAML comment: anything but printable ASCII becomes '?',
// so that a name cannot end the comment and add keys.
std::string comment_safe(const std::string& text);

// A file a command writes.
struct OutputFile {
  std::string path;  // as given; empty when not asked for (or the command's default)
  // The flag that named it, as messages show it: the option's long name,
  // or the deprecated spelling that was given instead.
  std::string flag;
  [[nodiscard]] bool given() const { return !path.empty(); }
};

// Adds an output option to `cmd`: `names` as CLI11 takes them ("-o,--output",
// "--report"), and each of `deprecated` ("--json") as a hidden alias of it
// that prints "ssgd: --json is deprecated, use --report; it will be removed
// in 0.3" on stderr when given. Giving an alias and the new name together is
// an error (flag_error). Returns the option (for ->required() and the like).
CLI::Option* add_output_option(CLI::App& cmd, OutputFile& out, const std::string& names,
                               const std::string& description,
                               const std::vector<std::string>& deprecated = {});

// Checks every given output before a command does any work: its folder must
// exist, it must be a regular file, a name not taken yet, a FIFO or a
// character device (or a link to one of those; /dev/stdout), not a folder, a
// block device or a socket; no two may be the same file, and none may be one
// of the command's `inputs` (which it would overwrite). Throws
// flag_path_error naming the flag (exit 2): "out: field '--report': cannot
// write here: is a folder".
//
// A FIFO or a character device is written through, streamed into and never
// renamed over (`ssgd report r.json -o /dev/stdout | less`, a FIFO another
// program reads); a regular file is written under a temporary name and
// renamed into place once complete; a link to a file keeps being a link to
// the replaced file. AtomicFile (common/atomic_file.h) holds the same rules
// when it opens and renames, in case the path changed since this check.
void check_outputs(std::initializer_list<const OutputFile*> outputs,
                   const std::vector<std::string>& inputs = {});

// Refuses an output that would be written through (a FIFO, a device,
// /dev/stdout) where the command needs a file it can read back or append
// to; `why` says so ("the results file is read back to resume"). Exit 2.
void require_regular_output(const OutputFile& out, std::string_view why);

// A failure to write an output once the work is done: "out.json: field
// '--report': cannot write: File too large (...); nothing was written".
// Exit status 1 (an I/O failure, not bad input); the output's temporary file
// is removed, so nothing is left behind. An output written through (a FIFO,
// a device) says instead that what came before the failure reached it.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `write`, which writes `out`; any failure but bad input (InputError)
// and running out of memory (std::bad_alloc), passed on as they are, becomes
// an OutputError naming out's path and flag.
template <class Write>
void write_output(const OutputFile& out, Write&& write);
// `left` says what the failure left when it is not "nothing was written".
[[nodiscard]] OutputError output_error(const OutputFile& out, const std::exception& e,
                                       std::string_view left = {});

template <class Write>
void write_output(const OutputFile& out, Write&& write) {
  try {
    write();
  } catch (const InputError&) {
    throw;
  } catch (const OutputError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, not out of disk
  } catch (const std::exception& e) {
    throw output_error(out, e);
  }
}

// A JSON report as text, indented by 2, with a final newline. Every string
// ssgd reads is UTF-8 (traces/event_rules.h, the readers); a file name from a
// file system that is not becomes U+FFFD here instead of failing the report.
std::string json_report_text(const nlohmann::json& report);

// ---------------------------------------------------------------- inputs

// Refuses an input that is not a regular file (a FIFO would block forever, a
// folder or /dev/zero cannot be read as one), naming it and `what` (the flag
// or argument it was given as): "p.fifo: field 'INPUT': is a FIFO (named
// pipe), not a regular file: ...". Empty paths (not given) and missing files
// (which the reader reports) pass. Exit status 2.
void check_input(const std::string& path, std::string_view what);
void check_inputs(const std::vector<std::string>& paths, std::string_view what);

// ---------------------------------------------------------------- scenarios

// `--scenario FILE.yaml` and `--set key.path=value`..., on every command that
// replays a scenario (simulate, scale, optimize).
struct ScenarioOptions {
  std::string file;               // --scenario; empty: none (the defaults)
  std::vector<std::string> sets;  // --set, in the order given
  std::string command;            // the subcommand's name, for messages
  bool runs_jobs = false;         // whether the command runs a scenario's `jobs:`
};

enum class ScenarioJobs { kRun, kRefuse };

// Adds --scenario and --set to `cmd`. With ScenarioJobs::kRefuse, a scenario
// with `jobs:` is refused by load_scenario, naming the key and the command.
void add_scenario_options(CLI::App& cmd, ScenarioOptions& options, ScenarioJobs jobs);

// The scenario: the file (if any), then every --set in order, then `more_sets`
// (a command's own, e.g. optimize's candidate). Throws InputError.
sim::Scenario load_scenario(const ScenarioOptions& options,
                            const std::vector<std::string>& more_sets = {});

// ---------------------------------------------------------------- traces

// Adds --allow-truncated: a trace cut short (no footer: a crash during
// capture, a partial copy) is read up to its last whole chunk, with a
// warning, instead of being refused. `description` replaces the help text
// of a command where it means more or less than that (info, merge).
void add_allow_truncated_flag(CLI::App& cmd, bool& allow, const std::string& description = "");

// ---------------------------------------------------------------- bounds

// Adds --allow-large: run even what the estimate of tasks, events and memory
// (simulator/replay/replay_estimate.h) says will not fit in the memory this
// machine has available, instead of refusing it (exit 2, naming the
// estimate and the key or flag that drives it).
void add_allow_large_flag(CLI::App& cmd, bool& allow);

}  // namespace ssgd::tools
