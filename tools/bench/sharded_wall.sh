#!/usr/bin/env bash
# Wall time and peak memory of `ssgd simulate` of a ZeRO-3 step (issue 34's
# target: under 10 s and 1 GB): an 80-layer transformer-like profile (80
# units of 200 M bf16 parameters, 4 ms forward and 8 ms backward each) on
# 16,384 GPUs (2,048 HGX H100 nodes), 10 iterations, 5% normal jitter per
# task, so that no rank folds into another: every rank is simulated, with the
# single-GPU baseline. Prints a table of RUNS runs (default 3), their median
# wall time and the largest peak RSS. STRATEGY (default zero3) is
# sharding.strategy: hsdp runs one-node shard groups, 2,048 of them.
# Usage: tools/bench/sharded_wall.sh [RUNS] [STRATEGY]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-3}
strategy=${2:-zero3}
case "$strategy" in
  zero1 | zero2 | zero3 | hsdp) ;;
  *) echo "STRATEGY must be zero1, zero2, zero3 or hsdp, got '$strategy'" >&2; exit 2 ;;
esac
ssgd=build/bin/ssgd
[ -x "$ssgd" ] || { echo "build first: tools/build.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profile=$work/l80.csv
{
  echo "# model: synthetic 80-block transformer (tools/bench/sharded_wall.sh)"
  echo "# batch_per_gpu: 1"
  echo "# grad_dtype: bf16"
  echo "layer,name,forward_ns,backward_ns,grad_bytes,unit"
  for l in $(seq 0 79); do echo "$l,block$l,4000000,8000000,400000000,$l"; done
} > "$profile"
args=(simulate "$profile" --set platform.preset=hgx_h100 --set cluster.nodes=2048
      --set sharding.strategy="$strategy" --set perturb.jitter=normal:0.05 --set iterations=10
      --quiet --log warn)
times=()
peak=0
printf "| run | wall time (s) | peak RSS (MB) |\n|---|---|---|\n"
for i in $(seq 1 "$runs"); do
  /usr/bin/time -f "%e %M" -o "$work/time" "$ssgd" "${args[@]}"
  read -r t kb < "$work/time"
  mb=$((kb / 1024))
  times+=("$t")
  [ "$mb" -gt "$peak" ] && peak=$mb
  printf "| %d | %.2f | %d |\n" "$i" "$t" "$mb"
done
median=$(printf "%s\n" "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
printf "| median | %.2f | %d (largest) |\n" "$median" "$peak"
