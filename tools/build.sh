#!/usr/bin/env bash
# Configures and builds ssgd into build/ (the program lands at build/bin/ssgd).
# Extra arguments go to cmake's configure step, e.g. -DSSGD_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
if command -v ninja >/dev/null 2>&1 && [ ! -f build/CMakeCache.txt ]; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build build -j"$jobs"
