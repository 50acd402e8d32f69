// ssgd trace [-o DIR] [--iterations A:B] [--window SPEC] [--nvtx] [clock options] -- CMD ARGS...:
// run a training command with the CUPTI tracer injected, then say what it
// captured.
//
// The tracer is loaded through environment variables only, so the command
// may be a launcher (torchrun, mpirun) that starts many ranks: every rank
// inherits them (Open MPI's mpirun gets `-x VAR` for each, so that ranks on
// other nodes do too). While the command runs, a clock server
// (tracer/core/clock_exchange.h) answers every rank's clock exchanges, so
// that `ssgd merge` can align hosts. See tracer/README.md for how to use it
// with each launcher.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <stdexcept>

#include "common/work_context.h"
#include "tools/ssgd/child_process.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "tracer/core/clock_exchange.h"
#include "tracer/core/trace_window.h"
#include "traces/clock_calibration.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

extern char** environ;

namespace ssgd::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTracerLibrary = "libssgd_tracer.so";

// Where the tracer library may be, in order: next to the ssgd binary (the
// build tree: build/bin), then ../lib relative to it (an installed tree).
std::vector<fs::path> tracer_library_candidates() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path dir = self.parent_path();
  return {dir / kTracerLibrary, dir.parent_path() / "lib" / kTracerLibrary};
}

fs::path find_tracer_library() {
  const auto candidates = tracer_library_candidates();
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c)) return c;
  }
  std::string tried;
  for (const auto& c : candidates) tried += (tried.empty() ? "'" : ", '") + c.string() + "'";
  throw std::invalid_argument("the tracer library " + std::string(kTracerLibrary) + " is not at " +
                   (tried.empty() ? std::string("(cannot read /proc/self/exe)") : tried) +
                   "; build it with CUDA and CUPTI installed (cmake -DSSGD_WITH_CUDA=ON)");
}

// "A:B": iterations A (inclusive) to B (exclusive), A < B, both decimal.
void check_iterations(const std::string& text) {
  const auto colon = text.find(':');
  const auto number = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  const std::string a = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string b = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (!number(a) || !number(b)) {
    throw flag_error("--iterations", text,
                     "expected A:B, two decimal iteration numbers, e.g. 10:20");
  }
  if (std::stol(a) >= std::stol(b)) {
    throw flag_error("--iterations", text, "the first iteration must be below the last");
  }
}

void set_env(const char* name, const std::string& value) {
  if (::setenv(name, value.c_str(), 1) != 0) {
    throw std::runtime_error(std::string("cannot set ") + name);
  }
}

// Open MPI's mpirun passes its environment only to the ranks on its own
// node; the others get the variables named with -x. So for an Open MPI
// launcher, the tracer's variables (SSGD_*, CUDA_INJECTION*, NCCL_PROFILER*,
// NVTX_INJECTION*) are named after the launcher's name. MPICH's and Intel
// MPI's Hydra (mpiexec.hydra) pass the whole environment and have no -x:
// a launcher that resolves to a Hydra binary is left alone.
bool is_open_mpi_launcher(const std::string& program) {
  const std::string name = fs::path(program).filename().string();
  if (name != "mpirun" && name != "mpiexec" && name != "orterun") return false;
  std::error_code ec;
  fs::path resolved = program;
  if (program.find('/') == std::string::npos) {
    const char* path = std::getenv("PATH");
    std::string dirs = path == nullptr ? "" : path;
    resolved.clear();
    for (std::size_t at = 0; at <= dirs.size();) {
      const std::size_t colon = std::min(dirs.find(':', at), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(at, colon - at)) / program;
      if (::access(candidate.c_str(), X_OK) == 0) {
        resolved = candidate;
        break;
      }
      at = colon + 1;
    }
  }
  const fs::path target = resolved.empty() ? resolved : fs::canonical(resolved, ec);
  return target.filename().string().find("hydra") == std::string::npos;
}

