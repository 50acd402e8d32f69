#!/usr/bin/env bash
# Times `ssgd sweep` on tools/bench/sweep_speedup.yaml (300 points) alone and
# under `mpirun -np N` for each N given (default: 1 2 4), checks that every
# run wrote the same bytes, and prints wall time and speedup against the run
# alone (docs/performance.md, "Sweeps over MPI ranks").
#
#   tools/bench/sweep_speedup.sh [--grid GRID.yaml] [N ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
grid=tools/bench/sweep_speedup.yaml
if [ "${1:-}" = "--grid" ]; then grid=$2; shift 2; fi
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 4)
ssgd=build/bin/ssgd
[ -x "$ssgd" ] || { echo "sweep_speedup: build first (tools/build.sh)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "sweep_speedup: no mpirun (openmpi-bin)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe)
[ "$(id -u)" -ne 0 ] || mpi+=(--allow-run-as-root)

seconds() { local t0 t1; t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }

points=$("$ssgd" sweep "$grid" -o "$work/count.jsonl" -q --restart 2>&1 >/dev/null | \
  sed -n 's/.*sweep: \([0-9]*\) points written.*/\1/p')
echo "sweep_speedup: $grid, $points points, $(nproc) cores"
alone=$(seconds "$ssgd" sweep "$grid" -o "$work/alone.jsonl" -q 2>/dev/null)
printf '%-10s %10s %8s\n' ranks wall_s speedup
printf '%-10s %10.2f %8.2f\n' alone "$alone" 1
for n in "${ranks[@]}"; do
  t=$(seconds "${mpi[@]}" -np "$n" "$ssgd" sweep "$grid" -o "$work/np$n.jsonl" -q 2>/dev/null)
  cmp -s "$work/alone.jsonl" "$work/np$n.jsonl" || { echo "sweep_speedup: -np $n wrote other bytes" >&2; exit 1; }
  printf '%-10s %10.2f %8.2f\n' "mpirun -np $n" "$t" "$(awk -v a="$alone" -v b="$t" 'BEGIN { print a / b }')"
done
echo "sweep_speedup: every run wrote the same $(wc -l < "$work/alone.jsonl") records"
