#!/usr/bin/env bash
# Issue 11 on the GPU machine, READ-ONLY: only `wattwise measure` runs (no setter is ever called).
# Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along. Runs the same steps for the "before"
# and "after" builds, so their files compare one to one:
#   bash tools/gpu/node_evidence.sh TAG [measure flags...]   e.g.  node_evidence.sh before
# - wattwise's CPU per GPU, idle (sleep) and under training (resnet50, batch 128, iteration markers);
# - per-phase consistency: on/off bf16 loads in 0.5 s and 0.2 s phases (k products vs the steady phase),
#   per-iteration energy of resnet50 (CV);
# - CUDA_VISIBLE_DEVICES=0: which GPUs the job is charged for;
# - what this node's powercap (RAPL) exposes.
# Results: one archive under $OUT; tools/gpu/evaluate_node.py reads it.
source "$(dirname "$0")/preamble.sh"
TAG=${1:?tag}; shift
FLAGS=("$@")
W=/tmp/ww-node-$TAG
rm -rf "$W"; mkdir -p "$OUT" "$W"
step() { echo "== $(date +%T) $*"; }
pack() { tar czf "$OUT/node-$TAG.tar.gz" -C "$W" . && ls -la "$OUT"; }
trap pack EXIT

step environment
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv; "$WW" --version;
  uname -r; nproc; echo "flags: ${FLAGS[*]}"; } > "$W/environment.txt" 2>&1
{ echo "# powercap zones (name, energy_uj mode, readable, max_energy_range_uj)";
  for z in /sys/class/powercap/*; do
    [ -e "$z/energy_uj" ] || continue
    printf '%s %s %s %s %s\n' "$(basename "$z")" "$(cat "$z/name" 2>/dev/null)" \
      "$(stat -c %a "$z/energy_uj")" "$(cat "$z/energy_uj" >/dev/null 2>&1 && echo readable || echo unreadable)" \
      "$(cat "$z/max_energy_range_uj" 2>/dev/null)"
  done; ls /sys/class/powercap 2>&1; } > "$W/powercap.txt" 2>&1
cat "$W/environment.txt" "$W/powercap.txt"

step "idle: measure -- sleep 20"
"$WW" measure "${FLAGS[@]}" --json "$W/idle.json" -- sleep 20 > "$W/idle.txt" 2>&1
tail -8 "$W/idle.txt"

step "training: resnet50 batch 128, 30 s of iterations"
"$WW" measure "${FLAGS[@]}" --json "$W/train.json" --trace "$W/train.csv" -- \
    python3 workloads/train_cnn.py --model resnet50 --batch 128 --warmup-iters 5 --max-seconds 30 \
    > "$W/train.txt" 2>&1
tail -14 "$W/train.txt"

for phase in 0.5 0.2; do
  periods=10; [ "$phase" = 0.2 ] && periods=25
  step "on/off load, ${phase} s phases"
  "$WW" measure "${FLAGS[@]}" --json "$W/onoff_${phase}.json" --trace "$W/onoff_${phase}.csv" -- \
      python3 tools/gpu/onoff_load.py --phase-s "$phase" --periods "$periods" > "$W/onoff_${phase}.txt" 2>&1
  tail -9 "$W/onoff_${phase}.txt"
done

step "CUDA_VISIBLE_DEVICES=0: which GPUs is the job charged for"
CUDA_VISIBLE_DEVICES=0 "$WW" measure "${FLAGS[@]}" --json "$W/cvd0.json" -- \
    python3 -c 'import torch, time; x = torch.ones(1 << 20, device="cuda"); time.sleep(4); print(float(x.sum()))' \
    > "$W/cvd0.txt" 2>&1
tail -10 "$W/cvd0.txt"
step done
