# Sanitizer and fuzzing builds (docs/reliability.md).
#
#   -DSSGD_SANITIZE=ON  every target built with AddressSanitizer and
#                       UndefinedBehaviorSanitizer, stopping at the first
#                       report (-fno-sanitize-recover=all); gcc or clang.
#   -DSSGD_FUZZ=ON      implies SSGD_SANITIZE; clang only. Everything is also
#                       built with libFuzzer's coverage (fuzzer-no-link) and the
#                       targets in fuzz/ are linked with -fsanitize=fuzzer, so
#                       one build serves both the sanitized suite and the
#                       fuzzers (tools/fuzz.sh, tools/test.sh).
option(SSGD_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(SSGD_FUZZ "Build the libFuzzer targets of fuzz/ (clang only; implies SSGD_SANITIZE)" OFF)

if(SSGD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR
      "SSGD_FUZZ=ON needs clang (libFuzzer), but the C++ compiler is "
      "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER}). Configure a fresh build folder with "
      "-DCMAKE_CXX_COMPILER=clang++ (Debian: apt-get install clang libclang-rt-14-dev), "
      "or use tools/fuzz.sh, which does.")
  endif()
  set(SSGD_SANITIZE ON CACHE BOOL "Build with AddressSanitizer and UndefinedBehaviorSanitizer" FORCE)
endif()

if(SSGD_SANITIZE)
  set(_ssgd_sanitizers address,undefined)
  if(SSGD_FUZZ)
    set(_ssgd_sanitizers address,undefined,fuzzer-no-link)
  endif()
  add_compile_options(-fsanitize=${_ssgd_sanitizers} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()
