#!/usr/bin/env bash
# Runs ssgd's exported Chakra execution traces in ASTRA-sim's analytical
# backend and in ssgd, and prints both graph times and both wall times side by
# side (docs/chakra.md, "Against ASTRA-sim"). Not part of .ci/run: it needs an
# ASTRA-sim checkout, which this script does not download.
#
#   tools/interop/astra_sim.sh [options] ASTRA_SIM_CHECKOUT
#
#   ASTRA_SIM_CHECKOUT  ASTRA-sim at commit 518bd513ae11 (2026-03-25) with its
#                       submodules (git clone --recursive, then git checkout
#                       518bd51 && git submodule update --init --recursive)
#   --ranks "N ..."     rank counts to compare (default "8 64 256 1024")
#   --profile CSV       layer profile to export (default ResNet-50 on V100)
#   --policy NAME       ssgd overlap policy of the exported DAG (default ddp)
#   --iterations N      iterations exported (default 2)
#   --bandwidth GIBPS   per-link bandwidth, GiB/s: ASTRA-sim's "GB/s" is 2^30
#                       bytes/s (default 25)
#   --latency NS        per-hop latency, ns (default 1500)
#   --offline           build against Debian's fmt, spdlog and yaml-cpp
#                       instead of the submodules and GitHub's yaml-cpp, and
#                       patch Chakra f37c2bb's ETFeeder alias when present
#   --build-only        build ASTRA-sim's analytical backend and stop
#   --keep DIR          keep the ETs, configurations and logs in DIR
#
# Both simulators get the same job: the ETs `ssgd export chakra` writes of
# the profile on N nodes of one GPU, and one network: ASTRA-sim's Ring
# topology of N NPUs with the given bandwidth and latency per hop, its ring
# all-reduce in one chunk with an endpoint delay of 1 ns; ssgd's generic
# platform with that bandwidth and latency as its NIC (the PCIe link made
# faster and quicker than it so the route is the NIC's), ring algorithm,
# analytical model. The time compared is the whole graph's: ASTRA-sim's
# largest "sys[r] finished, T cycles" (1 cycle = 1 ns) and ssgd's
# graph_time_ns.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
astra_commit=518bd513ae110428cd62eb60efc0f3993fd53c70
ranks="8 64 256 1024"
profile=$repo/traces/datasets/resnet50_v100.csv
policy=ddp
iterations=2
bandwidth=25
latency=1500
offline=0
build_only=0
keep=
usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=${2:?}; shift 2 ;;
    --profile) profile=${2:?}; shift 2 ;;
    --policy) policy=${2:?}; shift 2 ;;
    --iterations) iterations=${2:?}; shift 2 ;;
    --bandwidth) bandwidth=${2:?}; shift 2 ;;
    --latency) latency=${2:?}; shift 2 ;;
    --offline) offline=1; shift ;;
    --build-only) build_only=1; shift ;;
    --keep) keep=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "astra_sim.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { usage >&2; exit 2; }
checkout=$(cd "$1" 2>/dev/null && pwd) || { echo "astra_sim.sh: no folder '$1'" >&2; exit 2; }
for n in $ranks $iterations $latency; do
  case $n in ''|*[!0-9]*) echo "astra_sim.sh: '$n' is not a whole number" >&2; exit 2 ;; esac
done
if [ ! -f "$checkout/astra-sim/workload/Workload.cc" ]; then
  echo "astra_sim.sh: $checkout is not an ASTRA-sim checkout (no astra-sim/workload/Workload.cc)" >&2
  exit 2
fi
if [ ! -f "$checkout/extern/graph_frontend/chakra/schema/protobuf/et_def.proto" ] ||
   [ ! -f "$checkout/extern/network_backend/analytical/CMakeLists.txt" ]; then
  echo "astra_sim.sh: $checkout lacks its submodules; run git submodule update --init --recursive there" >&2
  exit 2
fi
if head=$(git -C "$checkout" rev-parse HEAD 2>/dev/null); then
  [ "$head" = "$astra_commit" ] ||
    echo "astra_sim.sh: warning: $checkout is at $head, not $astra_commit; the figures may differ" >&2
fi

bin=$checkout/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
if [ ! -x "$bin" ]; then
  echo "== building ASTRA-sim's analytical backend (congestion unaware) in $checkout" >&2
  if [ $offline -eq 1 ]; then
    /usr/bin/python3 - "$checkout" <<'PY'
import sys, pathlib
root = pathlib.Path(sys.argv[1])
top = root / "CMakeLists.txt"
s = top.read_text()
if "find_package(spdlog REQUIRED)" not in s:
    a = s.index('add_subdirectory("${CMAKE_CURRENT_SOURCE_DIR}/extern/helper/fmt")')
    b = s.index("FetchContent_MakeAvailable(yaml-cpp)") + len("FetchContent_MakeAvailable(yaml-cpp)")
    top.write_text(s[:a] + "find_package(fmt REQUIRED)\nfind_package(spdlog REQUIRED)\n"
                   "find_package(yaml-cpp REQUIRED)" + s[b:])
