#!/usr/bin/env bash
# Quick start: install what is missing, build, and replay ResNet-50's
# training step as it was measured on one NVIDIA H200 (traces/datasets/
# h200-pytorch) on 4 HGX H100 nodes, 32 GPUs, under WFBP and under BSP,
# printing the summary tables, and write both runs side by side as one HTML
# page (ssgd report).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh
trace=traces/datasets/h200-pytorch/resnet50-fp32/trace.ssgdt
echo
build/bin/ssgd simulate "$trace" --scenario scenarios/hgx_h100_4x8.yaml \
  --report build/quickstart-report.json --timeline build/quickstart-timeline.json
echo
echo "Same job without overlap (--set policy.overlap=bsp):"
build/bin/ssgd simulate "$trace" --scenario scenarios/hgx_h100_4x8.yaml \
  --set policy.overlap=bsp --report build/quickstart-bsp-report.json
echo
build/bin/ssgd report build/quickstart-report.json build/quickstart-timeline.json \
  build/quickstart-bsp-report.json \
  -o build/quickstart-report.html
echo "Report: build/quickstart-report.html (opens from disk in any browser), from" \
  "build/quickstart-report.json, its timeline and build/quickstart-bsp-report.json;" \
  "timeline: build/quickstart-timeline.json (open in ui.perfetto.dev)"
