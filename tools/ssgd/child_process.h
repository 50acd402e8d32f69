#pragma once
// Runs a command as a child process and waits for it, the way a launcher
// wrapper should: signals sent to this process by another process (kill,
// a batch system, torchrun or mpirun stopping the job) are forwarded to the
// child; signals from the terminal already reach the child through its
// process group and are not sent twice.

#include <string>
#include <vector>

namespace ssgd::tools {

struct ChildResult {
  bool started = false;    // false: fork or exec failed, see `error`
  bool exited = false;     // ended by exit(); otherwise killed by `signal`
  int exit_status = 0;
  int signal = 0;
  std::string error;       // e.g. "cannot run 'foo': No such file or directory"
};

// Runs `argv` (argv[0] searched in PATH) with this process's environment.
ChildResult run_child(const std::vector<std::string>& argv);

}  // namespace ssgd::tools
