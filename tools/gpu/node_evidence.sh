#!/usr/bin/env bash
# Issue 11 on the GPU machine, READ-ONLY: only `wattwise measure` runs (no setter is ever called).
# Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along. Runs the same steps for the "before"
# and "after" builds, so their files compare one to one:
#   bash tools/gpu/node_evidence.sh TAG [measure flags...]   e.g.  node_evidence.sh before
# - wattwise's CPU per GPU, idle (sleep) and under training (resnet50, batch 128, iteration markers): over the
#   whole run (its JSON) and in the steady state, per thread (/proc/PID/task every 5 s, *.threads);
# - per-phase consistency: on/off bf16 loads in 0.5 s and 0.2 s phases (k products vs the steady phase),
#   per-iteration energy of resnet50 (CV), with iteration markers placed by the CPU loop (train) and after
#   torch.cuda.synchronize() (train_sync: the GPU's own iteration boundaries);
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
nvidia-smi --query-gpu=power.limit,clocks.sm,clocks.mem --format=csv > "$W/limits-before.txt" 2>&1
cat "$W/environment.txt" "$W/powercap.txt" "$W/limits-before.txt"

step "idle: measure -- sleep 40"
measure_watched idle --json "$W/idle.json" -- sleep 40
tail -8 "$W/idle.txt"

for sync in "" --sync; do
  name=train${sync:+_sync}
  step "training: resnet50 batch 128, 30 s of iterations ${sync:-(markers where the CPU loop is)}"
  measure_watched "$name" --json "$W/$name.json" --trace "$W/$name.csv" -- \
      python3 workloads/train_cnn.py --model resnet50 --batch 128 --warmup-iters 5 --max-seconds 30 $sync
  tail -14 "$W/$name.txt"
done

for phase in 0.5 0.2; do
  periods=10; [ "$phase" = 0.2 ] && periods=25
  step "on/off load, ${phase} s phases"
  measure_watched "onoff_${phase}" --json "$W/onoff_${phase}.json" --trace "$W/onoff_${phase}.csv" -- \
      python3 tools/gpu/onoff_load.py --phase-s "$phase" --periods "$periods"
  tail -9 "$W/onoff_${phase}.txt"
done

step "CUDA_VISIBLE_DEVICES=0: which GPUs is the job charged for"
CUDA_VISIBLE_DEVICES=0 "$WW" measure "${FLAGS[@]}" --json "$W/cvd0.json" -- \
    python3 -c 'import torch, time; x = torch.ones(1 << 20, device="cuda"); time.sleep(4); print(float(x.sum()))' \
    > "$W/cvd0.txt" 2>&1
tail -10 "$W/cvd0.txt"
nvidia-smi --query-gpu=power.limit,clocks.sm,clocks.mem --format=csv > "$W/limits-after.txt" 2>&1
step done
