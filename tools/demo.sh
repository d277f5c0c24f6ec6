#!/usr/bin/env bash
# The main job on its embedded default: on a machine without an NVIDIA driver, a simulated V100 training
# resnet50 for one epoch, measured in virtual time.
set -euo pipefail
BUILD_DIR=${1:-build}
WW="$BUILD_DIR/src/cli/wattwise"
if "$WW" info >/dev/null 2>&1; then
  echo "== NVIDIA driver found: measuring a real GPU is 'wattwise measure -- CMD'; the demo stays simulated"
fi
echo "== wattwise measure --simulate v100:resnet50"
"$WW" measure --simulate v100:resnet50
