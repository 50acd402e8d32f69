#!/usr/bin/env bash
# Wall time and peak memory of `ssgd simulate` with the interference model
# on and off (scenarios/README.md, "Interference"): ResNet-50
# (traces/datasets/resnet50_v100.csv) on 1,024 GPUs (128 HGX H100 nodes), 10
# iterations, 5% normal jitter per task so that every rank is simulated, with
# the single-GPU baseline. Off, the run is a list schedule; on, it runs as
# events whose ends move as collectives start and stop. RUNS (default 3)
# interleaved rounds of both; prints each run and the medians.
# Usage: tools/bench/interference_wall.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
ssgd=build/bin/ssgd
[ -x "$ssgd" ] || { echo "build first: tools/build.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(simulate traces/datasets/resnet50_v100.csv --set platform.preset=hgx_h100
        --set cluster.nodes=128 --set perturb.jitter=normal:0.05 --set iterations=10
        --quiet --log warn)
declare -A times
printf "| round | model | wall time (s) | peak RSS (MB) |\n|---|---|---|---|\n"
for i in $(seq 1 "$runs"); do
  for model in none contention; do
    extra=(--set interference.model=$model)
    [ "$model" = contention ] && extra+=(--set interference.gpu.compute=0.14
                                         --set interference.gpu.memory=0.56)
    /usr/bin/time -f "%e %M" -o "$work/time" "$ssgd" "${common[@]}" "${extra[@]}"
    read -r t kb < "$work/time"
    times[$model]+="$t "
    printf "| %d | %s | %.2f | %d |\n" "$i" "$model" "$t" "$((kb / 1024))"
  done
done
for model in none contention; do
  median=$(printf "%s\n" ${times[$model]} | sort -n |
           awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
  printf "| median | %s | %.2f | |\n" "$model" "$median"
done
