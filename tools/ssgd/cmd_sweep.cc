// ssgd sweep GRID.yaml -o OUT.jsonl [--csv OUT.csv] [--restart] [--allow-large]
//                      [--allow-truncated] [-q]
// and, to share the points among ranks: mpirun -np N ssgd sweep ...
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/work_context.h"
#include "common/write_all.h"
#include "simulator/api/simulation.h"
#include "simulator/engine/deadlock_error.h"
#include "presentation/report/simulation_report.h"
#include "simulator/sweep/sweep_grid.h"
#include "simulator/sweep/sweep_results.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "tools/ssgd/sweep_ranks.h"

namespace ssgd::tools {
namespace {

struct SweepArgs {
  std::string grid;
  OutputFile output;
  OutputFile csv;
  bool restart = false;
  bool allow_large = false;
  bool allow_truncated = false;
  bool quiet = false;
};

// What every rank reads before any point runs.
struct Prepared {
  sim::SweepGrid grid;
  sim::SimulationInput input;
};

Prepared prepare(const SweepArgs& a, bool lead) {
  check_input(a.grid, "GRID");
  sim::SweepGrid grid = sim::read_sweep_grid(a.grid);
  std::vector<std::string> inputs{a.grid, grid.input.string()};
  if (grid.scenario) inputs.push_back(grid.scenario->string());
  if (lead) {
    check_outputs({&a.output, &a.csv}, inputs);
    require_regular_output(a.output,
                           "the results file is read back to resume a sweep and appended to");
  }
  sim::check_grid_files(grid);  // a missing input or scenario named at its line in the grid
  sim::check_axis_values(grid);
  sim::SimulationInput input = sim::load_simulation_input(grid.input.string(), a.allow_truncated);
  if (lead) {
    for (const auto& w : input.content.warnings) logger("tools")->warn("{}", w);
  }
  return {std::move(grid), std::move(input)};
}

// One point's record, or its error, as a JSON line.
std::string run_point(const Prepared& p, const SweepArgs& a, std::int64_t index) {
  const sim::SweepPoint point = sim::sweep_point(p.grid, index);
  std::optional<sim::Scenario> scenario;
  try {
    scenario.emplace(sim::load_point_scenario(p.grid, point));  // located in the grid
  } catch (const InputError& e) {
    return sim::record_line(sim::error_record(point, e.what()));
  }
  try {
    sim::SimulationOptions options;
    options.scenario_file = p.grid.scenario ? p.grid.scenario->string() : std::string();
    options.replay.allow_large = a.allow_large;
    options.allow_truncated = a.allow_truncated;
    const sim::Simulation s = sim::run_simulation(p.input, *scenario, options);
    return sim::record_line(sim::point_record(point, report::simulation_report(s)));
  } catch (const InputError& e) {
    const InputError located = sim::locate_point_error(p.grid, point, e);
    return sim::record_line(sim::error_record(point, located.what()));
  } catch (const sim::DeadlockError& e) {
    return sim::record_line(sim::error_record(point, e.what()));
  } catch (const std::bad_alloc&) {
    return sim::record_line(sim::error_record(point, out_of_memory_message()));
  }
}

// Progress on stderr, every 5 s and at the end, with an estimate of the time left.
class Progress {
 public:
  Progress(std::int64_t total, std::int64_t todo, bool quiet)
      : total_(total), todo_(todo), quiet_(quiet), start_(Clock::now()), last_(start_) {}

