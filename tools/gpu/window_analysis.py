"""The tracing window's cost (issue 38) from what tools/gpu/checklist.sh's
window groups left, in one or more result folders:

    /usr/bin/python3 tools/gpu/window_analysis.py SSGD DIR [DIR...]

For each precision: every run's timed iterations (sum, median), the steps
inside the window (500-509: timed iterations 485-494 after 15 warm-up) and
the others, before and after the window; then the traced runs (window_*)
(and detach_*, SSGD_TRACER_WINDOW_DETACH=1) against the untraced ones
(marks_*), all marking steps 500-509 only:
the whole job's cost (sum of the timed iterations), and the window's own
cost as the trace reports it (`ssgd simulate`'s warning) against what the
untraced runs' same steps measured.
"""
import glob
import json
import os
import re
import statistics as st
import subprocess
import sys

FIRST, END, WARMUP = 500, 510, 15


def load(path):
    r = json.load(open(path))
    t = r["iteration_ns"]
    lo, hi = FIRST - WARMUP, END - WARMUP
    return {"sum": sum(t) / 1e9, "median": st.median(t) / 1e6, "window": st.median(t[lo:hi]) / 1e6,
            "before": st.mean(t[:lo]) / 1e6, "after": st.mean(t[hi:]) / 1e6,
            "others": st.median(t[:lo] + t[hi:]) / 1e6}


def reported(ssgd, trace):
    out = subprocess.run([ssgd, "simulate", trace], capture_output=True, text=True).stderr
    m = re.search(r"the traced ones took ([\d.]+) ms \(median\), the others ([\d.]+) ms: ([+-][\d.]+)%", out)
    return (float(m.group(1)), float(m.group(2)), float(m.group(3))) if m else None


def main(ssgd, dirs):
    runs = {}
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "marks_*.json")) + glob.glob(os.path.join(d, "window_*.json"))
                        + glob.glob(os.path.join(d, "detach_*.json"))):
            if os.path.basename(p).startswith("window_diag"):
                continue
            name = os.path.basename(p)[:-5]
            runs[name] = (p, load(p))
    for prec in ("fp32", "amp"):
        print(f"## {prec}: timed iterations (1,000 after 15 warm-up), ms unless stated")
        print(f"  {'run':16s} {'sum (s)':>8s} {'median':>8s} {'500-509':>8s} {'others':>8s} {'before':>8s} {'after':>8s}")
        for kind in ("marks", "window", "detach"):
            for name in sorted(n for n in runs if n.startswith(f"{kind}_{prec}_")):
                r = runs[name][1]
                print(f"  {name:16s} {r['sum']:8.3f} {r['median']:8.3f} {r['window']:8.3f} {r['others']:8.3f}"
                      f" {r['before']:8.3f} {r['after']:8.3f}")
        m = [runs[n][1] for n in runs if n.startswith(f"marks_{prec}_")]
        for traced in ("window", "detach"):
            compare(ssgd, runs, m, traced, prec)
        print()


def compare(ssgd, runs, m, traced, prec):
    w = [runs[n][1] for n in runs if n.startswith(f"{traced}_{prec}_")]
    if m and w:
        ms, ws = st.mean(x["sum"] for x in m), st.mean(x["sum"] for x in w)
        spread = (max(x["sum"] for x in m) - min(x["sum"] for x in m)) / ms * 100
        print(f"  whole job (sum of timed iterations), {traced}: traced {ws:.3f} s, untraced {ms:.3f} s: "
              f"{100 * (ws - ms) / ms:+.2f}% (untraced runs spread {spread:.1f}%)")
        mw = st.mean(x["window"] for x in m)
        for name in sorted(n for n in runs if n.startswith(f"{traced}_{prec}_")):
            trace = os.path.join(os.path.dirname(runs[name][0]), name, "rank-0.ssgdt")
            rep = reported(ssgd, trace) if os.path.exists(trace) else None
            if rep:
                own = runs[name][1]["window"]
                print(f"  {name}: the trace reports {rep[0]:.3f} against {rep[1]:.3f} ms ({rep[2]:+.1f}%);"
                      f" its window against the untraced runs' steps 500-509 ({mw:.3f} ms): "
                      f"{100 * (own - mw) / mw:+.1f}%")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
