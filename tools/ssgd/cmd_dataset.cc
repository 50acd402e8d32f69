// ssgd dataset pack DIR [--name NAME] [--description TEXT] [--max-error PCT] [--max-whatif-error PCT]
// ssgd dataset verify DIR [--jobs N] [--report FILE.json] [--no-replay]
// A dataset folder of captured configurations and its manifest
// (docs/datasets.md): pack checks and describes it, verify checks it against
// the manifest and replays every entry.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "common/units.h"
#include "common/version.h"
#include "common/work_context.h"
#include "simulator/dataset/dataset_pack.h"
#include "simulator/dataset/dataset_replay.h"
#include "presentation/report/dataset_report.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/dataset/dataset_check.h"
#include "traces/dataset/dataset_files.h"

namespace ssgd::tools {
namespace {

struct PackArgs {
  std::string dir;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<double> max_error, max_whatif_error;
};

struct VerifyArgs {
  std::string dir;
  std::size_t jobs = 1;
  OutputFile report;
  bool no_replay = false;
  std::optional<double> max_error;         // percent, every case
  std::optional<double> max_whatif_error;  // percent, what-if cases (default: max_error)
  std::vector<std::string> sets;           // --set: on every entry's scenario
};

void run_pack(const PackArgs& a) {
  const trace::DatasetManifest m =
      sim::pack_dataset(a.dir, {a.name, a.description, {a.max_error, a.max_whatif_error}});
  const std::filesystem::path out = std::filesystem::path(a.dir) / trace::kDatasetManifestName;
  const std::string text = trace::manifest_text(m);
  // The manifest is the output, written into the folder given as DIR.
  write_output(OutputFile{out.string(), "DIR"}, [&] { write_file_atomically(out, text); });
  std::int64_t bytes = 0;
  for (const auto& f : m.files) bytes += f.size_bytes;
  std::cout << fmt::format("packed dataset '{}': {} entries, {} files ({}) into {}\n", m.name,
                           m.entries.size(), m.files.size(), format_bytes(bytes), out.string());
  if (!m.tolerance.empty()) {
    const auto& t = m.tolerance;
    std::cout << fmt::format(
        "  tolerance (dataset verify's default): {}{}\n",
        t.max_error_percent ? fmt::format("every case {:g}%", *t.max_error_percent) : "",
        t.max_whatif_error_percent
            ? fmt::format("{}what-if cases {:g}%", t.max_error_percent ? ", " : "",
                          *t.max_whatif_error_percent)
            : "");
  }
}

// True when `path` would lie under the folder `dir` as a file of the dataset
// (hidden names are not).
bool inside(const std::string& path, const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path p = fs::weakly_canonical(fs::absolute(path));
  const fs::path rel = p.lexically_relative(fs::weakly_canonical(fs::absolute(dir)));
  const std::string s = rel.generic_string();
  return !rel.empty() && !s.starts_with("..") && !trace::is_hidden_dataset_path(s);
}

void run_verify(const VerifyArgs& a) {
  const WorkContext context("verifying the dataset", a.dir);
  check_outputs({&a.report});
  auto log = logger("tools");
  const trace::DatasetCheck check = trace::check_dataset(a.dir);
  const std::string manifest =
      (std::filesystem::path(a.dir) / trace::kDatasetManifestName).string();
  if (!check.problems.empty()) {
    for (const InputError& p : check.problems) std::cerr << "ssgd: error: " << p.what() << "\n";
    throw InputError({manifest, std::nullopt, std::nullopt, ""},
                     fmt::format("{} problem(s): the folder does not match its manifest; nothing "
                                 "was replayed",
                                 check.problems.size()));
  }
  const trace::DatasetManifest& m = check.manifest;
  log->info("{}: {} files match the manifest, {} entries", a.dir, m.files.size(), m.entries.size());
  if (m.ssgd_version != ssgd_version()) {
    log->info("packed by ssgd {}, verified by ssgd {}", m.ssgd_version, ssgd_version());
  }
  if (a.report.given() && inside(a.report.path, a.dir)) {
    log->warn("{} is inside the dataset folder: the next verify will find it unlisted",
              a.report.path);
  }

  std::vector<sim::DatasetCase> cases;
  if (!a.no_replay) {
    sim::DatasetReplayOptions options;
    options.jobs = a.jobs;
    options.sets = a.sets;
    options.progress = [&log](const sim::DatasetCase& c, std::size_t done, std::size_t total,
                              double seconds) {
      log->info("[{}/{}] {}: predicted {}, measured {}, error {:+.2f}% ({:.1f} s)", done, total,
                c.name(), format_duration(c.predicted), format_duration(c.measured.median),
                c.error_percent, seconds);
    };
    // Many cases warn alike: each kind once, with a count.
    FoldedWarnings folded({"sim", "dag", "traces"});
    cases = sim::replay_dataset(a.dir, m, options);
  }
  const report::DatasetSummary summary = report::summarise_dataset(cases, m);
  if (a.report.given()) {
    nlohmann::json json = report::dataset_report_json(a.dir, m, cases, summary);
    json["scenario_sets"] = a.sets;
    const std::string report = json_report_text(json);
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }

  std::cout << fmt::format("dataset '{}' ({}): {} entries, {} files intact\n", m.name, a.dir,
                           m.entries.size(), m.files.size());
  if (!a.sets.empty()) {
    std::cout << fmt::format("  every entry's scenario with --set {}\n", fmt::join(a.sets, " --set "));
  }
  if (a.no_replay) {
    std::cout << "  not replayed (--no-replay)\n";
  } else {
    std::cout << "\n";
    report::print_dataset_table(cases, summary, std::cout);
  }
  if (a.report.given()) log->info("report written to {}", a.report.path);
  // The tolerance: the flags, else the manifest's (both limits from one
  // place, so a flag never mixes with the manifest's other limit).
  const bool flags = a.max_error || a.max_whatif_error;
  const std::optional<double> max_error = flags ? a.max_error : m.tolerance.max_error_percent;
  const std::optional<double> max_whatif =
      flags ? a.max_whatif_error : m.tolerance.max_whatif_error_percent;
  if (a.no_replay || (!max_error && !max_whatif)) return;
  // Said after the table, and a miss is exit 4.
  std::vector<std::string> misses;
  for (const sim::DatasetCase& c : cases) {
    const auto limit =
        c.kind == sim::DatasetCaseKind::kWhatIf && max_whatif ? max_whatif : max_error;
    if (limit && std::abs(c.error_percent) > *limit) {
      misses.push_back(fmt::format("{} {:+.2f}% (limit {:g}%)", c.name(), c.error_percent, *limit));
    }
  }
  const char* error_name = flags ? "--max-error" : "the manifest's max_error_percent";
  const char* whatif_name =
      flags ? "--max-whatif-error" : "the manifest's max_whatif_error_percent";
  const auto limits = fmt::format(
      "{}{}", max_error ? fmt::format("{} {:g}%", error_name, *max_error) : "",
      max_whatif ? fmt::format("{}{} {:g}%", max_error ? ", " : "", whatif_name, *max_whatif) : "");
  if (misses.empty()) {
    std::cout << fmt::format("\n  within tolerance: every case ({})\n", limits);
    return;
  }
  std::cout << fmt::format("\n  beyond tolerance ({}): {} of {} case(s)\n", limits, misses.size(),
                           cases.size());
  for (const auto& miss : misses) std::cout << "    " << miss << "\n";
  throw OutOfTolerance(fmt::format("{}: {} of {} case(s) beyond tolerance ({})", a.dir, misses.size(),
                                   cases.size(), limits));
}

// --max-error and --max-whatif-error, percentages, for pack (the manifest's
// tolerance) and verify (the check).
void add_tolerance_options(CLI::App& cmd, std::optional<double>& max_error,
                           std::optional<double>& max_whatif_error, const std::string& what) {
  cmd.add_option("--max-error", max_error, what)->check(CLI::Range(0.0, 1e6));
  cmd.add_option("--max-whatif-error", max_whatif_error,
                 "PCT: the same for what-if cases (default: --max-error)")
      ->check(CLI::Range(0.0, 1e6));
}

}  // namespace

void add_dataset_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "dataset", "Check and describe a dataset of captured runs, and replay it (docs/datasets.md)");
  cmd->require_subcommand(1);

  auto pack_args = std::make_shared<PackArgs>();
  auto* pack = cmd->add_subcommand(
      "pack",
      "Check every entry.json under DIR and write DIR/manifest.json: the entries and every file "
      "with its size and SHA-256");
  pack->add_option("DIR", pack_args->dir, "the dataset folder")->required();
  pack->add_option("--name", pack_args->name,
                   "the dataset's name (default: the previous manifest's, else the folder's)");
  pack->add_option("--description", pack_args->description,
                   "what the dataset holds (default: the previous manifest's, else none)");
  add_tolerance_options(*pack, pack_args->max_error, pack_args->max_whatif_error,
                        "PCT: the tolerance `dataset verify` checks by default, every case "
                        "(default: the previous manifest's, else none)");
  pack->callback([pack_args] { run_pack(*pack_args); });

  auto verify_args = std::make_shared<VerifyArgs>();
  auto* verify = cmd->add_subcommand(
      "verify",
      "Check DIR against its manifest (schema, sizes, SHA-256, no extra file), then replay "
      "every entry and what-if case and compare with the measured iteration times; exit "
      "status 2 on any integrity or schema problem");
  verify->add_option("DIR", verify_args->dir, "the dataset folder")->required();
  verify->add_option("--jobs", verify_args->jobs, "cases simulated at once")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_output_option(*verify, verify_args->report, "--report",
                    "write the cases and summary as JSON here");
  verify->add_flag("--no-replay", verify_args->no_replay, "check the files and the manifest only");
  verify->add_option("--set", verify_args->sets,
                     "a scenario key set on every entry's scenario, key.path=value (repeatable): "
                     "the dataset under a what-if of yours");
  add_tolerance_options(*verify, verify_args->max_error, verify_args->max_whatif_error,
                        "PCT: a case whose |error| is above this many percent is a miss: listed, "
                        "exit status 4 (default: the manifest's tolerance, if it has one)");
  verify->callback([verify_args] { run_verify(*verify_args); });
}

}  // namespace ssgd::tools
