"""Peak memory of a testbed dataset's ranks against ssgd's per-GPU estimate.

For every multi-rank configuration of DIR (a dataset `testbed.py run` or
`assemble` wrote), the measured figure is the median over ranks and rounds
of peak_rss_kb - rss_before_model_kb (train.py: the high-water mark of the
timed training against the resident set before the model was built, so the
parameters, gradients, optimizer state, gathered units, gloo's buffers and
the activations are all in it); the model's is `ssgd simulate`'s
memory.total_bytes for the configuration's trace and scenario (state and
gathered units; activations only where the profile has them). Prints one
row per configuration and the median and worst error; exits 1 when a
configuration has no memory figures (results from before train.py recorded
rss_before_model_kb).

    /usr/bin/python3 memory_check.py DIR [--ssgd build/bin/ssgd] [--json OUT]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile


def measured_bytes(folder):
    """Median peak - baseline over the ranks of every round, in bytes, or None."""
    values = []
    for path in sorted(glob.glob(os.path.join(folder, "round*.json"))):
        with open(path) as f:
            rnd = json.load(f)
        for rank in rnd.get("ranks", []):
            if "rss_before_model_kb" not in rank or not rank.get("peak_rss_reset"):
                return None
            values.append((rank["peak_rss_kb"] - rank["rss_before_model_kb"]) * 1024)
    return statistics.median(values) if values else None


def modelled(ssgd, folder):
    """ssgd's memory report for the configuration's trace under its scenario."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        subprocess.run([ssgd, "--log", "error", "simulate", os.path.join(folder, "trace.ssgdt"), "--scenario",
                        os.path.join(folder, "scenario.yaml"), "--report", out],
                       check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)["memory"]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dataset")
    p.add_argument("--ssgd", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "..", "..", "build", "bin", "ssgd"))
    p.add_argument("--json", help="write the rows here as JSON")
    a = p.parse_args(argv)
    configs = sorted(glob.glob(os.path.join(a.dataset, "configs", "*")))
    if not configs:
        p.error(f"{a.dataset}: no configs/ folder with configurations")
    rows, missing = [], []
    for folder in configs:
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        if config["world"] < 2:
            continue
        measured = measured_bytes(folder)
        if measured is None:
            missing.append(os.path.basename(folder))
            continue
        memory = modelled(a.ssgd, folder)
        model = memory["total_bytes"]
        rows.append({"config": os.path.basename(folder), "measured_bytes": measured, "model_bytes": model,
                     "activations_known": memory["activations_known"],
                     "error": (model - measured) / measured})
    print(f"{'configuration':40} {'measured':>10} {'model':>10} {'error':>8}")
    for r in rows:
        print(f"{r['config']:40} {r['measured_bytes'] / 2**20:8.1f}Mi {r['model_bytes'] / 2**20:8.1f}Mi "
              f"{100 * r['error']:+7.1f}%")
    if rows:
        errors = [abs(r["error"]) for r in rows]
        print(f"{len(rows)} configuration(s): median |error| {100 * statistics.median(errors):.1f}%, "
              f"worst {100 * max(errors):.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if missing:
        print(f"memory_check: no rss_before_model_kb (or no peak reset) in {', '.join(missing)}",
              file=sys.stderr)
        return 1
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
