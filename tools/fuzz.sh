#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/reliability.md) with clang,
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer into build-fuzz/,
# and runs any or all of them for a given time.
#
#   tools/fuzz.sh [--time SECONDS] [--jobs N] [TARGET...]   build, then fuzz each TARGET
#                                                           (default: all) for SECONDS (60)
#   tools/fuzz.sh --list                                    the targets
#   tools/fuzz.sh --build-only [--suite]                    configure and build only; --suite
#                                                           builds the sanitized test suite too
#   tools/fuzz.sh --no-build ...                            fuzz with what is built
#   tools/fuzz.sh --together ...                            run the targets at once, sharing
#                                                           the cores, each for SECONDS of wall
#                                                           time (the table adds each one's CPU
#                                                           seconds)
#
# Each target's corpus grows in build-fuzz/corpus/<target>/ (outside git),
# starting from the seeds fuzz/collect_seeds.sh gathers into
# build-fuzz/seeds/<target>/; fuzz/dict/<target>.dict is its dictionary.
# Per target it prints the runs, the seconds, the corpus size and the result.
# A finding (crash, sanitizer report, broken promise, timeout, leak, out of
# memory) is saved under build-fuzz/findings/<target>/, its path printed, and
# the script exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build-fuzz
targets_all=(trace_container text_trace layer_csv bcaffe_log osu_log nccl_tests_text
             nccl_tests_json kineto_json scenario_yaml calibration_yaml trace_merge chakra_et
             report_input sweep_grid nsys_sqlite)
# Built only where SQLite is (ssgd import nsys): left out, with a note, elsewhere.
optional_targets=" nsys_sqlite "

time_s=60
jobs=1
do_build=1
build_only=0
suite=0
together=0
targets=()
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --time) time_s=${2:?--time needs a number of seconds}; shift 2 ;;
    --time=*) time_s=${1#--time=}; shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
    --jobs=*) jobs=${1#--jobs=}; shift ;;
    --list) printf '%s\n' "${targets_all[@]}"; exit 0 ;;
    --build-only) build_only=1; shift ;;
    --suite) suite=1; shift ;;
    --no-build) do_build=0; shift ;;
    --together) together=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "tools/fuzz.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case $time_s in ''|*[!0-9]*) echo "tools/fuzz.sh: --time must be a whole number of seconds, got '$time_s'" >&2; exit 2 ;; esac
