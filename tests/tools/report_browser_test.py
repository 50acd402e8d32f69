#!/usr/bin/python3
"""`ssgd report` in a real browser: headless Chromium opens each test page
from disk (no network) in a window 1400 px wide, and the test fails on any
console message, uncaught error or rejected promise, on a chart that was not
drawn as SVG, or on a page whose widest chart spans less than most of the
window. A screenshot of each page is left in the output folder, and a failing
page's screenshot is named in the failure's output. Some inputs are made
first by ssgd itself (simulate, scale, optimize, sweep, diff), into
OUT/inputs/.

    report_browser_test.py --ssgd build/bin/ssgd --source . --out build/report-screenshots

Exit status 0: every page passed; 1: a page failed; 77: skipped, no
Chromium (ctest shows it as skipped, never as passed). docs/report.md.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

WINDOW_WIDTH = 1400
# The widest chart of a page must span this much of the window, at least.
MIN_CHART_SPAN = 0.75

RESNET = "traces/datasets/resnet50_v100.csv"
MLP = "traces/datasets/cpu-cluster/configs/mlp-w2-1gbit-nooverlap"
# Inputs ssgd makes before the pages: (file under OUT/inputs, ssgd arguments,
# with {out} for the file and {dir} for OUT/inputs), run from the source root.
MADE = [
    # Two what-ifs of one input: another overlap policy and another network.
    ("wfbp.json", ["simulate", RESNET, "--scenario", "scenarios/v100_4x4_10gbe.yaml",
                   "--set", "policy.overlap=wfbp", "-q", "--report", "{out}"]),
    ("bsp-100gbe.json", ["simulate", RESNET, "--scenario", "scenarios/v100_4x4_10gbe.yaml",
                         "--set", "policy.overlap=bsp", "--set", "network.inter_node=100gbe",
                         "-q", "--report", "{out}"]),
    ("shared.json", ["simulate", RESNET, "--scenario", "scenarios/shared_fabric.yaml", "-q",
                     "--report", "{out}"]),
    ("scale-bsp.json", ["scale", RESNET, "--scenario", "scenarios/v100_4x4_10gbe.yaml",
                        "--set", "policy.overlap=bsp", "--gpus", "1,2,4,8,16,32,64", "-q",
                        "--report", "{out}"]),
    ("scale-dgx1.json", ["scale", RESNET, "--scenario", "scenarios/dgx1_8x8_ib100.yaml",
                         "--gpus", "1,2,4,8,16,32,64", "-q", "--report", "{out}"]),
    ("optimize-dgx1.json", ["optimize", RESNET, "--scenario", "scenarios/dgx1_8x8_ib100.yaml",
                            "--set", "policy.overlap=ddp", "--param", "policy.bucket_cap",
                            "--from", "1MiB", "--to", "256MiB", "--points", "12", "-q",
                            "--report", "{out}"]),
    # 60 points, three keys varying: nodes, network and policy.
    ("sweep3.jsonl", ["sweep", "scenarios/sweeps/resnet50_network_policy.yaml", "-q",
                      "-o", "{out}"]),
    ("mlp-sim.ssgdt", ["simulate", MLP + "/trace.ssgdt", "--scenario", MLP + "/scenario.yaml",
                       "-q", "--log", "error", "--trace", "{out}"]),
    ("diff.json", ["diff", MLP + "/trace.ssgdt", "{dir}/mlp-sim.ssgdt", "--report", "{out}"]),
]

# Each page: its inputs (paths from the source root; "@name" is a file made
# above) and the least share of the window its widest chart must span.
CASES = {
    "simulate": ["tests/data/golden/simulate/scenario_v100_4x4_10gbe.json"],
    "simulate-several": ["tests/data/golden/simulate/scenario_v100_4x4_10gbe.json",
                         "tests/data/golden/simulate/scenario_dgx1_8x8_ib100.json",
                         "tests/data/golden/simulate/scenario_whatif_perturb.json"],
    "scale": ["tests/data/golden/scale/resnet50_v100_4x4_10gbe.json"],
    "optimize": ["tests/data/report/optimize.json"],
    "sweep": ["tests/data/report/sweep.jsonl"],
    # A simulate report and the timeline of the same run (2 x 2 GPUs, rank 3 a
    # straggler), gzip: tests/data/report/README.md.
    "timeline": ["tests/data/report/timeline_simulate.json", "tests/data/report/timeline.json.gz"],
    # Two what-ifs compared, labelled by the keys that differ (README's example).
    "compare-whatifs": ["@wfbp.json", "@bsp-100gbe.json"],
    "shared-fabric": ["@shared.json"],
    # Three scale reports overlaid in one speedup and one efficiency chart.
    "scale-overlay": ["tests/data/golden/scale/resnet50_v100_4x4_10gbe.json", "@scale-bsp.json",
                      "@scale-dgx1.json"],
    # Two optimize reports of policy.bucket_cap on one curve chart, in MiB.
    "optimize-overlay": ["tests/data/report/optimize.json", "@optimize-dgx1.json"],
    "sweep-3-keys": ["@sweep3.jsonl"],
    "dataset-verify": ["tests/data/golden/dataset_verify/cpu-cluster.json"],
    "diff": ["@diff.json"],
}
# Pages whose charts sit two to a row: each spans about half the window.
HALF_WIDTH = {"scale": 0.4, "scale-overlay": 0.4, "sweep-3-keys": 0.4}


def find_chromium(given):
    for name in ([given] if given else []) + ["chromium", "chromium-browser", "google-chrome"]:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, profile, url, extra, timeout):
    """Runs headless Chromium on `url`; returns (stdout, stderr)."""
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--mute-audio", "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
            "--virtual-time-budget=8000"] + extra + [url]
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, HOME=profile))
    return done.stdout, done.stderr


def console_lines(stderr):
    return [l for l in stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]


def check_page(browser, html_path, png_path, profile, min_span=MIN_CHART_SPAN):
    """Returns (charts in the page, widest chart in px, problems found); png_path
    None: no screenshot."""
    problems = []
    url = "file://" + os.path.abspath(html_path)
    with open(html_path, encoding="utf-8") as f:
        charts = len(re.findall(r'<div class="chart" id="chart-\d+"></div>', f.read()))
    window = f"--window-size={WINDOW_WIDTH},2400"
    dom, log = chromium(browser, profile, url, ["--dump-dom", window], 60)
    for line in console_lines(log):
        problems.append("console: " + line.strip())
    errors = re.search(r'<pre id="ssgd-errors"[^>]*>(.*?)</pre>', dom, re.S)
    if errors is None:
        problems.append("no #ssgd-errors element in the page (did it load?)")
    elif errors.group(1).strip():
        problems.append("errors recorded by the page: " + errors.group(1).strip())
    status = re.search(r'<p id="ssgd-status"[^>]*data-state="([a-z]+)"[^>]*>(.*?)</p>', dom, re.S)
    if status is None or status.group(1) != "done":
        problems.append("charts not all drawn: " + (status.group(0) if status else "no #ssgd-status"))
    drawn = len(re.findall(r'data-drawn="yes"', dom))
    svgs = len(re.findall(r'<svg[^>]*class="marks"', dom))
    if charts == 0:
        problems.append("the page has no charts")
    if drawn != charts or svgs < charts:
        problems.append(f"{charts} charts, {drawn} drawn, {svgs} SVGs")
    widths = [float(w) for w in
              re.findall(r'<svg[^>]*class="marks"[^>]*?\swidth="([0-9.]+)"', dom)]
    widest = max(widths, default=0.0)
    if widest < min_span * WINDOW_WIDTH:
        problems.append(f"the widest chart is {widest:.0f} px wide in a {WINDOW_WIDTH} px window "
                        f"(at least {min_span * WINDOW_WIDTH:.0f} expected): the page does not use "
                        "the window's width")
    if png_path is None:
        return charts, widest, problems
    _, log = chromium(browser, profile, url, ["--screenshot=" + os.path.abspath(png_path),
                                              f"--window-size={WINDOW_WIDTH},3000",
                                              "--hide-scrollbars"], 60)
    for line in console_lines(log):
        problems.append("console (screenshot run): " + line.strip())
    if not os.path.exists(png_path) or os.path.getsize(png_path) < 10000:
        problems.append("no screenshot (or an empty one) at " + png_path)
    return charts, widest, problems


def make_inputs(ssgd, source, folder):
    """Runs MADE; returns the problems (a failed command)."""
    os.makedirs(folder, exist_ok=True)
    problems = []
    for name, args in MADE:
        out = os.path.join(folder, name)
        if os.path.exists(out):
            os.remove(out)
        argv = [ssgd] + [a.replace("{out}", out).replace("{dir}", folder) for a in args]
        done = subprocess.run(argv, cwd=source, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(out):
            problems.append(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ssgd", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--chromium", default=os.environ.get("SSGD_CHROMIUM", ""))
    a = parser.parse_args()
    browser = find_chromium(a.chromium)
    if browser is None:
        print("SKIPPED: no Chromium (apt-get install chromium, or tools/install_deps.sh; "
              "SSGD_CHROMIUM names another): the report's pages were not opened in a browser")
        return SKIP
    os.makedirs(a.out, exist_ok=True)
    failed = False
    made_dir = os.path.abspath(os.path.join(a.out, "inputs"))
    for p in make_inputs(os.path.abspath(a.ssgd), a.source, made_dir):
        print("FAIL making the inputs: " + p)
        failed = True
    with tempfile.TemporaryDirectory(prefix="ssgd-report-browser-") as profile:
        for name, given in CASES.items():
            inputs = [os.path.join(made_dir, i[1:]) if i.startswith("@") else i for i in given]
            start = time.monotonic()
            html = os.path.join(a.out, name + ".html")
            png = os.path.join(a.out, name + ".png")
            for old in (html, png):
                if os.path.exists(old):
                    os.remove(old)
            made = subprocess.run([a.ssgd, "report"] + inputs + ["-o", html], cwd=a.source,
                                  capture_output=True, text=True)
            if made.returncode != 0:
                print(f"FAIL {name}: ssgd report exited {made.returncode}: {made.stderr.strip()}")
                failed = True
                continue
            charts, widest, problems = check_page(browser, html, png, profile,
                                                  HALF_WIDTH.get(name, MIN_CHART_SPAN))
            took = time.monotonic() - start
            if problems:
                failed = True
                print(f"FAIL {name} ({took:.1f} s):")
                for p in problems:
                    print("  " + p)
                print("  page: " + os.path.abspath(html))
                print("  screenshot: " + (os.path.abspath(png) if os.path.exists(png)
                                          else "none was taken"))
            else:
                print(f"ok   {name}: {charts} charts drawn, the widest {widest:.0f} px of "
                      f"{WINDOW_WIDTH}, no console message ({took:.1f} s); {png}")
        # The check itself must be able to fail: the first page with one chart's
        # mark broken must be caught.
        html = os.path.join(a.out, "simulate.html")
        if os.path.exists(html):
            with open(html, encoding="utf-8") as f:
                page = f.read()
            broken = page.replace('"mark":{"type":"bar"', '"mark":{"type":"no-such-mark"', 1)
            broken_path = os.path.join(a.out, "broken-on-purpose.html")
            with open(broken_path, "w", encoding="utf-8") as f:
                f.write(broken)
            _, _, problems = check_page(browser, broken_path, None, profile)
            if broken == page or not problems:
                print("FAIL the check missed a page with a broken chart: " + broken_path)
                failed = True
            else:
                print("ok   a page with a broken chart on purpose is caught: " + problems[0][:120])
            # And a page held to half the window.
            narrow = page.replace("max-width: 1600px", "max-width: 600px", 1)
            narrow_path = os.path.join(a.out, "narrow-on-purpose.html")
            with open(narrow_path, "w", encoding="utf-8") as f:
                f.write(narrow)
            _, _, problems = check_page(browser, narrow_path, None, profile)
            if narrow == page or not any("widest chart" in p for p in problems):
                print("FAIL the check missed a page narrower than the window: " + narrow_path)
                failed = True
            else:
                print("ok   a page narrower than the window on purpose is caught")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
