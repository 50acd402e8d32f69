#!/usr/bin/env bash
# Builds a testbed dataset from scratch on this Linux machine, as root:
# installs what is missing (the build's Debian packages, python3-torch,
# iproute2), builds ssgd, checks that network namespaces, tc tbf and cgroups
# work, runs the grid (about an hour for the bundled one on a quiet 2-core
# machine: run nothing else meanwhile), and writes the dataset with its
# manifest. The emulated cluster is torn down on every exit path.
#
#   tools/testbed/build_dataset.sh [GRID] [OUT]
#     GRID  default tools/testbed/grids/cpu-cluster.toml (the bundled dataset's)
#     OUT   default build/testbed/<grid name>; must not exist yet
#
# Then: build/bin/ssgd dataset verify OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
grid=${1:-tools/testbed/grids/cpu-cluster.toml}
name=$(basename "$grid" .toml)
out=${2:-build/testbed/$name}
if [ "$(id -u)" -ne 0 ]; then
  echo "build_dataset: the testbed needs root (network namespaces, tc, cgroups)" >&2
  exit 2
fi
if [ -e "$out" ]; then
  echo "build_dataset: $out exists; remove it or name another folder" >&2
  exit 2
fi
tools/install_deps.sh
missing=()
for p in python3-torch iproute2 util-linux; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "build_dataset: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
tools/build.sh
/usr/bin/python3 tools/testbed/testbed.py check
/usr/bin/python3 tools/testbed/testbed.py run "$grid" -o "$out"
build/bin/ssgd dataset verify "$out"
