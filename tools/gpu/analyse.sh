#!/usr/bin/env bash
# Reads what tools/gpu/checklist.sh left (unpacked into DIR) where ssgd
# builds, and prints the checklist's figures:
#
#   tools/gpu/analyse.sh SSGD DIR
#
# - overhead: each traced run's median iteration time against the untraced
#   run of the same precision (and the repeat pair, when there is one);
# - for every capture: `ssgd info` (what it holds, drops, clock offsets);
# - replay: `ssgd simulate` of each marked capture against the mean of the
#   same iterations as the training loop timed them (the replay's steady
#   state leaves the first marked iteration out, and so does this);
# - Kineto: `ssgd import kineto` of each torch.profiler file, replayed,
#   against the profiled iterations and against the untraced run.
set -euo pipefail
ssgd=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
cd "$dir"

echo "## overhead: median iteration time, traced against untraced"
$py - <<'PY'
import json, os
def med(name):
    return json.load(open(name + ".json"))["median_ns"] / 1e6 if os.path.exists(name + ".json") else None
for base, runs in (("plain_fp32", ("traced_fp32", "full_fp32")), ("plain_amp", ("traced_amp", "full_amp")),
                   ("plain_fp32_2", ("traced_fp32_2",)), ("plain_amp_2", ("traced_amp_2",)),
                   ("plain_amp_3", ("traced_amp_3",)), ("plain_vgg16", ("full_vgg16",)),
                   ("plain_bert", ("full_bert",))) + tuple(
                   (f"plain_amp_api{n}", tuple(f"traced_amp_{m}{n}" for m in ("launches", "runtime", "none")))
                   for n in (1, 2, 3)):
    b = med(base)
    for r in runs:
        t = med(r)
        if b and t:
            print(f"  {r:15s} {t:9.3f} ms   {base:13s} {b:9.3f} ms   {100 * (t - b) / b:+6.2f}%")
# SSGD_TRACER_API_CALLS with AMP: each mode's overhead over the three rounds.
rounds = [n for n in (1, 2, 3) if med(f"plain_amp_api{n}")]
for m in ("launches", "runtime", "none"):
    d = [100 * (med(f"traced_amp_{m}{n}") - med(f"plain_amp_api{n}")) / med(f"plain_amp_api{n}")
         for n in rounds if med(f"traced_amp_{m}{n}")]
    if d:
        print(f"  API calls '{m}' (AMP): " + ", ".join(f"{x:+.2f}%" for x in d) +
              f"; mean {sum(d) / len(d):+.2f}%")
PY

for d in */; do
  d=${d%/}
  for f in "$d"/rank-0.ssgdt*; do
    [ -e "$f" ] || continue
    echo
    echo "## ssgd info $f"
    "$ssgd" info "$f" 2>&1 | sed -n '1,22p'
  done
done

echo
echo "## replay of each marked capture against the same iterations, measured"
for d in full_fp32 full_amp bundle full_vgg16 full_bert whatif_cap_* fsdp_cap graphs_cap; do
  [ -e "$d/rank-0.ssgdt" ] || continue
  line=$("$ssgd" simulate "$d/rank-0.ssgdt" 2>/dev/null | grep 'iteration time' || true)
  [ -n "$line" ] || { echo "  $d: no replay (no marked iterations?)"; continue; }
  "$py" - "$d" "$(echo "$line" | awk '{print $3}')" <<'PY'
import json, re, statistics, subprocess, sys
d, sim = sys.argv[1], float(sys.argv[2])
r = json.load(open(d + ".json"))
t = r["iteration_ns"]
# The marked iterations among the timed ones: SSGD_TRACER_ITERATIONS as the
# checklist set it (15:75 for full_*, 10:15 for the others), counted from
# the first warm-up iteration.
first, end = (15, 75) if d in ("full_fp32", "full_amp") else (10, 15)
lo, hi = first - r["warmup"], min(end - r["warmup"], len(t))
marked = t[lo:hi]
m = statistics.mean(marked[1:]) / 1e6
print(f"  {d:24s} replay {sim:9.3f} ms   measured {m:9.3f} ms (mean of {len(marked) - 1})   {100 * (sim - m) / m:+6.2f}%")
PY
done

echo
echo "## torch.profiler captures: ssgd import kineto, replay"
for f in kineto_*.json.gz fsdp_kineto.json.gz graphs_kineto.json.gz; do
  [ -e "$f" ] || continue
  m=${f%.json.gz}
  "$ssgd" import kineto "$f" -o "$work/$m.ssgdt" >"$work/import.log" 2>&1 || { echo "  $f: import failed"; cat "$work/import.log"; continue; }
  sed -n '2,7p' "$work/import.log" | sed "s|^|  $m: |"
  line=$("$ssgd" simulate "$work/$m.ssgdt" 2>/dev/null | grep 'iteration time')
  "$py" - "$m" "$(echo "$line" | awk '{print $3}')" <<'PY'
import json, statistics, sys
m, sim = sys.argv[1], float(sys.argv[2])
r = json.load(open(f"{m}_result.json"))
t = r["iteration_ns"]
p = r["profiled_iterations"]
# The profiler starts inside the range of the first profiled step, which it
# therefore leaves out; the replay leaves out the first range it has too:
# what it averages are the last p - 2 steps.
prof = statistics.mean(t[-(p - 2):]) / 1e6
plain = statistics.median(t[:-p]) / 1e6
print(f"  {m:12s} replay {sim:9.3f} ms   profiled iterations {prof:9.3f} ms ({100 * (sim - prof) / prof:+6.2f}%)"
      f"   unprofiled ones, median {plain:9.3f} ms ({100 * (sim - plain) / plain:+6.2f}%)")
PY
done
