// Loads libssgd_tracer.so as the CUDA driver would and calls
// InitializeInjection twice, then exits normally (so the atexit handlers
// run). A program of its own: the test binary links ssgd's protobuf
// messages, and the library's copy of them would collide with those in the
// shared protobuf's descriptor pool, as it would in any host linking them.
// Exit status: 0 when both calls returned 1; 91-93 otherwise.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 90;
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 91;
  }
  auto* init = reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection"));
  if (init == nullptr) return 92;
  const int first = init();
  const int second = init();  // a second call does nothing
  return first == 1 && second == 1 ? 0 : 93;
}
