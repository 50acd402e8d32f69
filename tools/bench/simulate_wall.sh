#!/usr/bin/env bash
# Wall time of the whole `ssgd simulate` command (process start, CSV read,
# DAG, simulation, report) for ResNet-50 on 1,024 GPUs (128 nodes x 8) over
# 10 iterations, including the single-GPU baseline run. --no-fold: every rank
# is simulated, which is what this measures. Prints a table of
# RUNS runs (default 5) and their median. Usage: tools/bench/simulate_wall.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
ssgd=build/bin/ssgd
[ -x "$ssgd" ] || { echo "build first: tools/build.sh" >&2; exit 1; }
args=(simulate traces/datasets/resnet50_v100.csv --set cluster.nodes=128 --set cluster.gpus_per_node=8
      --set iterations=10 --set network.intra_node=nvlink2 --set network.inter_node=ib_edr100
      --no-fold --quiet --log warn)
times=()
printf "| run | wall time (s) |\n|---|---|\n"
for i in $(seq 1 "$runs"); do
  start=$(date +%s%N)
  "$ssgd" "${args[@]}"
  end=$(date +%s%N)
  t=$(awk -v ns=$((end - start)) 'BEGIN {printf "%.3f", ns / 1e9}')
  times+=("$t")
  printf "| %d | %.3f |\n" "$i" "$t"
done
median=$(printf "%s\n" "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
printf "| median | %.3f |\n" "$median"
