#!/usr/bin/env bash
# Wall time and peak memory of `ssgd import nsys` on a synthetic Nsight
# Systems SQLite export of about SIZE_MB (default 1024) megabytes, written in
# the documented schema (docs/nsys.md): iterations of 24 marked layers, each
# layer's forward and backward a run of kernels launched by runtime calls,
# with NVTX ranges for the iterations and layers. Usage:
#   tools/bench/nsys_import.sh [SIZE_MB]
set -euo pipefail
cd "$(dirname "$0")/../.."
size_mb=${1:-1024}
ssgd=build/bin/ssgd
[ -x "$ssgd" ] || { echo "build first: tools/build.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/export.sqlite
/usr/bin/python3 - "$db" "$size_mb" <<'PY'
import os, sqlite3, sys
path, size_mb = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(path)
con.execute("PRAGMA journal_mode=OFF"); con.execute("PRAGMA synchronous=OFF")
con.executescript("""
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
  blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
  doubleValue REAL, jsonTextId INTEGER, jsonText TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
""")
names = ["cudaLaunchKernel"] + [f"void gemm_kernel_{k}<float, 128>(float*, const float*)" for k in range(48)]
con.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(names)))
con.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1795535030000000000, '', '')")
tid = (4242 << 24) | 4243
layers, kernels_per_phase = 24, 20
t, corr, it = 1000, 1, 0
target = size_mb * 1024 * 1024
while True:
    kern, rt, nv = [], [], []
    it_start = t
    for phase in ("forward", "backward"):
        order = range(layers) if phase == "forward" else reversed(range(layers))
        for l in order:
            l_start = t
            for k in range(kernels_per_phase):
                name = 1 + (l * 2 + (phase == "backward")) % 48
                rt.append((t, t + 3000, 1, tid, corr, 0, 0))
                kern.append((t + 5000, t + 45000, 0, 1, 7, corr, 4242 << 24, name, name, 80, 1, 1, 256, 1, 1, 32))
                t += 50000; corr += 1
            nv.append((l_start, t, 59, None, None, None, f"{phase}/layer{l}", tid, None, None, 0, None, None, None, None, None))
    nv.append((it_start, t, 59, None, None, None, f"iteration/{it}", tid, None, None, 0, None, None, None, None, None))
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kern)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?)", rt)
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", nv)
    it += 1
    if it % 200 == 0:
        con.commit()
        if os.path.getsize(path) >= target:
            break
con.commit(); con.close()
print(f"wrote {os.path.getsize(path) / 1e6:.0f} MB: {it} iterations, {corr - 1} kernels", file=sys.stderr)
PY
/usr/bin/time -f "%e %M" -o "$work/time" "$ssgd" import nsys "$db" -o "$work/out.ssgdt" >"$work/log" 2>&1
read -r t kb < "$work/time"
tail -n 4 "$work/log"
printf "| export | wall time | peak RSS | output |\n|---|---|---|---|\n"
printf "| %d MB | %.1f s | %d MB | %d MB |\n" "$(( $(stat -c %s "$db") / 1000000 ))" "$t" \
  "$((kb / 1024))" "$(( $(stat -c %s "$work/out.ssgdt") / 1000000 ))"
