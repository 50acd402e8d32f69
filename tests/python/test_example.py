"""docs/examples/python_whatif.py runs and prints its table, so it cannot rot."""

import os
import pathlib
import subprocess
import sys

import ssgd
from conftest import ROOT


def test_the_whatif_example_runs():
    env = dict(os.environ)
    module_dir = str(pathlib.Path(ssgd.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([module_dir, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "docs/examples/python_whatif.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    table = [f for f in (l.split() for l in lines)
             if len(f) == 5 and f[0] in ("ResNet-50", "VGG-16") and f[1] in ("10gbe", "100gbe")]
    assert len(table) == 2 * 2 * 5  # networks x links x GPU counts
    # 100 GbE is never slower than 10 GbE at the same count.
    by = {(n, link, int(g)): float(t) for n, link, g, t, _ in table}
    for (n, link, g), t in by.items():
        if link == "10gbe":
            assert by[(n, "100gbe", g)] >= t
    assert any("per iteration" in l for l in lines)
