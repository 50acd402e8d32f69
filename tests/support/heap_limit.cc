#include "tests/support/heap_limit.h"

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include <gtest/gtest.h>

#include "common/error.h"
#include "tests/support/test_files.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SSGD_HEAP_LIMIT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(SSGD_HEAP_LIMIT_ASAN)
#define SSGD_HEAP_LIMIT_ASAN 1
#endif

#ifdef SSGD_HEAP_LIMIT_ASAN
#include <sanitizer/allocator_interface.h>
#endif

namespace ssgd::testing {
namespace {

// The child's counters. Only the child arms them.
std::atomic<bool> armed{false};
std::atomic<std::int64_t> held{0};
std::atomic<std::int64_t> peak{0};
std::int64_t limit = 0;
int result_fd = -1;

// What the child sends back: the end, the peak, then the message.
struct Header {
  int end;
  std::int64_t peak;
};

void send_and_exit(HeapRun::End end, std::int64_t peak_bytes, const char* message) {
  const Header h{static_cast<int>(end), peak_bytes};
  ssize_t ignored = ::write(result_fd, &h, sizeof h);
  ignored = ::write(result_fd, message, std::strlen(message));
  (void)ignored;
  ::_exit(0);
}

void on_allocated(std::int64_t bytes) {
  if (!armed.load(std::memory_order_relaxed)) return;
  const std::int64_t now = held.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (now > peak.load(std::memory_order_relaxed)) peak.store(now, std::memory_order_relaxed);
  if (now > limit) {
    armed.store(false);
    send_and_exit(HeapRun::End::kOverLimit, now, "the heap limit was reached");
  }
}

void on_freed(std::int64_t bytes) {
  if (armed.load(std::memory_order_relaxed)) held.fetch_sub(bytes, std::memory_order_relaxed);
}

#ifdef SSGD_HEAP_LIMIT_ASAN
void malloc_hook(const volatile void* p, std::size_t size) {
  if (p != nullptr) on_allocated(static_cast<std::int64_t>(size));
}
void free_hook(const volatile void* p) {
  if (p != nullptr) {
    on_freed(static_cast<std::int64_t>(__sanitizer_get_allocated_size(const_cast<const void*>(p))));
  }
}
#endif

}  // namespace

std::ostream& operator<<(std::ostream& os, const HeapRun& r) {
  static const char* const kEnds[] = {"returned", "InputError", "another exception",
                                      "over the heap limit", "crashed"};
  return os << kEnds[static_cast<int>(r.end)] << ", peak " << r.peak_bytes << " bytes"
            << (r.message.empty() ? "" : ": ") << r.message;
}

HeapRun run_with_heap_limit(std::int64_t limit_bytes, const std::function<void()>& read) {
  int fds[2];
  if (::pipe(fds) != 0) return {HeapRun::End::kCrashed, "pipe failed", 0};
  const pid_t pid = ::fork();
  if (pid < 0) return {HeapRun::End::kCrashed, "fork failed", 0};
  if (pid == 0) {
    ::close(fds[0]);
    result_fd = fds[1];
    limit = limit_bytes;
#ifdef SSGD_HEAP_LIMIT_ASAN
    __sanitizer_install_malloc_and_free_hooks(malloc_hook, free_hook);
#endif
    held = 0;
    peak = 0;
    armed = true;
    HeapRun::End end = HeapRun::End::kReturned;
    static char message[4096];
    message[0] = '\0';
    try {
      read();
    } catch (const InputError& e) {
      end = HeapRun::End::kInputError;
      std::strncpy(message, e.what(), sizeof message - 1);
    } catch (const std::exception& e) {
      end = HeapRun::End::kOtherException;
      std::strncpy(message, e.what(), sizeof message - 1);
    } catch (...) {
      end = HeapRun::End::kOtherException;
      std::strncpy(message, "not a std::exception", sizeof message - 1);
    }
    armed = false;
    send_and_exit(end, peak.load(), message);
  }
  ::close(fds[1]);
  std::string bytes;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      bytes.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  HeapRun r;
  if (bytes.size() < sizeof(Header)) {
    r.end = HeapRun::End::kCrashed;
    r.message = "the child ended without a result, status " + std::to_string(status);
    return r;
  }
  Header h{};
  std::memcpy(&h, bytes.data(), sizeof h);
  r.end = static_cast<HeapRun::End>(h.end);
  r.peak_bytes = h.peak;
  r.message = bytes.substr(sizeof h);
  return r;
}

void expect_refused_in_bounded_memory(
    const std::filesystem::path& path, const std::string& bytes, double per_byte,
    const std::string& expect, const std::function<void(const std::filesystem::path&)>& read) {
  constexpr std::int64_t kMiBytes = std::int64_t{1} << 20;
  write_file_bytes(path, bytes);
  const auto bound = static_cast<std::int64_t>(per_byte * static_cast<double>(bytes.size()));
  const HeapRun r = run_with_heap_limit(
      std::max<std::int64_t>(bound, 16 * kMiBytes) + 16 * kMiBytes, [&] { read(path); });
  const std::string name = path.filename().string();
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << name << ": " << r;
  EXPECT_NE(r.message.find(path.string()), std::string::npos) << r;
  EXPECT_NE(r.message.find(expect), std::string::npos) << r;
  EXPECT_LT(r.peak_bytes, std::max<std::int64_t>(bound, 4 * kMiBytes)) << name << ": " << r;
}

}  // namespace ssgd::testing

#ifndef SSGD_HEAP_LIMIT_ASAN
// A plain build: every operator new and delete of this test binary is
// counted while the child is armed, at malloc's usable size on both sides.
namespace {
void* counted_new(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  ssgd::testing::on_allocated(static_cast<std::int64_t>(::malloc_usable_size(p)));
  return p;
}
void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  ssgd::testing::on_freed(static_cast<std::int64_t>(::malloc_usable_size(p)));
  std::free(p);
}
}  // namespace

void* operator new(std::size_t size) { return counted_new(size); }
void* operator new[](std::size_t size) { return counted_new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_new(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_new(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
#endif
