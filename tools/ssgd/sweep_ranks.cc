#include "tools/ssgd/sweep_ranks.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include "common/error.h"

#ifdef SSGD_HAVE_MPI
#include <mpi.h>
#endif

namespace ssgd::tools {
namespace {

// The rank count a launcher announced, or 1.
int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(name); v != nullptr) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 1;
}

void run_alone(const std::vector<std::int64_t>& todo,
               const std::function<std::string(std::int64_t)>& run,
               const std::function<void(std::int64_t, const std::string&)>& done) {
  for (const std::int64_t point : todo) done(point, run(point));
}

#ifdef SSGD_HAVE_MPI

enum Tag : int { kAsk = 1, kWork = 2, kStop = 3 };

constexpr auto kPoll = std::chrono::microseconds(500);

// A message from `source` (or any rank) with `tag` (or any), once one is
// there; polled, so that waiting costs no CPU.
MPI_Status wait_for(int source, int tag) {
  MPI_Status status;
  for (;;) {
    int flag = 0;
    MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &status);
    if (flag != 0) return status;
    std::this_thread::sleep_for(kPoll);
  }
}

std::string receive_text(const MPI_Status& probed) {
  int count = 0;
  MPI_Get_count(&probed, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return text;
}

// A worker: asks for a point (sending the last result with the question),
// runs it, until rank 0 says stop.
void work(const std::function<std::string(std::int64_t)>& run) {
  std::string result;  // "<point> <record>" of the last point, empty at first
  for (;;) {
    MPI_Send(result.data(), static_cast<int>(result.size()), MPI_CHAR, 0, kAsk, MPI_COMM_WORLD);
    const MPI_Status status = wait_for(0, MPI_ANY_TAG);
    std::int64_t point = 0;
    MPI_Recv(&point, 1, MPI_INT64_T, 0, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kStop) return;
    result = std::to_string(point) + " " + run(point);
  }
}

// Rank 0: the points not yet handed out, shared by the other ranks and the
// thread of rank 0's own.
class Dispenser {
 public:
  explicit Dispenser(const std::vector<std::int64_t>& todo) : todo_(todo.begin(), todo.end()) {}
  std::optional<std::int64_t> next() {
    std::lock_guard lock(mutex_);
    if (todo_.empty()) return std::nullopt;
    const std::int64_t p = todo_.front();
    todo_.pop_front();
    return p;
  }

 private:
  std::mutex mutex_;
  std::deque<std::int64_t> todo_;
};

// Results of rank 0's own thread, for its main thread.
class Mailbox {
 public:
  void put(std::int64_t point, std::string record) {
    std::lock_guard lock(mutex_);
    items_.emplace_back(point, std::move(record));
  }
  std::deque<std::pair<std::int64_t, std::string>> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(items_, {});
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<std::int64_t, std::string>> items_;
};

void lead(int size, const std::vector<std::int64_t>& todo,
          const std::function<std::string(std::int64_t)>& run,
          const std::function<void(std::int64_t, const std::string&)>& done) {
  Dispenser dispenser(todo);
  Mailbox mailbox;
  std::exception_ptr local_failure;
  std::atomic<bool> local_done{false};
  std::thread local([&] {
    try {
      while (const auto p = dispenser.next()) mailbox.put(*p, run(*p));
    } catch (...) {
      local_failure = std::current_exception();
    }
    local_done = true;
  });
  int working = size - 1;  // ranks not yet told to stop
  try {
  while (working > 0 || !local_done) {
    bool busy = false;
    for (auto& [point, record] : mailbox.take()) {
      done(point, record);
      busy = true;
    }
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kAsk, MPI_COMM_WORLD, &flag, &status);
    if (flag != 0) {
      busy = true;
      const std::string message = receive_text(status);
      if (!message.empty()) {
        const std::size_t space = message.find(' ');
        done(std::stoll(message.substr(0, space)), message.substr(space + 1));
      }
      const std::optional<std::int64_t> p = dispenser.next();
      const std::int64_t point = p.value_or(-1);
      MPI_Send(&point, 1, MPI_INT64_T, status.MPI_SOURCE, p ? kWork : kStop, MPI_COMM_WORLD);
      if (!p) --working;
    }
    if (!busy) std::this_thread::sleep_for(kPoll);
  }
  } catch (...) {
    local.detach();  // the caller aborts every rank
    throw;
  }
  local.join();
  for (auto& [point, record] : mailbox.take()) done(point, record);
  if (local_failure) std::rethrow_exception(local_failure);
}

#endif

}  // namespace

SweepRanks::SweepRanks() {
  const int announced = launched_size();
  if (announced <= 1) return;
#ifdef SSGD_HAVE_MPI
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#else
  throw InputError({"mpirun", std::nullopt, std::nullopt, "-np"},
                   "this ssgd was built without MPI (CMake found no MPI, or SSGD_WITH_MPI=OFF), "
                   "so each of the " + std::to_string(announced) +
                       " ranks would run the whole sweep; run it without mpirun, or build "
                       "ssgd with libopenmpi-dev installed");
#endif
}

SweepRanks::~SweepRanks() {
#ifdef SSGD_HAVE_MPI
  if (mpi_) MPI_Finalize();
#endif
}

std::vector<bool> SweepRanks::gather_ok(bool ok) {
#ifdef SSGD_HAVE_MPI
  if (mpi_) {
    const int mine = ok ? 1 : 0;
    std::vector<int> all(static_cast<std::size_t>(size_));
    MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return {all.begin(), all.end()};
  }
#endif
  return {ok};
}

void SweepRanks::exit_quietly(int status) {
#ifdef SSGD_HAVE_MPI
  if (mpi_) MPI_Finalize();
  mpi_ = false;
#endif
  std::exit(status);
}

void SweepRanks::abort(int status) {
#ifdef SSGD_HAVE_MPI
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, status);
#endif
  std::exit(status);
}

void SweepRanks::share(const std::vector<std::int64_t>& todo,
                       const std::function<std::string(std::int64_t)>& run,
                       const std::function<void(std::int64_t, const std::string&)>& done) {
#ifdef SSGD_HAVE_MPI
  if (mpi_) {
    if (rank_ == 0) {
      lead(size_, todo, run, done);
    } else {
      work(run);
    }
    return;
  }
#endif
  run_alone(todo, run, done);
}

}  // namespace ssgd::tools
