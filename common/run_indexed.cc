#include "common/run_indexed.h"
#include "common/work_context.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace ssgd {
namespace {

thread_local std::optional<std::size_t> t_run_index;

// Sets this thread's index for the length of one item (nested runs give the
// outer index back).
class IndexScope {
 public:
  explicit IndexScope(std::size_t i) : saved_(t_run_index) { t_run_index = i; }
  ~IndexScope() { t_run_index = saved_; }
  IndexScope(const IndexScope&) = delete;
  IndexScope& operator=(const IndexScope&) = delete;

 private:
  std::optional<std::size_t> saved_;
};

}  // namespace

std::optional<std::size_t> current_run_index() { return t_run_index; }

void run_indexed(std::size_t n, std::size_t jobs, const std::function<void(std::size_t)>& work) {
  std::vector<std::exception_ptr> failures(n);
  // What each failed item's thread was doing (common/work_context.h), for
  // an out-of-memory message on the thread that rethrows it.
  std::vector<std::string> doing(n);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        const IndexScope scope(i);
        work(i);
      } catch (...) {
        failures[i] = std::current_exception();
        try {
          doing[i] = work_context_at_failure();
        } catch (...) {  // out of memory for the phrase too: the failure is kept
        }
      }
    }
  };
  const std::size_t threads = std::min(std::max<std::size_t>(jobs, 1), n);
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  pool.clear();  // joins
  for (std::size_t i = 0; i < n; ++i) {
    if (!failures[i]) continue;
    carry_work_context_failure(doing[i]);
    std::rethrow_exception(failures[i]);
  }
}

}  // namespace ssgd
