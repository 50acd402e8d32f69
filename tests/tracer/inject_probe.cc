// Loads libssgd_tracer.so as the CUDA driver would and calls
// InitializeInjection twice, then exits normally (so the atexit handlers
// run). A program of its own: the test binary links ssgd's protobuf
// messages, and the library's copy of them would collide with those in the
// shared protobuf's descriptor pool, as it would in any host linking them.
// With a second argument `steps`, then reports steps 0 to 4 through the
// tracing window's hook, ssgd_tracer_step (94: not exported).
// Exit status: 0 when both calls returned 1; 91-94 otherwise.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 3 && std::strcmp(argv[2], "steps") == 0)) return 90;
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 91;
  }
  auto* init = reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection"));
  if (init == nullptr) return 92;
  const int first = init();
  const int second = init();  // a second call does nothing
  if (argc == 3) {
    auto* step = reinterpret_cast<void (*)(std::int64_t, int)>(::dlsym(lib, "ssgd_tracer_step"));
    if (step == nullptr) return 94;
    for (std::int64_t n = 0; n < 5; ++n) {
      step(n, 0);
      step(n, 1);
    }
    step(9, 7);  // not a phase: ignored
  }
  return first == 1 && second == 1 ? 0 : 93;
}
