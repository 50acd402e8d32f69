#!/usr/bin/env bash
# Builds ssgd and runs the whole test suite: install what is missing, build
# (tests and benchmarks included), run every test with ctest. Validation
# tests read ../shared/data when it is there and skip with a message when not.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh -DSSGD_BUILD_TESTS=ON -DSSGD_BUILD_BENCHMARKS=ON
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs"
