#!/usr/bin/env bash
# Collects the seed corpora of the fuzz targets into OUT_DIR/<target>/:
# the small hand-made seeds checked in under fuzz/seeds/<target>/, the test
# suite's data (tests/data), the bundled datasets (traces/datasets,
# scenarios/), ../shared/data when it is there, and what the build's
# ssgd_fuzz_seed_writer and `ssgd pack` generate. Nothing is copied into git;
# OUT_DIR is rewritten every time (tools/fuzz.sh keeps each target's growing
# corpus elsewhere, in BUILD_DIR/corpus/<target>/).
#
#   fuzz/collect_seeds.sh BUILD_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then
  echo "usage: fuzz/collect_seeds.sh BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$1
out=$2
bin=$build/bin
rm -rf "$out"
mkdir -p "$out"

# seed TARGET FILE...: copies each existing file, named after its path.
seed() {
  local target=$1
  shift
  mkdir -p "$out/$target"
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    cp "$f" "$out/$target/$(echo "$f" | sed 's|^\.\./||; s|/|_|g')"
  done
}

for d in fuzz/seeds/*/; do
  t=$(basename "$d")
  mkdir -p "$out/$t"
  cp "$d"* "$out/$t/" 2>/dev/null || true
done

"$bin/ssgd_fuzz_seed_writer" "$out"

# Traces: the suite's text traces packed, and the smallest dataset trace.
mkdir -p "$out/trace_container"
for f in tests/data/traces/*.txtpb; do
  "$bin/ssgd" pack "$f" -o "$out/trace_container/$(basename "$f" .txtpb).ssgdt" \
    --events-per-chunk 16 >/dev/null
done
seed trace_container traces/datasets/cpu-cluster/configs/cnn-w1/trace.ssgdt

seed text_trace tests/data/traces/*.txtpb tests/data/traces/small.dump.txt \
  tests/data/kineto/*.dump.txt tests/data/pytorch/*.dump.txt
seed layer_csv tests/data/profiles/*.csv traces/datasets/*.csv
seed bcaffe_log ../shared/data/bcaffe/tmp*comm.log
seed osu_log ../shared/data/bcaffe/allreduce*.log traces/datasets/cpu-cluster/network/*/allreduce.osu
seed kineto_json tests/data/pytorch/*.json.gz
seed scenario_yaml scenarios/*.yaml tests/data/scenarios/*.yaml \
  traces/datasets/cpu-cluster/configs/cnn-w2-1gbit-b2/scenario.yaml \
  traces/datasets/cpu-cluster/configs/cnn-w1/scenario.yaml
seed calibration_yaml traces/datasets/cpu-cluster/network/*/calibration.yaml
seed sweep_grid scenarios/sweeps/*.yaml tools/bench/sweep_speedup.yaml
seed report_input tests/data/golden/simulate/*.json tests/data/golden/scale/*.json tests/data/golden/dataset_verify/*.json tests/data/report/*
# Chakra ETs: ssgd's export of a small profile on two ranks.
"$bin/ssgd" export chakra tests/data/profiles/good.csv --set cluster.nodes=2 --set iterations=2 \
  -o "$out/chakra_et_export" >/dev/null 2>&1 &&
  cp "$out/chakra_et_export/ssgd.0.et" "$out/chakra_et/export_rank0.et"
rm -rf "$out/chakra_et_export"

for d in "$out"/*/; do
  [ "$(basename "$d")" = .scratch ] && continue
  printf '%-18s %4d seeds %8d bytes\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)" \
    "$(find "$d" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')"
done
