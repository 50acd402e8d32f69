#pragma once
// Runs work(i) for every i in [0, n) on up to `jobs` threads (the calling
// thread is one of them). Every index runs even when one throws; the failure
// of the lowest index is then rethrown, so what the caller sees does not
// depend on the number of threads.

#include <cstddef>
#include <functional>
#include <optional>

namespace ssgd {

void run_indexed(std::size_t n, std::size_t jobs, const std::function<void(std::size_t)>& work);

// The index this thread is running work(i) for inside run_indexed; none
// outside it. Lets what the items say be put back in index order whatever
// the threads did (FoldedWarnings, common/logging.h).
std::optional<std::size_t> current_run_index();

}  // namespace ssgd
