#!/usr/bin/python3
"""`ssgd report` in a real browser: headless Chromium opens each test page
from disk (no network) and the test fails on any console message, uncaught
error or rejected promise, or on a chart that was not drawn as SVG. A
screenshot of each page is left in the output folder.

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
}


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


def check_page(browser, html_path, png_path, profile):
    """Returns (charts in the page, problems found); png_path None: no screenshot."""
    problems = []
    url = "file://" + os.path.abspath(html_path)
    with open(html_path, encoding="utf-8") as f:
        charts = len(re.findall(r'<div class="chart" id="chart-\d+"></div>', f.read()))
    dom, log = chromium(browser, profile, url, ["--dump-dom"], 60)
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
    if png_path is None:
        return charts, problems
    _, log = chromium(browser, profile, url, ["--screenshot=" + os.path.abspath(png_path),
                                              "--window-size=1200,2400", "--hide-scrollbars"], 60)
    for line in console_lines(log):
        problems.append("console (screenshot run): " + line.strip())
    if not os.path.exists(png_path) or os.path.getsize(png_path) < 10000:
        problems.append("no screenshot (or an empty one) at " + png_path)
    return charts, problems


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
    with tempfile.TemporaryDirectory(prefix="ssgd-report-browser-") as profile:
        for name, inputs in CASES.items():
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
            charts, problems = check_page(browser, html, png, profile)
            took = time.monotonic() - start
            if problems:
                failed = True
                print(f"FAIL {name} ({took:.1f} s):")
                for p in problems:
                    print("  " + p)
            else:
                print(f"ok   {name}: {charts} charts drawn, no console message ({took:.1f} s); {png}")
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
            _, problems = check_page(browser, broken_path, None, profile)
            if broken == page or not problems:
                print("FAIL the check missed a page with a broken chart: " + broken_path)
                failed = True
            else:
                print("ok   a page with a broken chart on purpose is caught: " + problems[0][:120])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
