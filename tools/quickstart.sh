#!/usr/bin/env bash
# Quick start: install what is missing, build, and replay the bundled
# ResNet-50 profile on 4 nodes x 4 V100s joined by 10 Gb Ethernet, under WFBP
# and under BSP, printing the summary tables, and write both runs side by side
# as one HTML page (ssgd report).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh
echo
build/bin/ssgd simulate traces/datasets/resnet50_v100.csv --scenario scenarios/v100_4x4_10gbe.yaml \
  --report build/quickstart-report.json --timeline build/quickstart-timeline.json
echo
echo "Same job without overlap (--set policy.overlap=bsp):"
build/bin/ssgd simulate traces/datasets/resnet50_v100.csv --scenario scenarios/v100_4x4_10gbe.yaml \
  --set policy.overlap=bsp --report build/quickstart-bsp-report.json
echo
build/bin/ssgd report build/quickstart-report.json build/quickstart-timeline.json \
  build/quickstart-bsp-report.json \
  -o build/quickstart-report.html
echo "Report: build/quickstart-report.html (opens from disk in any browser), from" \
  "build/quickstart-report.json, its timeline and build/quickstart-bsp-report.json;" \
  "timeline: build/quickstart-timeline.json (open in ui.perfetto.dev)"
