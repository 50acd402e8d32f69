"""Builds the Python module ssgd (docs/python.md) with CMake, for pip:

    python3 -m venv --system-site-packages .venv
    .venv/bin/python -m pip install --no-build-isolation .

setuptools runs this file; its build_ext configures this repository with only
what the module needs (no tests, benchmarks, tracer or MPI), builds the
target ssgd_python for the interpreter that runs pip (sys.executable) and puts
the extension _ssgd beside python/ssgd/__init__.py in the wheel.

Where it builds: build-pip/ in the source tree (setuptools' own staging and
the CMake build folder, kept between installs so that a second install only
rebuilds what changed). SSGD_CMAKE_BUILD_DIR=DIR builds in DIR instead: a
folder CMake has already configured (build/, for instance) is used as it is
configured, only the target ssgd_python is built there; an empty or missing
one is configured as above. setuptools' staging then goes to DIR/setuptools.

The version is the one of project() in CMakeLists.txt, as the C++ has it.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def cmake_project_version():
    """The version of `project(ssgd VERSION x.y.z ...)`, the one place it is written."""
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    m = re.search(r"^\s*project\(\s*ssgd\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", text, re.MULTILINE)
    if not m:
        sys.exit("setup.py: CMakeLists.txt has no `project(ssgd VERSION x.y.z ...)`")
    return m.group(1)


def cmake_build_dir_from_env():
    value = os.environ.get("SSGD_CMAKE_BUILD_DIR")
    return Path(value).resolve() if value else None


class CMakeExtension(Extension):
    """The extension _ssgd: built by CMake (python/CMakeLists.txt), not by setuptools."""

    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = cmake_build_dir_from_env()
        # Not build_temp: an editable install (pip install -e) gets a
        # temporary one, and would build everything again every time.
        build_dir = given or Path(BUILD_BASE) / f"cmake.{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
        build_dir.mkdir(parents=True, exist_ok=True)
        configured = (build_dir / "CMakeCache.txt").exists()
        if given and configured:
            print(f"setup.py: building in {build_dir} as it is configured (SSGD_CMAKE_BUILD_DIR)")
        else:
            # Our own folder is configured again every time (a second or so,
            # nothing rebuilt): it then follows the interpreter that runs pip.
            self._configure(build_dir, fresh=not configured)

        cmd = ["cmake", "--build", str(build_dir), "--target", "ssgd_python"]
        if "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            cmd += ["--parallel", str(self.parallel or os.cpu_count() or 2)]
        self._run(cmd, f"the target ssgd_python in {build_dir} did not build"
                       + ("" if not (given and configured) else
                          " (is the Python module on in that build? its configure step prints"
                          " `Python module : ...`)"))

        # The extension as this interpreter names it: another name means
        # another interpreter's ABI (a build tree configured for another Python).
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "ssgd" / f"_ssgd{suffix}"
        if not built.exists():
            found = sorted(p.name for p in (build_dir / "python" / "ssgd").glob("_ssgd*"))
            sys.exit(f"setup.py: no {built.name} in {built.parent} (found: {', '.join(found) or 'nothing'});"
                     f" that build is not for {sys.executable}: set -DPython3_EXECUTABLE there,"
                     " or leave SSGD_CMAKE_BUILD_DIR unset")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        print(f"setup.py: {built} -> {target}")

    def _configure(self, build_dir, fresh):
        cmd = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
               "-DCMAKE_BUILD_TYPE=Release",
               "-DSSGD_BUILD_PYTHON=ON",
               f"-DPython3_EXECUTABLE={sys.executable}",
               "-DSSGD_BUILD_TESTS=OFF",
               "-DSSGD_BUILD_BENCHMARKS=OFF",
               "-DSSGD_WITH_CUDA=OFF",
               "-DSSGD_WITH_MPI=OFF",
               "-DSSGD_SANITIZE=OFF",
               "-DSSGD_FUZZ=OFF"]
        if fresh and shutil.which("ninja") and not os.environ.get("CMAKE_GENERATOR"):
            cmd += ["-G", "Ninja"]
        print("setup.py: configuring:", " ".join(cmd), flush=True)
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(done.stdout)
        sys.stdout.flush()
        if done.returncode != 0:
            sys.exit("setup.py: the CMake configure step failed (above); tools/install_deps.sh installs"
                     " the Debian packages it needs")
        # Without python3-dev or pybind11 the configure step succeeds and
        # leaves the module out; say why rather than fail on a missing target.
        skipped = re.search(r"ssgd Python module skipped: (.*)", done.stdout)
        if skipped:
            sys.exit(f"setup.py: CMake left the Python module out: {skipped.group(1)}")

    @staticmethod
    def _run(cmd, what):
        print("setup.py:", " ".join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            sys.exit(f"setup.py: {what}")


# setuptools' own staging (build/lib.*, bdist.*, temp.* and the egg-info)
# would go to build/, the repository's CMake build folder: keep it apart.
_env_dir = cmake_build_dir_from_env()
BUILD_BASE = str(_env_dir / "setuptools") if _env_dir else str(ROOT / "build-pip")
Path(BUILD_BASE).mkdir(parents=True, exist_ok=True)

setup(
    version=cmake_project_version(),
    packages=["ssgd"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("ssgd._ssgd")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": BUILD_BASE}, "egg_info": {"egg_base": BUILD_BASE}},
    zip_safe=False,
)