  void point_done() {
    ++done_;
    const auto now = Clock::now();
    if (quiet_ || (now - last_ < std::chrono::seconds(5) && done_ < todo_)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double left = elapsed / static_cast<double>(done_) * static_cast<double>(todo_ - done_);
    logger("tools")->info("sweep: {}/{} points ({:.0f}%) in {:.1f} s{}", total_ - todo_ + done_,
                          total_, 100.0 * static_cast<double>(total_ - todo_ + done_) /
                                      static_cast<double>(total_),
                          elapsed, done_ < todo_ ? fmt::format(", about {:.0f} s left", left)
                                                 : std::string());
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::int64_t total_;
  std::int64_t todo_;
  std::int64_t done_ = 0;
  bool quiet_;
  Clock::time_point start_;
  Clock::time_point last_;
};

// The results file, appended a point at a time so that an interrupted sweep
// resumes from it. A write that fails (a full disk) is taken back: the file
// is cut to the lines written whole before it, and the message says what it
// holds, so that it is never torn.
class ResultsAppender {
 public:
  ResultsAppender(const OutputFile& out, std::size_t points) : out_(out), points_(points) {
    fd_ = ::open(out.path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
      throw OutputError(fmt::format("{}: field '{}': cannot append to the results: {}", out.path,
                                    out.flag, std::strerror(errno)));
    }
    size_ = st.st_size;
  }
  ~ResultsAppender() {
    if (fd_ >= 0) ::close(fd_);
  }
  ResultsAppender(const ResultsAppender&) = delete;
  ResultsAppender& operator=(const ResultsAppender&) = delete;

  void append(const std::string& record) {
    const std::string line = record + "\n";
    if (const int error = write_all(fd_, line.data(), line.size()); error != 0) fail(error);
    size_ += static_cast<off_t>(line.size());
    ++points_;
  }

 private:
  [[noreturn]] void fail(int error) {
    const bool cut = ::ftruncate(fd_, size_) == 0;
    throw OutputError(fmt::format(
        "{}: field '{}': cannot write: {}; {}", out_.path, out_.flag, std::strerror(error),
        cut ? fmt::format("the results file holds the {} point(s) written whole before it: run "
                          "the same command again to resume",
                          points_)
            : fmt::format("its last line is cut short (it cannot be cut back: {}): the next run "
                          "drops that line and resumes",
                          std::strerror(errno))));
  }

  const OutputFile& out_;
  std::size_t points_;
  int fd_ = -1;
  off_t size_ = 0;
};

// The points to run: those with no figures in the results file yet (a point
// that failed runs again).
std::vector<std::int64_t> points_to_run(const sim::SweepGrid& grid,
                                        const sim::SweepResults& results) {
  std::vector<std::int64_t> todo;
  for (std::int64_t i = 0; i < grid.point_count(); ++i) {
    const auto it = results.lines.find(i);
    if (it == results.lines.end() || it->second.find("\"figures\":") == std::string::npos) {
      todo.push_back(i);
    }
  }
  return todo;
}

void run_sweep(const SweepArgs& a) {
  SweepRanks ranks;
  const bool lead = ranks.rank() == 0;
  auto log = logger("tools");
  if (!lead) set_log_levels("error");  // rank 0 speaks for all

  std::optional<Prepared> prepared;
  std::exception_ptr failure;
  try {
    prepared.emplace(prepare(a, lead));
  } catch (...) {
    failure = std::current_exception();
  }
  const std::vector<bool> ok = ranks.gather_ok(failure == nullptr);
  if (!ok[0]) {
    if (lead) std::rethrow_exception(failure);
    ranks.exit_quietly(kExitBadInput);  // rank 0 says why
  }
  for (std::size_t r = 1; r < ok.size(); ++r) {
    if (ok[r]) continue;
    if (failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        std::cerr << "ssgd: rank " << ranks.rank() << ": error: " << e.what() << "\n";
      }
      ranks.exit_quietly(kExitBadInput);
    }
    if (lead) {
      throw InputError({"mpirun", std::nullopt, std::nullopt, "rank " + std::to_string(r)},
                       "could not read the grid or the input (its message is above)");
    }
    ranks.exit_quietly(kExitBadInput);
  }
  const Prepared& p = *prepared;

  // Rank 0 reads what an earlier run left.
  sim::SweepResults results;
  failure = nullptr;
  if (lead) {
    try {
      std::error_code ec;
      if (!a.restart && std::filesystem::exists(a.output.path, ec)) {
        results = sim::read_sweep_results(a.output.path, p.grid);
        for (const auto& w : results.warnings) log->warn("{}", w);
        // Rewritten without a line an interrupted run cut short.
        write_output(a.output, [&] {
          write_file_atomically(a.output.path, sim::sweep_jsonl(results));
        });
      } else {
        write_output(a.output, [&] { write_file_atomically(a.output.path, ""); });
      }
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (!ranks.gather_ok(failure == nullptr)[0]) {
    if (lead) std::rethrow_exception(failure);
    ranks.exit_quietly(kExitBadInput);
  }

  const std::vector<std::int64_t> todo = points_to_run(p.grid, results);
  if (lead) {
    log->info("sweep: {} points of {} to run ({} in {}), {} rank(s)", todo.size(),
              p.grid.point_count(), p.grid.point_count() - static_cast<std::int64_t>(todo.size()),
              a.output.path, ranks.size());
  }
  Progress progress(p.grid.point_count(), static_cast<std::int64_t>(todo.size()), a.quiet);
  try {
    std::optional<ResultsAppender> out;
    if (lead) out.emplace(a.output, results.lines.size());
    ranks.share(
        todo, [&](std::int64_t i) { return run_point(p, a, i); },
        [&](std::int64_t i, const std::string& record) {
          // Appended as it comes, so an interrupted sweep resumes from here.
          out->append(record);
          results.lines[i] = record;
          progress.point_done();
        });
  } catch (const std::exception& e) {
    std::cerr << "ssgd: error: " << failure_message(e) << "\n";  // out of memory: its stage
    ranks.abort(kExitFailure);
  }
  if (!lead) return;

  // The results once more, in point order, whatever the ranks' order was.
  // Failing, it leaves the file as appended: every point, whole.
  try {
    write_file_atomically(a.output.path, sim::sweep_jsonl(results));
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw output_error(a.output, e,
                       "the results file holds every point as it was appended, in the order they "
                       "finished: run the same command again to write them in point order");
  }
  if (a.csv.given()) {
    write_output(a.csv,
                 [&] { write_file_atomically(a.csv.path, sim::sweep_csv(p.grid, results)); });
  }
  std::int64_t failed = 0;
  std::string first_error;
  for (const auto& [i, line] : results.lines) {
    if (line.find("\"figures\":") != std::string::npos) continue;
    if (failed++ == 0) first_error = nlohmann::json::parse(line).value("error", std::string());
  }
  const auto total = p.grid.point_count();
  if (failed == total) {
    throw InputError({p.grid.file, std::nullopt, std::nullopt, ""},
                     fmt::format("every point of the sweep failed; the first: {}", first_error));
  }
  if (failed > 0) {
    log->warn("sweep: {} of {} points failed (their error is in {}); the first: {}", failed,
              total, a.output.path, first_error);
  }
  log->info("sweep: {} points written to {}{}", total, a.output.path,
            a.csv.given() ? " and " + a.csv.path : std::string());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand(
      "sweep",
      "Replay every point of a grid of scenario keys (docs/sweep.md); under mpirun -np N the "
      "ranks share the points");
  cmd->add_option("GRID", args->grid, "the sweep grid (YAML): input, scenario, set, grid, zip")
      ->required();
  add_output_option(*cmd, args->output, "-o,--output",
                    "the results as JSON lines, one per point; resumed when it exists")
      ->required();
  add_output_option(*cmd, args->csv, "--csv", "also write the results as CSV here");
  cmd->add_flag("--restart", args->restart,
                "replace the results file instead of resuming from the points it holds");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->add_flag("-q,--quiet", args->quiet, "no progress lines");
  cmd->callback([args] { run_sweep(*args); });
}

}  // namespace ssgd::tools