case $jobs in ''|*[!0-9]*|0) echo "tools/fuzz.sh: --jobs must be a whole number >= 1, got '$jobs'" >&2; exit 2 ;; esac
[ ${#targets[@]} -eq 0 ] && targets=("${targets_all[@]}")
for t in "${targets[@]}"; do
  if [[ " ${targets_all[*]} " != *" $t "* ]]; then
    echo "tools/fuzz.sh: unknown target '$t'; the targets are: ${targets_all[*]}" >&2
    exit 2
  fi
done

# The sanitizers' settings, for the fuzzers and the sanitized suite alike:
# stop at the first report, with a stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ $do_build -eq 1 ]; then
  if ! command -v clang++ >/dev/null 2>&1; then
    echo "tools/fuzz.sh: clang++ is missing; tools/install_deps.sh installs clang and libclang-rt-14-dev" >&2
    exit 1
  fi
  launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  generator=()
  if command -v ninja >/dev/null 2>&1 && [ ! -f $build/CMakeCache.txt ]; then generator=(-G Ninja); fi
  # -O1 with line tables: readable stacks, a quarter of -O2's build time.
  cmake -S . -B $build "${generator[@]}" "${launcher[@]}" \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DSSGD_FUZZ=ON -DSSGD_WITH_CUDA=OFF -DSSGD_BUILD_TESTS=ON -DSSGD_BUILD_BENCHMARKS=OFF >/dev/null
  build_jobs=$(nproc 2>/dev/null || echo 2)
  if [ $suite -eq 1 ]; then
    cmake --build $build -j"$build_jobs"
  else
    cmake --build $build -j"$build_jobs" --target fuzzers ssgd
  fi
fi
[ $build_only -eq 1 ] && exit 0

present=()
for t in "${targets[@]}"; do
  if [ ! -x $build/bin/${t}_fuzzer ]; then
    if [[ "$optional_targets" == *" $t "* ]]; then
      echo "tools/fuzz.sh: $t left out: its fuzzer is built only with SQLite (libsqlite3-dev)" >&2
      continue
    fi
    echo "tools/fuzz.sh: $build/bin/${t}_fuzzer is not built (run without --no-build)" >&2
    exit 1
  fi
  present+=("$t")
done
targets=("${present[@]}")

fuzz/collect_seeds.sh $build $build/seeds >/dev/null
# The targets' scratch files, in memory when /dev/shm is there.
scratch_base=/dev/shm
[ -d /dev/shm ] && [ -w /dev/shm ] || scratch_base=${TMPDIR:-/tmp}
export SSGD_FUZZ_TMP=$(mktemp -d "$scratch_base/ssgd-fuzz.XXXXXX")
trap 'rm -rf "$SSGD_FUZZ_TMP"' EXIT

# fuzz_one TARGET: runs it and writes its table row to $build/logs/TARGET.row
# (exit status 1 there when it found something).
fuzz_one() {
  local t=$1 corpus=$build/corpus/$1 found=$build/findings/$1 log=$build/logs/$1.log
  local args start rc seconds runs files bytes result unit why cpu
  mkdir -p "$corpus" "$found" "$(dirname "$log")"
  # One allocation over 1 GiB is reported at once, with its stack and input;
  # libFuzzer's report of a process over 2.5 GiB in all walks the whole heap
  # first, which can take minutes, so the run has a deadline of its own.
  args=(-max_total_time="$time_s" -timeout=30 -malloc_limit_mb=1024 -rss_limit_mb=2560 -print_final_stats=1
        -artifact_prefix="$root/$found/")
  [ -f fuzz/dict/$t.dict ] && args+=(-dict=fuzz/dict/$t.dict)
  [ "$jobs" -gt 1 ] && args+=(-fork="$jobs" -ignore_crashes=0)
  start=$(date +%s)
  set +e
  # The CPU time it had (user + system, from bash's `times` of this subshell's children).
  ( timeout -k 10 $((time_s + 300)) $build/bin/${t}_fuzzer "${args[@]}" "$corpus" "$build/seeds/$t" >"$log" 2>&1
    rc=$?; times >"$build/logs/$t.cpu"; exit $rc )
  rc=$?
  set -e
  seconds=$(( $(date +%s) - start ))
  # `times`' second line: the children's user and system time, "XmY.YYYs XmY.YYYs".
  cpu=$(sed -n 2p "$build/logs/$t.cpu" 2>/dev/null | tr 'ms' '  ' |
        awk 'NF >= 4 {printf "%d", $1 * 60 + $2 + $3 * 60 + $4}')
  runs=$(grep -a -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{s += $2} END {print s + 0}' || true)
  if [ "${runs:-0}" -eq 0 ]; then runs=$(grep -a -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true); fi
  files=$(find "$corpus" -type f | wc -l)
  bytes=$(find "$corpus" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  if [ $rc -eq 0 ]; then
    result=clean
  else
    unit=$(grep -a -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //' || true)
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "tools/fuzz.sh: $t ran $((time_s + 300)) s and was stopped" >>"$log"
    why=$(grep -a -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|ssgd fuzz finding|ParseDictionaryFile|was stopped" "$log" | cut -c1-160 || true)
    result="FINDING (exit $rc): ${why:-see $log}; input: ${unit:-none saved}; log: $log"
  fi
  printf '%-18s %10s %8s %8s %6d files %7d KiB  %s\n' "$t" "${runs:-?}" "$seconds" "${cpu:-?}" "$files" \
    $((bytes / 1024)) "$result" >"$build/logs/$t.row"
  [ $rc -eq 0 ]
}

findings=0
printf '%-18s %10s %8s %8s %21s  %s\n' target runs seconds cpu_s corpus result
if [ $together -eq 1 ]; then
  pids=()
  for t in "${targets[@]}"; do
    fuzz_one "$t" &
    pids+=($!)
  done
  for i in "${!targets[@]}"; do
    wait "${pids[$i]}" || findings=$((findings + 1))
    cat "$build/logs/${targets[$i]}.row"
  done
else
  for t in "${targets[@]}"; do
    fuzz_one "$t" || findings=$((findings + 1))
    cat "$build/logs/$t.row"
  done
fi
if [ $findings -gt 0 ]; then
  echo "tools/fuzz.sh: $findings target(s) with findings; reproduce one with build-fuzz/bin/<target>_fuzzer <input>" >&2
  exit 1
fi