std::vector<std::string> with_mpirun_exports(const std::vector<std::string>& command) {
  if (command.empty() || !is_open_mpi_launcher(command.front())) return command;
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    for (const std::string_view prefix :
         {"SSGD_", "CUDA_INJECTION", "NCCL_PROFILER", "NVTX_INJECTION"}) {
      if (name.starts_with(prefix)) {
        names.emplace_back(name);
        break;
      }
    }
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> out{command.front()};
  for (const std::string& name : names) {
    out.push_back("-x");
    out.push_back(name);
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

// The clock server this launcher starts, or the one it hands on; see
// add_trace_command's --clock-* options.
struct ClockOptions {
  std::string address;  // --clock-address
  int port = -1;        // --clock-port; -1: not given
  std::string server;   // --clock-server
  bool off = false;     // --no-clock-sync
};

std::unique_ptr<tracer::ClockServer> set_up_clock_sync(const ClockOptions& o) {
  const bool own = !o.address.empty() || o.port >= 0;
  if (o.off && (own || !o.server.empty())) {
    throw flag_error("--no-clock-sync",
                     "cannot be combined with --clock-server, --clock-address or --clock-port");
  }
  if (!o.server.empty() && own) {
    throw flag_error("--clock-server", o.server,
                     "uses another launcher's clock server; --clock-address and --clock-port "
                     "are for this one's");
  }
  if (o.off) {
    ::unsetenv("SSGD_TRACER_CLOCK_SERVER");
    return nullptr;
  }
  if (!o.server.empty()) {
    std::string why;
    if (!tracer::parse_clock_server_address(o.server, why)) {
      // `why` starts with the value, which the error names already.
      const std::string shown = "'" + o.server + "': ";
      if (why.starts_with(shown)) why.erase(0, shown.size());
      throw flag_error("--clock-server", o.server, why);
    }
    set_env("SSGD_TRACER_CLOCK_SERVER", o.server);
    return nullptr;
  }
  if (std::getenv("SSGD_TRACER_CLOCK_SERVER") != nullptr && !own) {
    // An outer launcher's (`mpirun ... ssgd trace -- python train.py`, each
    // rank under its own ssgd trace): one clock server for all.
    return nullptr;
  }
  if (!o.address.empty() &&
      (o.address.find_first_of(" \t[]") != std::string::npos || o.address.size() > 255)) {
    throw flag_error("--clock-address", o.address, "expected a host name or an IP address");
  }
  tracer::ClockServerOptions options;
  options.port = static_cast<std::uint16_t>(std::max(o.port, 0));
  std::string error;
  auto server = tracer::ClockServer::start(options, &error);
  if (!server) {
    if (o.port >= 0) throw flag_error("--clock-port", std::to_string(o.port), error);
    std::cerr << "ssgd trace: warning: no clock server (" << error
              << "); ranks on different hosts will not be aligned\n";
    return nullptr;
  }
  tracer::ClockServerAddress advertised{o.address.empty() ? server->hostname() : o.address,
                                        server->port()};
  set_env("SSGD_TRACER_CLOCK_SERVER", advertised.to_string());
  return server;
}

bool is_trace_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("rank-", 0) == 0 && name.find(".ssgdt") != std::string::npos;
}

std::vector<fs::path> trace_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && is_trace_file(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What each trace file holds, on stderr: the program's stdout stays its own.
void report(const fs::path& out_dir, const tracer::ClockServer* clock_server, bool window) {
  if (clock_server != nullptr) {
    const tracer::ClockServerCounters c = clock_server->counters();
    std::cerr << "ssgd trace: clock server " << std::getenv("SSGD_TRACER_CLOCK_SERVER")
              << ": answered " << c.answered << " clock requests, ignored " << c.ignored
              << " other packets\n";
  }
  const auto files = trace_files(out_dir);
  if (files.empty()) {
    std::cerr << "ssgd trace: no trace files in '" << out_dir.string()
              << "': the program made no CUDA calls, or the tracer could not start "
                 "(run again with SSGD_TRACER_LOG=1 to see why)\n";
    return;
  }
  std::cerr << "ssgd trace: " << files.size() << " trace file(s) in '" << out_dir.string()
            << "'\n";
  std::int64_t kernels = 0;
  bool all_read = true;
  for (const auto& f : files) {
    try {
      auto reader = trace::TraceReader::open(f);
      const trace::TraceSummary s = trace::summarize_trace(reader, 0);
      kernels += s.kernels;
      std::cerr << "  " << f.filename().string() << ": rank " << s.metadata.rank() << ", "
                << s.events << " events (kernel " << s.kernels << ", memcpy " << s.memcpys
                << ", memset " << s.memsets << ", api " << s.api_calls << ", sync "
                << s.synchronizations << ", cuda_event " << s.cuda_events << ", ext_corr "
                << s.external_correlations << ", device " << s.devices << ", link " << s.links
                << ", collective "
                << s.collectives << ", marker " << s.markers << ")";
      if (s.has_footer) {
        std::cerr << ", dropped " << s.dropped_records << ", invalid timestamps "
                  << s.invalid_timestamps;
      } else {
        std::cerr << ", no footer: the process did not exit normally (" << s.truncation_warning
                  << ")";
      }
      std::cerr << ", clock offset "
                << (s.clock_calibration ? trace::describe_calibration(*s.clock_calibration)
                                        : std::string("not measured"))
                << "\n";
      if (s.kernels > 0 && s.api_calls == 0) {
        std::cerr << "    warning: " << s.kernels
                  << " kernel(s) and no CUDA API call: their launch times are unknown, and a "
                     "replay keeps only the GPU's own time (SSGD_TRACER_API_CALLS=none, or a "
                     "tracing window that lost them: tracer/README.md)\n";
      }
      if (window) {
        if (s.window_steps == 0) {
          std::cerr << "    window: no step was reported, so nothing was traced (the program "
                       "reports its steps through tracer/python/ssgd_marks.py)\n";
        } else if (s.window_opens == 0) {
          std::cerr << "    window: " << s.window_steps
                    << " step(s) reported, the window never opened (outside the steps or times "
                       "given, no signal, or CUPTI not running)\n";
        } else {
          std::cerr << "    window: " << s.window_steps << " step(s) reported, recording on "
                    << s.window_opens << " time(s)\n";
        }
      }
    } catch (const std::exception& e) {
      std::cerr << "  " << f.filename().string() << ": unreadable: " << failure_message(e) << "\n";
      all_read = false;
    }
  }
  if (all_read && kernels == 0) {
    std::cerr << "ssgd trace: warning: the program launched no GPU work (no kernel in any trace): "
                 "it may have run on the CPU (check that it moves the model to 'cuda'); there is "
                 "nothing to replay\n";
  }
}

}  // namespace

void add_trace_command(CLI::App& app) {
  struct Options {
    OutputFile out{"ssgd-trace", ""};
    std::string iterations;
    std::string window;  // --window: SSGD_TRACER_WINDOW
    bool nvtx = false;
    ClockOptions clock;
    std::vector<std::string> command;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Run a training command with the CUPTI tracer injected (CUDA_INJECTION64_PATH, "
      "NCCL_PROFILER_PLUGIN) and write one trace per rank, DIR/rank-<r>.ssgdt. Put it "
      "outside torchrun or mpirun: every rank inherits the settings. Exits with the "
      "command's status.");
  add_output_option(*cmd, options->out, "-o,--output",
                    "folder of the trace files (default ssgd-trace)", {"--out"});
  cmd->add_option("--iterations", options->iterations,
                  "iterations to keep, A:B (A inclusive, B exclusive); passed on as "
                  "SSGD_TRACER_ITERATIONS");
  cmd->add_option("--window", options->window,
                  "trace only a window of steps: steps:A:B (steps A to B-1, as the program "
                  "numbers them), time:S:E (seconds after the tracer started) or signal "
                  "(SIGUSR2 opens it, the next closes it); every step's boundaries are recorded "
                  "all the same. The program reports its steps through "
                  "tracer/python/ssgd_marks.py; passed on as SSGD_TRACER_WINDOW");
  cmd->add_flag("--nvtx", options->nvtx, "also capture NVTX ranges (SSGD_TRACER_NVTX=1)");
  cmd->add_option("--clock-address", options->clock.address,
                  "host name or address the ranks reach this launcher's clock server at "
                  "(default: this host's name)");
  cmd->add_option("--clock-port", options->clock.port,
                  "UDP port of this launcher's clock server (default: one the OS picks)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--clock-server", options->clock.server,
                  "HOST:PORT of another launcher's clock server to use instead of starting one "
                  "(one ssgd trace per node: give every node the same)");
  cmd->add_flag("--no-clock-sync", options->clock.off,
                "measure no clock offsets (ranks on different hosts cannot be merged without "
                "--force)");
  cmd->add_option("command", options->command, "the command to trace, after --")->required();
  cmd->callback([options] {
    if (!options->iterations.empty()) check_iterations(options->iterations);
    if (!options->window.empty()) {
      const std::string text = options->window;
      const tracer::WindowSettings w =
          tracer::read_window_settings([&text](const char*) -> std::optional<std::string> {
            return text;
          });
      if (!w.problems.empty()) {
        throw flag_error("--window", text,
                         "expected steps:A:B (integers, 0 <= A < B), time:S:E (seconds, "
                         "0 <= S < E) or signal");
      }
    }
    const OutputFile& out = options->out;
    if (!out.given()) throw flag_path_error(out.flag, out.path, "the folder name is empty");
    const fs::path library = find_tracer_library();
    const fs::path out_dir = fs::absolute(out.path);
    if (fs::exists(out_dir) && !fs::is_directory(out_dir)) {
      throw flag_path_error(out.flag, out.path, "exists and is not a folder");
    }
    if (fs::is_directory(out_dir) && !trace_files(out_dir).empty()) {
      throw flag_path_error(
          out.flag, out.path,
          "already holds traces (" + trace_files(out_dir).front().filename().string() +
              "); choose another folder or remove them");
    }
    set_env("CUDA_INJECTION64_PATH", library.string());
#ifdef SSGD_TRACER_HAS_NCCL
    set_env("NCCL_PROFILER_PLUGIN", library.string());
#endif
    set_env("SSGD_TRACER_OUT", out_dir.string());
    set_env("SSGD_TRACER_NVTX", options->nvtx ? "1" : "0");
    if (!options->iterations.empty()) set_env("SSGD_TRACER_ITERATIONS", options->iterations);
    if (!options->window.empty()) set_env("SSGD_TRACER_WINDOW", options->window);
    // CUPTI sees NVTX ranges only through NVTX's injection library: the
    // tracer, which hands them to the CUPTI it is bound to
    // (tracer/inject/injection_entry.cc says why not CUPTI's file itself).
    if (options->nvtx && std::getenv("NVTX_INJECTION64_PATH") == nullptr) {
      set_env("NVTX_INJECTION64_PATH", library.string());
    }
    const std::unique_ptr<tracer::ClockServer> clock_server = set_up_clock_sync(options->clock);
    std::cout.flush();
    const ChildResult child = run_child(with_mpirun_exports(options->command));
    if (clock_server) clock_server->stop();
    if (!child.started) {
      std::cerr << "ssgd trace: " << child.error << "\n";
      std::exit(127);
    }
    report(out_dir, clock_server.get(), !options->window.empty());
    std::cerr.flush();
    if (child.exited) std::exit(child.exit_status);
    // Die of the same signal, so that a launcher above sees what the command did.
    ::signal(child.signal, SIG_DFL);
    ::raise(child.signal);
    std::exit(128 + child.signal);
  });
}

}  // namespace ssgd::tools
