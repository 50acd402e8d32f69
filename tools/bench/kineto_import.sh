#!/usr/bin/env bash
# Measures `ssgd import kineto` on a synthetic Kineto (PyTorch profiler)
# trace of a requested size: throughput and peak memory, plain and gzip.
#
#   tools/bench/kineto_import.sh [SIZE_MB] [--gzip] [--keep] [--plain]
#
# SIZE_MB defaults to 2048 (2 GiB of JSON). The files go to a fresh folder
# under ${TMPDIR:-/tmp} and are deleted at the end unless --keep is given.
# Needs build/bin/ssgd (tools/build.sh), python3 and /usr/bin/time; with
# --gzip also gzip. The trace repeats one training step of a 50-layer model
# in the shape Kineto writes it (docs/kineto.md): per layer, an aten cpu_op,
# a cudaLaunchKernel runtime call with its kernel and ac2g flow, forward and
# backward user annotations, and an NCCL all-reduce per 5 layers with c10d's
# record_param_comms op; a ProfilerStep#N per step. With --plain, as
# torch.profiler writes by default: no annotations, the backward ops as
# `autograd::engine::evaluate_function: AddmmBackward0` on an autograd thread
# with the forward op's sequence number, so that layers are derived from the
# operators (--layers auto picks ops).
set -euo pipefail
cd "$(dirname "$0")/../.."

size_mb=2048
gz=0
keep=0
plain=0
for a in "$@"; do
  case "$a" in
    --gzip) gz=1 ;;
    --keep) keep=1 ;;
    --plain) plain=1 ;;
    *) size_mb="$a" ;;
  esac
done
ssgd=build/bin/ssgd
[[ -x $ssgd ]] || { echo "build $ssgd first (tools/build.sh)" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/ssgd_kineto_bench.XXXXXX")
[[ $keep == 1 ]] || trap 'rm -rf "$dir"' EXIT
# JSON + its gzip copy + the output and the sorter's spill files.
need_mb=$(( size_mb * (gz == 1 ? 2 : 1) + size_mb / 2 + 512 ))
free_mb=$(df -Pm "$dir" | awk 'NR == 2 { print $4 }')
if (( free_mb < need_mb )); then
  echo "need about $need_mb MB free in $dir, have $free_mb MB" >&2
  exit 1
fi

echo "writing $size_mb MB of Kineto JSON to $dir/trace.json ..." >&2
gen_start=$(date +%s.%N)
python3 - "$dir/trace.json" "$size_mb" "$plain" <<'PY'
import sys
path, size, plain = sys.argv[1], int(sys.argv[2]) << 20, sys.argv[3] == "1"
base = 1700000000000000000
def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)
out = open(path, "w", buffering=1 << 22)
out.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", '
          '"totalGlobalMem": 42298834944, "computeMajor": 8, "computeMinor": 0, "numSms": 108}],\n'
          '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, "nccl_version": "2.21.5"},\n'
          '  "baseTimeNanoseconds": %d,\n  "displayTimeUnit": "ms",\n  "traceEvents": [\n' % base)
