#pragma once
// Runs a reader in a forked child whose heap is counted and limited, for the
// tests of bounded readers (docs/reliability.md): a degenerate input (a run
// of zeros, empty records, a gzip bomb) must be refused or read in memory
// bounded per input byte. The count is of what the heap holds at once above
// what it held when the child started: every operator new and delete in a
// plain build, every malloc and free through the sanitizer's hooks under
// AddressSanitizer. Going past the limit ends the child at once (a reader
// that would take the machine's memory is stopped at the limit), reported as
// kOverLimit with the peak.
//
// Add heap_limit.cc to the test binary's sources: in a plain build it
// replaces the binary's global operator new and delete. Fork only from a
// process with no other thread (docs/reliability.md).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

namespace ssgd::testing {

struct HeapRun {
  enum class End { kReturned, kInputError, kOtherException, kOverLimit, kCrashed };
  End end = End::kCrashed;
  std::string message;  // the exception's what(), or what went wrong
  std::int64_t peak_bytes = 0;
};

std::ostream& operator<<(std::ostream& os, const HeapRun& r);

// Runs `read` in a child with `limit_bytes` of heap (above what it held at
// the fork). The child's result comes back through a pipe.
HeapRun run_with_heap_limit(std::int64_t limit_bytes, const std::function<void()>& read);

// Writes `bytes` to `path` and runs `read(path)` under a heap limit of
// `per_byte` bytes for each byte of the file (at least 16 MiB, with 16 MiB
// of room above): expects an InputError that names the file and holds
// `expect`, and a peak under `per_byte` bytes a byte (at least 4 MiB).
void expect_refused_in_bounded_memory(
    const std::filesystem::path& path, const std::string& bytes, double per_byte,
    const std::string& expect, const std::function<void(const std::filesystem::path&)>& read);

}  // namespace ssgd::testing
