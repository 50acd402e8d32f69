#pragma once
// The subcommands of `ssgd`. Each file cmd_<name>.cc adds one subcommand to
// the application; its callback does the work and throws on failure
// (ssgd::InputError for bad input), which main() turns into a message on
// stderr and a non-zero exit status. Commands write results to stdout and
// logs and warnings to stderr.

#include <stdexcept>
#include <CLI/CLI.hpp>

namespace ssgd::tools {

void add_info_command(CLI::App& app);      // ssgd info [--dump] FILE
void add_pack_command(CLI::App& app);      // ssgd pack TEXT -o FILE.ssgdt
void add_merge_command(CLI::App& app);     // ssgd merge DIR -o FILE.ssgdt [--force]
void add_import_command(CLI::App& app);    // ssgd import bcaffe|kineto FILE -o OUT
void add_presets_command(CLI::App& app);   // ssgd presets
void add_simulate_command(CLI::App& app);  // ssgd simulate INPUT ...
void add_calibrate_command(CLI::App& app); // ssgd calibrate INPUT... -o network.yaml
void add_optimize_command(CLI::App& app);  // ssgd optimize INPUT --param KEY ...
void add_scale_command(CLI::App& app);     // ssgd scale INPUT --gpus LIST ...
void add_trace_command(CLI::App& app);     // ssgd trace [-o DIR] -- CMD ARGS...
void add_export_command(CLI::App& app);    // ssgd export perfetto TRACE -o OUT.json[.gz]
void add_diff_command(CLI::App& app);      // ssgd diff MEASURED SIMULATED
void add_dataset_command(CLI::App& app);   // ssgd dataset pack|verify DIR
void add_sweep_command(CLI::App& app);     // ssgd sweep GRID.yaml -o OUT.jsonl
void add_report_command(CLI::App& app);    // ssgd report REPORT.json... -o OUT.html
void add_collectives_command(CLI::App& app);  // ssgd collectives [--op OP] [--from S] [--to S]

// Exit statuses, documented in the README.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // I/O or internal failure
inline constexpr int kExitBadInput = 2;     // bad input or bad flags
inline constexpr int kExitDeadlock = 3;     // the simulated DAG deadlocked
inline constexpr int kExitOutOfTolerance = 4;  // a check beyond its tolerance (dataset verify --max-error)

// Thrown by a command whose checks ran and some missed their tolerance,
// after it wrote its whole output; main() exits with kExitOutOfTolerance.
struct OutOfTolerance : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ssgd::tools
