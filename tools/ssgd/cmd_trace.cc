// ssgd trace [--out DIR] [--iterations A:B] [--nvtx] -- CMD ARGS...: run a
// training command with the CUPTI tracer injected, then say what it captured.
//
// The tracer is loaded through environment variables only, so the command
// may be a launcher (torchrun, mpirun) that starts many ranks: every rank
// inherits them. See tracer/README.md for how to use it with each launcher.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <stdexcept>
#include "tools/ssgd/child_process.h"
#include "tools/ssgd/commands.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

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
    throw std::invalid_argument("--iterations '" + text +
                     "': expected A:B, two decimal iteration numbers, e.g. 10:20");
  }
  if (std::stol(a) >= std::stol(b)) {
    throw std::invalid_argument("--iterations '" + text + "': the first iteration must be below the last");
  }
}

void set_env(const char* name, const std::string& value) {
  if (::setenv(name, value.c_str(), 1) != 0) {
    throw std::runtime_error(std::string("cannot set ") + name);
  }
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
void report(const fs::path& out_dir) {
  const auto files = trace_files(out_dir);
  if (files.empty()) {
    std::cerr << "ssgd trace: no trace files in '" << out_dir.string()
              << "': the program made no CUDA calls, or the tracer could not start "
                 "(run again with SSGD_TRACER_LOG=1 to see why)\n";
    return;
  }
  std::cerr << "ssgd trace: " << files.size() << " trace file(s) in '" << out_dir.string()
            << "'\n";
  for (const auto& f : files) {
    try {
      auto reader = trace::TraceReader::open(f);
      const trace::TraceSummary s = trace::summarize_trace(reader, 0);
      std::cerr << "  " << f.filename().string() << ": rank " << s.metadata.rank() << ", "
                << s.events << " events (kernel " << s.kernels << ", memcpy " << s.memcpys
                << ", memset " << s.memsets << ", api " << s.api_calls << ", sync "
                << s.synchronizations << ", cuda_event " << s.cuda_events << ", ext_corr "
                << s.external_correlations << ", device " << s.devices << ", link " << s.links
                << ", collective "
                << s.collectives << ", marker " << s.markers << ")";
      if (s.has_footer) {
        std::cerr << ", dropped " << s.dropped_records << ", invalid timestamps "
                  << s.invalid_timestamps << "\n";
      } else {
        std::cerr << ", no footer: the process did not exit normally (" << s.truncation_warning
                  << ")\n";
      }
    } catch (const std::exception& e) {
      std::cerr << "  " << f.filename().string() << ": unreadable: " << e.what() << "\n";
    }
  }
}

}  // namespace

void add_trace_command(CLI::App& app) {
  struct Options {
    std::string out = "ssgd-trace";
    std::string iterations;
    bool nvtx = false;
    std::vector<std::string> command;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Run a training command with the CUPTI tracer injected (CUDA_INJECTION64_PATH, "
      "NCCL_PROFILER_PLUGIN) and write one trace per rank, DIR/rank-<r>.ssgdt. Put it "
      "outside torchrun or mpirun: every rank inherits the settings. Exits with the "
      "command's status.");
  cmd->add_option("--out", options->out, "folder of the trace files (default ssgd-trace)");
  cmd->add_option("--iterations", options->iterations,
                  "iterations to keep, A:B (A inclusive, B exclusive); passed on as "
                  "SSGD_TRACER_ITERATIONS");
  cmd->add_flag("--nvtx", options->nvtx, "also capture NVTX ranges (SSGD_TRACER_NVTX=1)");
  cmd->add_option("command", options->command, "the command to trace, after --")->required();
  cmd->callback([options] {
    if (!options->iterations.empty()) check_iterations(options->iterations);
    if (options->out.empty()) throw std::invalid_argument("--out: the folder name is empty");
    const fs::path library = find_tracer_library();
    const fs::path out_dir = fs::absolute(options->out);
    if (fs::exists(out_dir) && !fs::is_directory(out_dir)) {
      throw std::invalid_argument("--out '" + options->out + "' exists and is not a folder");
    }
    if (fs::is_directory(out_dir) && !trace_files(out_dir).empty()) {
      throw std::invalid_argument("--out '" + options->out + "' already holds traces (" +
                       trace_files(out_dir).front().filename().string() +
                       "); choose another folder or remove them");
    }
    set_env("CUDA_INJECTION64_PATH", library.string());
#ifdef SSGD_TRACER_HAS_NCCL
    set_env("NCCL_PROFILER_PLUGIN", library.string());
#endif
    set_env("SSGD_TRACER_OUT", out_dir.string());
    set_env("SSGD_TRACER_NVTX", options->nvtx ? "1" : "0");
    if (!options->iterations.empty()) set_env("SSGD_TRACER_ITERATIONS", options->iterations);
#ifdef SSGD_CUPTI_LIBRARY
    // CUPTI sees NVTX ranges only when NVTX loads it as its injection library.
    if (options->nvtx && std::getenv("NVTX_INJECTION64_PATH") == nullptr) {
      set_env("NVTX_INJECTION64_PATH", SSGD_CUPTI_LIBRARY);
    }
#endif
    std::cout.flush();
    const ChildResult child = run_child(options->command);
    if (!child.started) {
      std::cerr << "ssgd trace: " << child.error << "\n";
      std::exit(127);
    }
    report(out_dir);
    std::cerr.flush();
    if (child.exited) std::exit(child.exit_status);
    // Die of the same signal, so that a launcher above sees what the command did.
    ::signal(child.signal, SIG_DFL);
    ::raise(child.signal);
    std::exit(128 + child.signal);
  });
}

}  // namespace ssgd::tools
