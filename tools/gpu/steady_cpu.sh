#!/usr/bin/env bash
# wattwise's CPU and memory over a long idle job on the GPU machine (issue 11: "leave it running"), READ-ONLY:
# only `wattwise measure -- sleep N` runs. Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along.
#   bash tools/gpu/steady_cpu.sh [SECONDS] [measure flags...]   (default 300)
# Writes under $OUT: steady.json, steady.txt, steady.threads (per-thread CPU ticks every 5 s), steady.rss
# (VmRSS in kB every 5 s); tools/gpu/evaluate_node.py's steady_cpu_pct reads the .threads file.
source "$(dirname "$0")/preamble.sh"
SECONDS_IDLE=${1:-300}; shift || true
FLAGS=("$@")
W="$OUT"
nvidia-smi --query-gpu=power.limit,clocks.sm,clocks.mem --format=csv > "$W/limits-before.txt" 2>&1
measure_watched steady --no-status --json "$W/steady.json" -- sleep "$SECONDS_IDLE"
tail -6 "$W/steady.txt"
nvidia-smi --query-gpu=power.limit,clocks.sm,clocks.mem --format=csv > "$W/limits-after.txt" 2>&1
