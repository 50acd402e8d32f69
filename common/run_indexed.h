#pragma once
// Runs work(i) for every i in [0, n) on up to `jobs` threads (the calling
// thread is one of them). Every index runs even when one throws; the failure
// of the lowest index is then rethrown, so what the caller sees does not
// depend on the number of threads.

#include <cstddef>
#include <functional>

namespace ssgd {

void run_indexed(std::size_t n, std::size_t jobs, const std::function<void(std::size_t)>& work);

}  // namespace ssgd
