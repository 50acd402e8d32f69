#!/usr/bin/env bash
# Installs the Debian 12 packages ssgd needs to build and test, only those
# that are missing. Runs apt-get as root, or through sudo when not root.
# The CUDA toolkit (for the tracer) is not a Debian package: it is found at
# /usr/local/cuda when present and skipped otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  protobuf-compiler libprotobuf-dev
  libboost-graph-dev
  libspdlog-dev libfmt-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libzstd-dev zlib1g-dev
  libsqlite3-dev  # ssgd import nsys (Nsight Systems SQLite exports)
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  clang libclang-rt-14-dev  # the sanitized suite and the fuzzers (tools/fuzz.sh)
  chromium  # the browser test of `ssgd report`'s HTML
  python3-dev pybind11-dev python3-pytest python3-numpy python3-pandas  # the Python module
  python3-venv python3-pip python3-setuptools python3-wheel  # pip install . of it (setup.py)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages are installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install_deps: missing packages: ${missing[*]}" >&2
  echo "install_deps: run this script as root, or install sudo" >&2
  exit 1
fi

echo "install_deps: installing ${#missing[@]} missing packages: ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
