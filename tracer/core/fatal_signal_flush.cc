#include "tracer/core/fatal_signal_flush.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <iterator>
#include <mutex>

namespace ssgd::tracer {
namespace {

struct Handled {
  int signal;
  bool only_if_default;  // take it over only when its disposition is SIG_DFL
};

constexpr Handled kSignals[] = {
    {SIGSEGV, false}, {SIGBUS, false}, {SIGFPE, false}, {SIGILL, false},
    {SIGABRT, false}, {SIGTERM, false}, {SIGINT, true}, {SIGHUP, true},
};
constexpr int kCount = static_cast<int>(std::size(kSignals));

// Nothing to wait for: the flush could not be requested.
constexpr std::uint64_t kNoTicket = UINT64_MAX;

// Everything the handler reads. Only lock-free atomics and the saved
// sigactions, which are written before the handler that reads them is
// installed and not changed while it is.
struct State {
  std::atomic<TraceSink*> sink{nullptr};
  std::atomic<std::int64_t> wait_ns{0};
  std::atomic<pid_t> pid{0};           // the process that installed the handlers
  std::atomic<pid_t> flushing_tid{0};  // the thread whose flush is under way
  std::atomic<std::uint64_t> ticket{0};
  std::atomic<std::int64_t> deadline_ns{0};  // of the flush under way
  struct sigaction previous[kCount] = {};
  bool installed[kCount] = {};
  std::mutex install_mutex;  // install and uninstall only, never the handler
};

State& state() {
  static State s;  // never destroyed: a signal can come during exit
  return s;
}

pid_t current_tid() noexcept { return static_cast<pid_t>(::syscall(SYS_gettid)); }

std::int64_t monotonic_ns() noexcept {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

void sleep_1ms() noexcept {
  const timespec step{0, 1'000'000};
  ::nanosleep(&step, nullptr);  // EINTR: the loop checks again
}

int index_of(int sig) noexcept {
  for (int i = 0; i < kCount; ++i) {
    if (kSignals[i].signal == sig) return i;
  }
  return -1;
}

// Asks the writer for a flush and waits for it, bounded; returns at once
// where waiting could only hang (see the header). A signal that comes while
// a flush is under way, on this thread (nested) or another, waits for that
// same flush until the same deadline.
void flush_before_dying(State& s) noexcept {
  TraceSink* sink = s.sink.load(std::memory_order_acquire);
  if (sink == nullptr || ::getpid() != s.pid.load(std::memory_order_relaxed)) return;
  if (sink->on_writer_thread()) return;  // the flush would wait for this very thread
  const pid_t self = current_tid();
  pid_t owner = 0;
  const bool mine = s.flushing_tid.compare_exchange_strong(owner, self, std::memory_order_acq_rel);
  if (mine) {
    s.deadline_ns.store(monotonic_ns() + s.wait_ns.load(std::memory_order_relaxed),
                        std::memory_order_release);
    const std::uint64_t t = sink->request_signal_flush();
    s.ticket.store(t == 0 ? kNoTicket : t, std::memory_order_release);
    owner = self;
  }
  for (;;) {
    const std::uint64_t t = s.ticket.load(std::memory_order_acquire);
    if (t == kNoTicket || (t != 0 && sink->signal_flush_done(t))) break;
    if (!mine && s.flushing_tid.load(std::memory_order_acquire) != owner) break;
    // 0 while the owner has not set it yet (this signal interrupted it): go on.
    if (monotonic_ns() >= s.deadline_ns.load(std::memory_order_acquire)) break;
    sleep_1ms();
  }
  if (mine) {
    // The flush is over (or abandoned): a later signal, if the process
    // survives this one, flushes again.
    s.ticket.store(0, std::memory_order_release);
    s.deadline_ns.store(0, std::memory_order_release);
    s.flushing_tid.store(0, std::memory_order_release);
  }
}

void set_default(int sig) noexcept {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
}

// Delivers the signal as if this handler had never been installed.
void hand_on(State& s, int i, int sig, siginfo_t* info, void* context) noexcept {
  const struct sigaction& prev = s.previous[i];
  const bool with_info = (prev.sa_flags & SA_SIGINFO) != 0;
  if (!with_info && prev.sa_handler == SIG_IGN) return;  // never installed over SIG_IGN
  if (!with_info && prev.sa_handler == SIG_DFL) {
    // The signal is blocked while this handler runs, so the raised copy
    // stays pending and is delivered, with the default action, as soon as
    // the handler returns (a hardware fault would also recur on return).
    set_default(sig);
    ::raise(sig);
    return;
  }
  // What the kernel would have done on entry to the previous handler.
  if ((prev.sa_flags & SA_RESETHAND) != 0) set_default(sig);
  sigset_t block = prev.sa_mask;
  sigset_t old;
  if ((prev.sa_flags & SA_NODEFER) == 0) sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  if ((prev.sa_flags & SA_NODEFER) != 0) {
    sigset_t self;
    sigemptyset(&self);
    sigaddset(&self, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &self, nullptr);
  }
  if (with_info) {
    prev.sa_sigaction(sig, info, context);
  } else {
    prev.sa_handler(sig);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  State& s = state();
  const int i = index_of(sig);
  if (i < 0) return;
  flush_before_dying(s);
  errno = saved_errno;
  hand_on(s, i, sig, info, context);
  errno = saved_errno;
}

bool is_ours(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) != 0 && a.sa_sigaction == on_fatal_signal;
}

}  // namespace

int install_fatal_signal_flush(TraceSink& sink, std::chrono::milliseconds wait) noexcept {
  State& s = state();
  std::lock_guard lock(s.install_mutex);
  s.wait_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count(),
                  std::memory_order_relaxed);
  s.pid.store(::getpid(), std::memory_order_relaxed);
  s.sink.store(&sink, std::memory_order_release);
  int count = 0;
  for (int i = 0; i < kCount; ++i) {
    if (s.installed[i]) {
      ++count;
      continue;
    }
    const int sig = kSignals[i].signal;
    struct sigaction prev = {};
    if (::sigaction(sig, nullptr, &prev) != 0 || is_ours(prev)) continue;
    const bool with_info = (prev.sa_flags & SA_SIGINFO) != 0;
    const bool is_default = !with_info && prev.sa_handler == SIG_DFL;
    const bool is_ignored = !with_info && prev.sa_handler == SIG_IGN;
    if (is_ignored || (kSignals[i].only_if_default && !is_default)) continue;
    s.previous[i] = prev;
    struct sigaction ours = {};
    ours.sa_sigaction = on_fatal_signal;
    // The program's mask for its handler, and its choice of restarting
    // interrupted system calls, stay as they were.
    ours.sa_mask = prev.sa_mask;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | (prev.sa_flags & SA_RESTART);
    if (::sigaction(sig, &ours, nullptr) == 0) {
      s.installed[i] = true;
      ++count;
    }
  }
  return count;
}

void uninstall_fatal_signal_flush() noexcept {
  State& s = state();
  std::lock_guard lock(s.install_mutex);
  s.sink.store(nullptr, std::memory_order_release);
  for (int i = 0; i < kCount; ++i) {
    if (!s.installed[i]) continue;
    struct sigaction current = {};
    // A handler the program installed since then stays.
    if (::sigaction(kSignals[i].signal, nullptr, &current) == 0 && is_ours(current)) {
      ::sigaction(kSignals[i].signal, &s.previous[i], nullptr);
    }
    s.installed[i] = false;
  }
}

}  // namespace ssgd::tracer
