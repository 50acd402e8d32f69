"""Shared fixtures of the Python module's tests (docs/python.md).

Run from the repository root: ``ctest -R Python.Module``, or
``PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python``.
SSGD_CLI names the ``ssgd`` binary the reports are compared with (default
build/bin/ssgd)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
if not any(pathlib.Path(p, "ssgd").is_dir() for p in sys.path if p):
    sys.path.insert(0, str(ROOT / "build" / "python"))

RESNET = "traces/datasets/resnet50_v100.csv"
VGG = "traces/datasets/vgg16_v100.csv"
SCENARIO = "scenarios/v100_4x4_10gbe.yaml"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    """Paths in reports are as given: every test runs from the repository root."""
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("SSGD_CLI", str(ROOT / "build" / "bin" / "ssgd"))
    if not os.access(path, os.X_OK):
        pytest.skip(f"no ssgd binary at {path} (set SSGD_CLI)")
    return path


@pytest.fixture
def cli_report(cli, tmp_path):
    """Runs `ssgd ARGS... --report FILE` and returns the report as a dict."""

    def run(*args):
        out = tmp_path / "report.json"
        if out.exists():
            out.unlink()
        done = subprocess.run([cli, *args, "--report", str(out)], cwd=ROOT,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(out.read_text())

    return run


@pytest.fixture
def cli_error(cli):
    """Runs `ssgd ARGS...`, expects exit status 2, and returns its message
    without the 'ssgd: error: ' prefix."""

    def run(*args):
        done = subprocess.run([cli, *args], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 2, done.stderr
        lines = [l for l in done.stderr.splitlines() if l.startswith("ssgd: error: ")]
        assert len(lines) == 1, done.stderr
        return lines[0][len("ssgd: error: "):]

    return run
