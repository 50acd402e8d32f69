#include "common/run_indexed.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace ssgd {

void run_indexed(std::size_t n, std::size_t jobs, const std::function<void(std::size_t)>& work) {
  std::vector<std::exception_ptr> failures(n);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        work(i);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min(std::max<std::size_t>(jobs, 1), n);
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  pool.clear();  // joins
  for (const auto& f : failures) {
    if (f) std::rethrow_exception(f);
  }
}

}  // namespace ssgd
