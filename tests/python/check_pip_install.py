"""`pip install .` of the module as docs/python.md shows it, checked end to end.

Makes a venv with --system-site-packages in a new folder under WORK (in the
build tree; removed when the check passes, kept when it fails), runs
`pip install --no-build-isolation --no-index SOURCE` into it (offline:
Debian's setuptools and wheel, nothing from PyPI), then, from that folder
(outside the source tree, PYTHONPATH unset), imports ssgd and checks that it
is the installed copy, that its version and the installed distribution's
are VERSION (project() in CMakeLists.txt), that it replays a bundled layer
profile as build/python's module does, and that pip uninstalls it.

Registered with ctest (tests/CMakeLists.txt, label pip). With
--cmake-build-dir DIR (Python.PipInstall: the build tree ctest runs in)
setup.py builds the target ssgd_python in that configured tree and packages
it: seconds. Without it (Python.PipInstallFresh) the install configures and
builds the module from scratch in the run's folder, as a user's
`pip install .` does: minutes on 2 cores, so only when SSGD_TEST_PIP_FRESH=1
is set (ccache is used when on PATH).

Exit status 77 (ctest: skipped) with the reason when the venv module or pip,
setuptools or wheel are missing (Debian: python3-venv, python3-pip,
python3-setuptools, python3-wheel; tools/install_deps.sh installs them).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77

PROBE = r"""
import importlib.metadata, json, sys
import ssgd
try:
    dist_version = importlib.metadata.version("ssgd")
except importlib.metadata.PackageNotFoundError:
    dist_version = None
r = ssgd.simulate(sys.argv[1], sys.argv[2], network__inter_node="100gbe")
print(json.dumps({
    "file": ssgd.__file__,
    "version": ssgd.__version__,
    "dist_version": dist_version,
    "throughput": r["throughput_samples_per_s"],
    "iteration_ns": r["iteration_time_ns"],
}))
"""


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def fail(why, done=None):
    print(f"FAIL: {why}")
    if done is not None:
        print("--- stdout ---\n" + (done.stdout or "") + "\n--- stderr ---\n" + (done.stderr or ""))
    sys.exit(1)


def run(cmd, **kw):
    print("+", " ".join("PROBE" if c == PROBE else str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True, type=Path, help="the repository root")
    ap.add_argument("--work", required=True, type=Path, help="a scratch folder, emptied first")
    ap.add_argument("--version", required=True, help="the version the install must have")
    ap.add_argument("--cmake-build-dir", type=Path,
                    help="a configured build tree to build ssgd_python in (else a fresh build)")
    ap.add_argument("--reference-pythonpath", type=Path,
                    help="a folder with the build's ssgd, whose result the installed one must equal")
    args = ap.parse_args()
    source = args.source.resolve()
    work = args.work.resolve()
    fresh = args.cmake_build_dir is None
    if fresh and os.environ.get("SSGD_TEST_PIP_FRESH") != "1":
        skip("the from-scratch build of the module takes minutes: set SSGD_TEST_PIP_FRESH=1 to run it")

    # An environment without anything that would pick another ssgd or another pip setup.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV", "VIRTUAL_ENV",
                        "SSGD_CMAKE_BUILD_DIR")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    if fresh:
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        if shutil.which("ccache") and "CMAKE_CXX_COMPILER_LAUNCHER" not in env:
            env["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
    else:
        env["SSGD_CMAKE_BUILD_DIR"] = str(args.cmake_build_dir.resolve())

    # A folder of its own under WORK: two runs at once (two ctest runs in one
    # build tree) must not remove each other's venv. Removed when it passes,
    # left for a look when it fails.
    work.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    if fresh:
        env["SSGD_CMAKE_BUILD_DIR"] = str(work / "cmake")
    venv = work / "venv"
    print(f"mode: {'a fresh build in ' if fresh else 'the build tree '}{env['SSGD_CMAKE_BUILD_DIR']}")
    t0 = time.monotonic()

    # python3 -m venv installs pip into the venv with ensurepip, which Debian
    # ships in python3-venv; without it venv says "ensurepip is not available".
    done = run([sys.executable, "-m", "venv", "--system-site-packages", venv], env=env)
    if done.returncode != 0:
        said = (done.stdout + done.stderr).strip()
        if "ensurepip" in said or "No module named venv" in said:
            skip("python3 -m venv cannot make a venv with pip: ensurepip or venv is not available"
                 " (Debian: apt install python3-venv)")
        fail("python3 -m venv failed", done)
    py = venv / "bin" / "python"
    done = run([py, "-m", "pip", "--version"], env=env)
    if done.returncode != 0:
        skip("no pip in the venv (Debian: apt install python3-pip python3-venv)")
    done = run([py, "-c", "import setuptools, wheel; print(setuptools.__version__, wheel.__version__)"],
               env=env)
    if done.returncode != 0:
        skip("setuptools or wheel is missing (Debian: apt install python3-setuptools python3-wheel)")
    print("setuptools, wheel:", done.stdout.strip())
    t_venv = time.monotonic()

    done = run([py, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-index", source],
               env=env, cwd=work, timeout=3000)
    if done.returncode != 0:
        fail("pip install --no-build-isolation --no-index failed", done)
    print("\n".join(l.strip() for l in (done.stdout + done.stderr).splitlines() if l.strip().startswith("setup.py:")
                     or "Successfully" in l or "Created wheel" in l))
    t_pip = time.monotonic()

    data = source / "traces" / "datasets" / "resnet50_v100.csv"
    scenario = source / "scenarios" / "v100_4x4_10gbe.yaml"
    done = run([py, "-B", "-c", PROBE, data, scenario], env=env, cwd=work)
    if done.returncode != 0:
        fail("import ssgd / ssgd.simulate in the venv failed", done)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    print("installed:", got)
    site = venv / "lib"
    if not Path(got["file"]).resolve().is_relative_to(site.resolve()):
        fail(f"ssgd was imported from {got['file']}, not from the venv's {site}")
    if got["version"] != args.version or got["dist_version"] != args.version:
        fail(f"version {got['version']} (module), {got['dist_version']} (distribution);"
             f" CMakeLists.txt has {args.version}")
    if not got["throughput"] > 0:
        fail(f"throughput {got['throughput']}")

    if args.reference_pythonpath:
        ref_env = dict(env, PYTHONPATH=str(args.reference_pythonpath.resolve()))
        done = run([sys.executable, "-B", "-c", PROBE, data, scenario], env=ref_env, cwd=work)
        if done.returncode != 0:
            fail("the build's module failed on the same call", done)
        ref = json.loads(done.stdout.strip().splitlines()[-1])
        if (ref["throughput"], ref["iteration_ns"]) != (got["throughput"], got["iteration_ns"]):
            fail(f"the installed module says {got}, the build's {ref} (is that build up to date?)")

    # pip uninstall works too (what pip recorded is what it installed).
    done = run([py, "-m", "pip", "uninstall", "-y", "ssgd"], env=env, cwd=work)
    if done.returncode != 0:
        fail("pip uninstall ssgd failed", done)

    print(f"OK: venv {t_venv - t0:.1f} s, pip install {t_pip - t_venv:.1f} s,"
          f" check {time.monotonic() - t_pip:.1f} s")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
