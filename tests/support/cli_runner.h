#pragma once
// Runs the built `ssgd` binary (SSGD_CLI) in a child process, for the
// command-line tests: its exit status or signal, and what it printed.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "tests/support/test_files.h"

namespace ssgd::testing {

struct CliResult {
  bool exited = false;  // ended by exit(), not by a signal
  int status = -1;      // the exit status when exited
  int signal = 0;       // the signal that ended it otherwise
  std::string out, err;
};

inline std::ostream& operator<<(std::ostream& os, const CliResult& r) {
  return os << (r.exited ? "exit " + std::to_string(r.status) : "signal " + std::to_string(r.signal))
            << "\n--- stdout ---\n" << r.out << "--- stderr ---\n" << r.err;
}

// Runs `binary args...` with `workdir` as its working directory; stdout and
// stderr go through files in `scratch`. `in_child`, when given, runs in the
// child just before exec (limits, environment, an alarm). Returns a default
// result with exited = false if it cannot fork.
inline CliResult run_cli(const std::string& binary, const std::vector<std::string>& args,
                         const std::filesystem::path& workdir, const std::filesystem::path& scratch,
                         const std::function<void()>& in_child = nullptr) {
  const std::filesystem::path out_path = scratch / "stdout.txt";
  const std::filesystem::path err_path = scratch / "stderr.txt";
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {};
  if (pid == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::chdir(workdir.c_str()) != 0 || ::dup2(out, 1) < 0 ||
        ::dup2(err, 2) < 0) {
      ::_exit(126);
    }
    ::close(out);
    ::close(err);
    if (in_child) in_child();
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0) {
  }
  CliResult r;
  r.exited = WIFEXITED(wstatus);
  if (r.exited) r.status = WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) r.signal = WTERMSIG(wstatus);
  r.out = read_file_bytes(out_path);
  r.err = read_file_bytes(err_path);
  return r;
}

// A TempDirTest that runs the `ssgd` binary in dir_, with a scratch folder
// for its temporary files that is removed after each run.
class CliTempDirTest : public TempDirTest {
 protected:
  CliResult run_ssgd(const std::string& binary, const std::vector<std::string>& args) {
    const std::filesystem::path scratch = dir_.string() + "_out";
    std::filesystem::create_directories(scratch);
    auto r = run_cli(binary, args, dir_, scratch);
    std::filesystem::remove_all(scratch);
    if (!r.exited && r.signal == 0) ADD_FAILURE() << "could not run " << binary;
    return r;
  }
};

}  // namespace ssgd::testing
