#!/usr/bin/env bash
# Wall time and peak memory of the whole `ssgd simulate` command for the
# cases of issue 19 (ranks that differ): ResNet-50 (the bundled V100
# profile), NVLink 2 inside nodes of 8 GPUs, EDR InfiniBand between them,
# WFBP. One run each, /usr/bin/time's elapsed time and maximum RSS. The
# jitter case also with --events: every task an event on the engine, as
# before the list schedule (the same results).
#
#   tools/bench/heterogeneous_wall.sh [--big]
#
# --big adds 131,072 GPUs x 10 iterations with jitter (284 million tasks,
# built an iteration window at a time: about 3.6 GiB, under a minute as a list
# schedule).
set -euo pipefail
cd "$(dirname "$0")/../.."
ssgd=build/bin/ssgd
[ -x "$ssgd" ] || { echo "build first: tools/build.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
base=(simulate traces/datasets/resnet50_v100.csv --set cluster.gpus_per_node=8
      --set network.intra_node=nvlink2 --set network.inter_node=ib_edr100 --quiet --log warn)
run() {
  local label=$1
  shift
  local out
  out=$( { /usr/bin/time -f "%e %M" "$ssgd" "${base[@]}" "$@" >/dev/null; } 2>&1 | tail -1)
  printf "| %s | %s s | %.0f MB |\n" "$label" "${out% *}" "$(awk -v kb="${out#* }" 'BEGIN {print kb / 1024}')"
}
printf "| case | wall time | peak RSS |\n|---|---|---|\n"
run "1,024 GPUs x 10 iterations, --no-fold" --set cluster.nodes=128 --set iterations=10 --no-fold
run "16,384 GPUs x 10 iterations, jitter normal:0.05" --set cluster.nodes=2048 --set iterations=10 \
  --set perturb.jitter=normal:0.05
run "16,384 GPUs x 10 iterations, jitter normal:0.05, --events" --set cluster.nodes=2048 \
  --set iterations=10 --set perturb.jitter=normal:0.05 --events
run "16,384 GPUs x 1 iteration, flow model, jitter" --set cluster.nodes=2048 --set iterations=1 \
  --set network.model=flow --set perturb.jitter=normal:0.05
run "16,384 GPUs x 10 iterations, one straggler (+20%)" --set cluster.nodes=2048 --set iterations=10 \
  --set perturb.stragglers=5:20
run "131,072 GPUs x 10 iterations, one straggler (+20%)" --set cluster.nodes=16384 --set iterations=10 \
  --set perturb.stragglers=5:20
run "131,072 GPUs x 10 iterations, three stragglers in two classes" --set cluster.nodes=16384 \
  --set iterations=10 --set perturb.stragglers=5:20,77:20,1000:50
run "16,384 GPUs x 10 iterations, jitter drawn per class" --set cluster.nodes=2048 --set iterations=10 \
  --set perturb.jitter=normal:0.05 --set perturb.jitter_draw=class
run "131,072 GPUs x 10 iterations, jitter drawn per class, one straggler" --set cluster.nodes=16384 \
  --set iterations=10 --set perturb.jitter=normal:0.05 --set perturb.jitter_draw=class \
  --set perturb.stragglers=5:20
if [ "${1:-}" = --big ]; then
  run "131,072 GPUs x 10 iterations, jitter normal:0.05" --set cluster.nodes=16384 --set iterations=10 \
    --set perturb.jitter=normal:0.05
fi
