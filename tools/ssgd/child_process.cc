#include "tools/ssgd/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace ssgd::tools {
namespace {

volatile sig_atomic_t g_child = 0;

constexpr std::array<int, 7> kForwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT,
                                           SIGUSR1, SIGUSR2, SIGCONT};

// Kernel-made signals (si_code SI_KERNEL, e.g. Ctrl-C on the terminal) went
// to the whole foreground process group, child included; only signals that
// another process sent to us alone are passed on.
void forward(int sig, siginfo_t* info, void*) {
  const pid_t child = g_child;
  if (child > 0 && info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE)) {
    ::kill(child, sig);
  }
}

}  // namespace

ChildResult run_child(const std::vector<std::string>& argv_strings) {
  ChildResult result;
  std::vector<char*> argv;
  for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // exec's errno comes back through a close-on-exec pipe: an empty read
  // means exec succeeded.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  struct sigaction action {};
  action.sa_sigaction = forward;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  std::array<struct sigaction, kForwarded.size()> previous{};
  for (std::size_t i = 0; i < kForwarded.size(); ++i) {
    ::sigaction(kForwarded[i], &action, &previous[i]);
  }

  const pid_t pid = ::fork();
  if (pid == 0) {
    for (std::size_t i = 0; i < kForwarded.size(); ++i) {
      ::sigaction(kForwarded[i], &previous[i], nullptr);
    }
    ::close(pipe_fds[0]);
    ::execvp(argv[0], argv.data());
    const int e = errno;
    [[maybe_unused]] const ssize_t n = ::write(pipe_fds[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  if (pid < 0) {
    result.error = std::string("cannot fork: ") + std::strerror(errno);
  } else {
    g_child = pid;
    int exec_errno = 0;
    ssize_t n = 0;
    while ((n = ::read(pipe_fds[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    g_child = 0;
    if (n == static_cast<ssize_t>(sizeof exec_errno)) {
      result.error = "cannot run '" + argv_strings[0] + "': " + std::strerror(exec_errno);
    } else {
      result.started = true;
      result.exited = WIFEXITED(wstatus);
      result.exit_status = result.exited ? WEXITSTATUS(wstatus) : 0;
      result.signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
    }
  }
  ::close(pipe_fds[0]);
  for (std::size_t i = 0; i < kForwarded.size(); ++i) {
    ::sigaction(kForwarded[i], &previous[i], nullptr);
  }
  return result;
}

}  // namespace ssgd::tools
