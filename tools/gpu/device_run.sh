#!/usr/bin/env bash
# On the lent GPU machine, from the repository root, with .devcarry made by
# tools/gpu/carry.sh carried along: the tests' compiled-in paths
# (/work/main/build-gpu/bin/..., or the build folder SSGD_GPU_BUILT names)
# are made to point at the carried programs,
# then tools/gpu/checklist.sh runs, and its output is packed into $OUT as at
# most 8 tar files of at most 15 MiB each (the device tool's limits), logs
# first.
set -u
root=$(pwd)
built=${SSGD_GPU_BUILT:-/work/main/build-gpu}
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$root" /work/main; fi
mkdir -p "$built"
[ -e "$built/bin" ] || ln -s "$root/.devcarry/bin" "$built/bin"
res=/tmp/gpu-checklist
tools/gpu/checklist.sh .devcarry/bin "$res" "${1:-420}" "${@:2}"
python3 - "$res" "$OUT" <<'PY'
import os, sys, tarfile
res, out = sys.argv[1], sys.argv[2]
files = []
for d, _, names in os.walk(res):
    for n in names:
        p = os.path.join(d, n)
        files.append((os.path.relpath(p, res), os.path.getsize(p)))
# Logs and results first, then the rest from the smallest up.
files.sort(key=lambda f: (not f[0].endswith((".log", ".json")), f[1]))
limit, packs = 15 << 20, [[]]
for name, size in files:
    if sum(s for _, s in packs[-1]) + size > limit and packs[-1]:
        packs.append([])
    packs[-1].append((name, size))
for i, pack in enumerate(packs[:8]):
    with tarfile.open(os.path.join(out, f"part{i}.tar"), "w") as t:
        for name, _ in pack:
            t.add(os.path.join(res, name), arcname=name)
for pack in packs[8:]:
    print("left out:", [n for n, _ in pack])
PY
ls -la "$OUT"
