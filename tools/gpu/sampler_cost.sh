#!/usr/bin/env bash
# Where the sampler's CPU goes on a real GPU (issue 11, item 3), READ-ONLY: only `wattwise measure` runs, and
# nothing here calls a setter. Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along.
#   usage: bash tools/gpu/sampler_cost.sh [TRAIN_SECONDS]   (default 60; about 3 minutes in all)
# Writes under $OUT: idle.json (`measure -- sleep 30`), idle_pcie.json (the same for 15 s with
# --pcie-interval 1000: what a PCIe read costs), train.json (ResNet-50, batch 128, synthetic data,
# iteration markers), their terminal output (*.txt), environment.txt, and summary.md
# (tools/gpu/evaluate_sampler_cost.py: CPU per GPU, the sampler_cost breakdown, the per-iteration CV).
source "$(dirname "$0")/preamble.sh"
TRAIN_S=${1:-60}
step() { echo "== $(date +%T) $*"; }

step environment
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; "$WW" --version;
  uname -r; nproc; uptime; } > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

step "idle: measure -- sleep 30"
"$WW" measure --no-status --json "$OUT/idle.json" -- sleep 30 > "$OUT/idle.txt" 2>&1
tail -6 "$OUT/idle.txt"

step "idle with PCIe throughput read once a second: measure --pcie-interval 1000 -- sleep 15"
"$WW" measure --no-status --pcie-interval 1000 --json "$OUT/idle_pcie.json" -- sleep 15 > "$OUT/idle_pcie.txt" 2>&1
tail -6 "$OUT/idle_pcie.txt"

step "training: resnet50 batch 128, ${TRAIN_S} s of iterations"
"$WW" measure --no-status --json "$OUT/train.json" -- \
    python3 workloads/train_cnn.py --model resnet50 --batch 128 --warmup-iters 5 --max-seconds "$TRAIN_S" \
    > "$OUT/train.txt" 2>&1
tail -14 "$OUT/train.txt"

step summary
python3 tools/gpu/evaluate_sampler_cost.py "$OUT" > "$OUT/summary.md" 2>&1
cat "$OUT/summary.md"
step done
