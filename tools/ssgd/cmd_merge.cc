// ssgd merge DIR -o FILE.ssgdt [--force] [--allow-truncated]: the per-rank traces of one capture
// (DIR/rank-<r>.ssgdt) into one trace on one time line (traces/merge/trace_merge.h).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/output_target.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/merge/trace_merge.h"

namespace ssgd::tools {

namespace {

// An output in the folder being merged whose name has a rank file's shape
// (rank-*.ssgdt) would be taken as one of the ranks by the next merge of that
// folder. Any other name there is never read by merge, so the capture's own
// folder stays a fine place for the merged trace (DIR/merged.ssgdt).
void refuse_output_as_rank_file(const OutputFile& out, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(fs::absolute(dir), ec);
  // The name as given and, for a link, the file it leads to.
  for (const fs::path& p : {fs::path(out.path), output_target(out.path).path}) {
    if (p.empty()) continue;
    const std::string name = p.filename().string();
    if (!name.starts_with("rank-") || !name.ends_with(".ssgdt")) continue;
    if (fs::weakly_canonical(fs::absolute(p).parent_path(), ec) != folder) continue;
    throw flag_path_error(out.flag, out.path,
                          "cannot write here: it is a rank file's name in the folder being "
                          "merged ('" + dir + "'), which the next merge of it would take as a "
                          "rank; write the merged trace under another name or elsewhere");
  }
}

}  // namespace

void add_merge_command(CLI::App& app) {
  struct Options {
    std::string dir;
    OutputFile output;
    bool force = false;
    bool allow_truncated = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Merge the per-rank traces of one capture (DIR/rank-<r>.ssgdt) into one trace, with "
      "every rank's clock aligned by the calibrations the tracer stored to the host of the "
      "lowest rank, or to the clock server's host that its calibration names.");
  cmd->add_option("DIR", options->dir, "folder of rank-<r>.ssgdt files")->required();
  add_output_option(*cmd, options->output, "-o,--output", "merged trace to write (.ssgdt)")
      ->required();
  cmd->add_flag("--force", options->force,
                "merge even hosts without a clock calibration (uncorrected), rank files cut "
                "short (their readable part) and missing ranks; the merged trace says so");
  add_allow_truncated_flag(*cmd, options->allow_truncated,
                           "merge the readable prefix of rank files cut short (and nothing else "
                           "that --force lets through); the merged trace says so");
  cmd->callback([options] {
    // The rank files are the inputs: the output may not be one of them, and
    // each must be a regular file.
    std::vector<std::string> rank_files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(options->dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("rank-") && name.ends_with(".ssgdt")) {
        rank_files.push_back(entry.path().string());
      }
    }
    refuse_output_as_rank_file(options->output, options->dir);
    check_outputs({&options->output}, rank_files);
    check_inputs(rank_files, "DIR");
    trace::MergeOptions merge;
    merge.force = options->force;
    merge.allow_truncated = options->allow_truncated;
    merge.progress = [](const std::string& line) { std::cerr << line << "\n"; };
    trace::MergeResult r;
    write_output(options->output,
                 [&] { r = trace::merge_rank_traces(options->dir, options->output.path, merge); });
    for (const std::string& note : r.notes) std::cerr << "ssgd: warning: " << note << "\n";
    std::cout << "merged " << r.ranks << " ranks from " << r.hosts
              << (r.hosts == 1 ? " host" : " hosts") << " into " << options->output.path << ": "
              << r.events << " events\n";
    if (!r.notes.empty()) {
      // Without --force, --allow-truncated let through rank files cut short only.
      std::cout << (options->force ? "forced: " : "allowed: ") << r.notes.size()
                << " problem(s) let through, listed on stderr and in the trace's provenance\n";
    }
  });
}

}  // namespace ssgd::tools