net = root / "extern/network_backend/analytical/CMakeLists.txt"
s = net.read_text()
old = "add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/extern/yaml-cpp yaml-cpp)"
if old in s:
    net.write_text(s.replace(old, "if (NOT TARGET yaml-cpp)\n    find_package(yaml-cpp REQUIRED)\nendif ()"))
feeder = root / "extern/graph_frontend/chakra/src/feeder_v3/et_feeder.h"
if feeder.exists():
    s = feeder.read_text()
    old = "using ETFeeder = FeederV3::ETFeeder;\n\n} // namespace FeederV3\n"
    if old in s:
        feeder.write_text(s.replace(old, "} // namespace FeederV3\nusing ETFeeder = FeederV3::ETFeeder;\n"))
PY
  fi
  proto=$checkout/extern/graph_frontend/chakra/schema/protobuf
  protoc et_def.proto --proto_path="$proto" --cpp_out="$proto"
  mkdir -p "$checkout/build/astra_analytical/build"
  (cd "$checkout/build/astra_analytical/build" &&
     cmake .. -DBUILDTARGET=congestion_unaware >/dev/null &&
     cmake --build . -j"$(nproc 2>/dev/null || echo 2)")
fi
[ -x "$bin" ] || { echo "astra_sim.sh: the build made no $bin" >&2; exit 1; }
[ $build_only -eq 1 ] && { echo "$bin"; exit 0; }

ssgd=$repo/build/bin/ssgd
[ -x "$ssgd" ] || "$repo/tools/build.sh" >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/ssgd-astra.XXXXXX")
cleanup() {
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$work"/. "$keep"/; fi
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/system.json" <<JSON
{
  "scheduling-policy": "FIFO",
  "endpoint-delay": 1,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"],
  "collective-optimization": "baseline",
  "local-mem-bw": 1000000,
  "roofline-enabled": 0
}
JSON
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' >"$work/memory.json"

now() { date +%s.%N; }
printf '%6s %16s %16s %8s %12s %12s %10s\n' ranks astra_sim_ns ssgd_ns diff_% astra_wall_s ssgd_wall_s nodes/rank
for n in $ranks; do
  d=$work/n$n
  mkdir -p "$d/et" "$d/log"
  set_args=(--set "cluster.nodes=$n" --set cluster.gpus_per_node=1 --set "iterations=$iterations"
            --set "policy.overlap=$policy" --set network.model=analytical --set network.library=generic
            --set network.algorithm=ring
            --set "network.inter_node_bandwidth=${bandwidth}GiB/s" --set "network.inter_node_latency=${latency}ns"
            --set network.intra_node_bandwidth=100000GiB/s --set network.intra_node_latency=0ns)
  "$ssgd" export chakra "$profile" "${set_args[@]}" -o "$d/et" >"$d/export.txt" 2>"$d/export.err" ||
    { cat "$d/export.err" >&2; exit 1; }
  printf 'topology: [ Ring ]\nnpus_count: [ %s ]\nbandwidth: [ %s ]\nlatency: [ %s ]\n' \
    "$n" "$bandwidth" "$latency" >"$d/network.yml"
  t0=$(now)
  (cd "$d" && "$bin" --workload-configuration="$d/et/ssgd" --system-configuration="$work/system.json" \
     --network-configuration="$d/network.yml" --remote-memory-configuration="$work/memory.json" \
     --logging-folder="$d/log" >"$d/astra.txt" 2>"$d/astra.err") ||
    { echo "astra_sim.sh: ASTRA-sim failed on $n ranks:" >&2; tail -5 "$d/astra.err" >&2; exit 1; }
  t1=$(now)
  astra_ns=$(grep -oE 'sys\[[0-9]+\] finished, [0-9]+ cycles' "$d/astra.txt" |
             awk '{ if ($3 > m) m = $3 } END { print m + 0 }')
  finished=$(grep -cE 'sys\[[0-9]+\] finished' "$d/astra.txt" || true)
  [ "$finished" -eq "$n" ] ||
    { echo "astra_sim.sh: ASTRA-sim reported $finished of $n ranks finished" >&2; exit 1; }
  t2=$(now)
  "$ssgd" import chakra "$d/et" -o "$d/graph.ssgdt" >"$d/import.txt"
  "$ssgd" simulate "$d/graph.ssgdt" "${set_args[@]}" --report "$d/report.json" -q 2>"$d/simulate.err"
  t3=$(now)
  ssgd_ns=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['graph_time_ns'])" "$d/report.json")
  nodes=$(/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['nodes'] // r['ranks'])" "$d/report.json")
  awk -v n="$n" -v a="$astra_ns" -v s="$ssgd_ns" -v aw="$(echo "$t1 - $t0" | bc)" \
      -v sw="$(echo "$t3 - $t2" | bc)" -v k="$nodes" \
      'BEGIN { printf "%6d %16d %16d %+8.2f %12.2f %12.2f %10d\n", n, a, s, 100 * (s - a) / a, aw, sw, k }'
done