written = 0
events = 0
step = 0
corr = 1
layers = 50
while written < size:
    S = 1000 + step * 10_000_000
    parts = ['  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 100, "tid": 101, "ts": %s, "dur": %s, "args": {"External id": %d}}' % (step, us(S), us(9_000_000), corr)]
    t = S + 1000
    for phase in ("forward", "backward"):
        for l in range(layers):
            layer = l if phase == "forward" else layers - 1 - l
            seq = step * layers + layer
            tid = 102 if plain and phase == "backward" else 101
            if not plain:
                parts.append('  {"ph": "X", "cat": "user_annotation", "name": "%s/layer%d", "pid": 100, "tid": 101, "ts": %s, "dur": %s, "args": {"External id": %d}}' % (phase, layer, us(t), us(80_000), corr))
            if phase == "forward" or not plain:
                parts.append('  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 100, "tid": 101, "ts": %s, "dur": %s, "args": {"External id": %d, "Record function id": 0, "Sequence number": %d, "Fwd thread id": 0, "Ev Idx": %d}}' % (us(t + 100), us(2_000 if not plain else 50_000), corr, seq, corr))
            else:
                parts.append('  {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 100, "tid": 102, "ts": %s, "dur": %s, "args": {"External id": %d, "Record function id": 0, "Sequence number": %d, "Fwd thread id": 1, "Ev Idx": %d}}' % (us(t + 100), us(50_000), corr, seq, corr))
            parts.append('  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": %d, "ts": %s, "dur": %s, "args": {"cbid": 211, "correlation": %d, "External id": %d}}' % (tid, us(t + 300), us(4_123), corr, corr))
            parts.append('  {"ph": "s", "id": %d, "pid": 100, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}' % (corr, tid, us(t + 300)))
            parts.append('  {"ph": "X", "cat": "kernel", "name": "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x5_nn_align4::Params)", "pid": 0, "tid": 7, "ts": %s, "dur": %s, "args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, "registers per thread": 232, "shared memory": 81920, "blocks per SM": 0.592593, "warps per SM": 4.740741, "grid": [64, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %%": 6}}' % (us(t + 20_000), us(31_457), corr, corr))
            parts.append('  {"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}' % (corr, us(t + 20_000)))
            corr += 1
            if phase == "backward" and l % 5 == 4:
                meta = '"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 6553600, "Out msg nelems": 6553600, "Group size": 8, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]", "Seq": %d' % (step * 10 + l // 5)
                parts.append('  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 100, "tid": 101, "ts": %s, "dur": %s, "args": {"External id": %d, %s, "Rank": 0}}' % (us(t + 60_000), us(3_000), corr, meta))
                parts.append('  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101, "ts": %s, "dur": %s, "args": {"cbid": 211, "correlation": %d, "External id": %d}}' % (us(t + 61_000), us(5_000), corr, corr))
                parts.append('  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": %s, "dur": %s, "args": {"External id": %d, "device": 0, "stream": 20, "correlation": %d, %s}}' % (us(t + 70_000), us(250_000), corr, corr, meta))
                corr += 1
            t += 100_000
    block = ",\n".join(parts)
    if step > 0:
        block = ",\n" + block
    out.write(block)
    written += len(block)
    events += len(parts)
    step += 1
out.write('\n  ],\n  "traceName": "bench.json"\n}\n')
out.close()
print(events, file=open(path + ".events", "w"))
PY
gen_s=$(echo "$(date +%s.%N) - $gen_start" | bc)
events=$(cat "$dir/trace.json.events")
echo "generated in ${gen_s}s" >&2

run() {  # run LABEL INPUT
  local label=$1 input=$2
  /usr/bin/time -v "$ssgd" import kineto "$input" -o "$dir/out.ssgdt" > "$dir/summary.txt" 2> "$dir/time.txt" || {
    cat "$dir/time.txt" >&2; exit 1; }
  local secs rss bytes
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$dir/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$dir/time.txt")
  bytes=$(stat -c %s "$input")
  local json_mb=$(( $(stat -c %s "$dir/trace.json") >> 20 ))
  printf "| %-6s | %8d | %8d | %10d | %7.1f | %11.1f | %11.1f | %8d | %6d |\n" "$label" $(( bytes >> 20 )) \
    "$json_mb" "$events" "$secs" "$(echo "$bytes / 1048576 / $secs" | bc -l)" \
    "$(echo "$json_mb / $secs" | bc -l)" "$rss" $(( $(stat -c %s "$dir/out.ssgdt") >> 20 ))
  rm -f "$dir/out.ssgdt"
}

echo "| input  | file MB  | JSON MB  | events     | seconds | file MB/s   | JSON MB/s   | peak RSS MB | out MB |"
echo "|--------|----------|----------|------------|---------|-------------|-------------|----------|--------|"
run plain "$dir/trace.json"
if [[ $gz == 1 ]]; then
  gzip -1 -c "$dir/trace.json" > "$dir/trace.json.gz"
  run gzip "$dir/trace.json.gz"
fi
