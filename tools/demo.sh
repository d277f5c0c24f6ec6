#!/usr/bin/env bash
# The main job on its embedded default: without an NVIDIA driver, a simulated Tesla V100 training resnet50,
# in virtual time: one measured epoch, then a power-limit sweep with its recommendation, the same sweep run
# adaptively for the recommendation it closes with (docs/sweep.md "Adaptive sweeps"), the power limit tuned while the job trains (docs/tune.md) and
# its A/A dry run, the same under a 10% slowdown budget, then the exhaustive sweep's report.
set -euo pipefail
BUILD_DIR=${1:-build}
WW="$BUILD_DIR/src/cli/wattwise"
OUT=${WATTWISE_DEMO_DIR:-demo-output}
mkdir -p "$OUT"
if "$WW" info >/dev/null 2>&1; then
  echo "== an NVIDIA driver is present: 'wattwise info' and 'wattwise measure -- CMD' use it; the demo stays simulated"
fi
echo "== wattwise measure --simulate v100:resnet50"
"$WW" measure --simulate v100:resnet50 --trace "$OUT/epoch.csv" --json "$OUT/epoch.json"

echo
echo "== wattwise sweep --simulate v100:resnet50 --power-limit 150:300:5 --repeat 5   (155 simulated epochs)"
rm -f "$OUT/sweep.db"
"$WW" sweep --simulate v100:resnet50 --power-limit 150:300:5 --repeat 5 --order random --seed 1 --db "$OUT/sweep.db"

echo
echo "== wattwise sweep --adaptive --simulate v100:resnet50 --power-limit 150:300:5 --metric E --max-slowdown 10%   (the closing line's question, the lowest energy at most 10% slower, in ~1/3 of the runs, all spent around its answer)"
rm -f "$OUT/adaptive.db"
"$WW" sweep --adaptive --simulate v100:resnet50 --power-limit 150:300:5 --metric E --max-slowdown 10% --seed 1 \
    --db "$OUT/adaptive.db"

echo
echo "== wattwise tune --simulate v100:resnet50 --iterations 3000   (tuning inside the running job, ~140 profiling iterations: the median of docs/evidence/tune-benchmark.md)"
"$WW" tune --simulate v100:resnet50 --iterations 3000 --seed 1 --json "$OUT/tune.json"

echo
echo "== wattwise tune --simulate v100:resnet50 --iterations 3000 --dry-run   (the A/A test: every candidate runs at the start value, so it must hold it)"
"$WW" tune --simulate v100:resnet50 --iterations 3000 --seed 1 --dry-run 2>&1 | tail -4

echo
echo "== wattwise tune --simulate v100:resnet50 --iterations 3000 --max-slowdown 10%   (the lowest energy at most 10% slower; the budget kept to within 0.15% of its time, docs/tune.md)"
"$WW" tune --simulate v100:resnet50 --iterations 3000 --seed 1 --max-slowdown 10% 2>&1 | tail -3

echo
echo "== wattwise report $OUT/sweep.db -o $OUT/report.html"
"$WW" report "$OUT/sweep.db" -o "$OUT/report.html"
echo "open $OUT/report.html in a browser (it works offline)"
