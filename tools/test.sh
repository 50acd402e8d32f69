#!/usr/bin/env bash
# Builds ssgd and runs the whole test suite: install what is missing, build
# (tests and benchmarks included), run every test with ctest. Validation
# tests read ../shared/data when it is there and skip with a message when not.
#
# Then, unless SSGD_CI_SANITIZERS=0: the same suite built with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer (build-fuzz/, through
# tools/fuzz.sh --build-only --suite), run with ctest, and a short run of
# every fuzzer on its corpus (SSGD_CI_FUZZ_SECONDS each, 10 by default).
# docs/reliability.md says what they cover. Any finding fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh -DSSGD_BUILD_TESTS=ON -DSSGD_BUILD_BENCHMARKS=ON
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${SSGD_CI_SANITIZERS:-1}" = 0 ]; then
  echo "test.sh: SSGD_CI_SANITIZERS=0: the sanitized suite and the fuzz smoke are skipped"
  exit 0
fi
start=$(date +%s)
tools/fuzz.sh --build-only --suite
built=$(date +%s)
# Stop at the first report, with a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# tests/tracer/fatal_signal_flush_test.cc raises SIGSEGV, SIGBUS and SIGFPE on
# purpose and checks that the tracer's handler hands each on to the default
# action: ASan must leave those three signals alone there (and only there).
signal_tests='FatalSignal(Death|Flush)Test\.|TracerKillTest\.'
# Tests labelled no_native run Python or a browser on what the normal suite
# already checked (the testbed's logic, the marks helper's, the report's
# charts in Chromium: 100 s of the sanitized suite's 300): not again here.
ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -E "$signal_tests" -LE no_native
ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0 \
  ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -R "$signal_tests"
tested=$(date +%s)
tools/fuzz.sh --no-build --time "${SSGD_CI_FUZZ_SECONDS:-10}"
echo "test.sh: sanitizers: build $((built - start)) s, suite $((tested - built)) s, fuzz smoke $(( $(date +%s) - tested )) s"
