#!/usr/bin/env bash
# Issue 5 on the GPU machine, READ-ONLY: sweeps of job knobs only (`wattwise sweep --read-only` refuses any
# hardware knob and wraps the GPUs so no setting can change). Expects build-gpu/bundle (make_bundle.sh).
#   bash tools/gpu/job_knobs.sh batch-a     resnet50 and vgg19, batch 64/128/256, 2 repeats, random order
#   bash tools/gpu/job_knobs.sh batch-b     alexnet likewise, and the forward/backward split of resnet50
#   bash tools/gpu/job_knobs.sh gpus        1 and 2 GPUs x batch 128/256, resnet50 (a two-GPU machine)
# Results: one archive under $OUT; tools/gpu/evaluate_job_knobs.py makes docs/evidence/job-knobs.md of it.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/ww-out}
PART=${1:?part}
W=/tmp/ww-jobknobs
mkdir -p "$OUT" "$W"
export LD_LIBRARY_PATH="$PWD/build-gpu/bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
WW="$PWD/build-gpu/bundle/wattwise"
step() { echo "== $(date +%T) $*"; }
pack() { tar czf "$OUT/jobknobs-$PART.tar.gz" -C "$W" . && ls -la "$OUT"; }
trap pack EXIT
# Each run: a short epoch (cut at --max-seconds), so a run costs start-up + warm-up + 8 s of training.
TRAIN=(python3 workloads/train_cnn.py --samples-per-epoch 1000000 --max-seconds 8 --warmup-iters 3)

sweep_batch() {
  local model=$1
  step "sweep: $model, batch 64/128/256, 2 repeats, random order"
  "$WW" sweep --read-only --param batch=64,128,256 --repeat 2 --order random --seed 7 \
      --db "$W/$model.db" --trace-dir "$W/traces-$model" -- "${TRAIN[@]}" --model "$model" --batch '{batch}' \
      > "$W/$model.sweep.txt" 2>&1
  echo "rc=$?" >> "$W/$model.sweep.txt"
  tail -25 "$W/$model.sweep.txt"
  "$WW" analyze "$W/$model.db" --phase epoch > "$W/$model.epoch.txt" 2>&1
  "$WW" analyze "$W/$model.db" --phase epoch --json > "$W/$model.epoch.json" 2>>"$W/$model.epoch.txt"
  "$WW" report "$W/$model.db" -o "$W/$model.html" >> "$W/$model.epoch.txt" 2>&1
  cat "$W/$model.epoch.txt"
}

if [ "$PART" = batch-a ]; then
  nvidia-smi -L > "$W/environment.txt"; "$WW" --version >> "$W/environment.txt"
  sweep_batch resnet50
  sweep_batch vgg19
fi
if [ "$PART" = batch-b ]; then
  sweep_batch alexnet
  for mode in plain marked synced; do
    flags=(); [ $mode = marked ] && flags=(--mark-forward-backward); [ $mode = synced ] && flags=(--mark-forward-backward --sync)
    step "resnet50 batch 128, forward/backward markers: $mode"
    "$WW" measure --json "$W/fb_$mode.json" --trace "$W/fb_$mode.csv" -- \
        "${TRAIN[@]}" --model resnet50 --batch 128 "${flags[@]}" > "$W/fb_$mode.txt" 2>&1
    tail -14 "$W/fb_$mode.txt"
  done
fi
if [ "$PART" = gpus ]; then
  nvidia-smi -L > "$W/environment-gpus.txt"
  step "sweep: GPUs 1 and 2 x batch 128/256 (per GPU), resnet50; both GPUs measured, the unused one as idle"
  # --job-gpus is per run: the job uses the first {gpus} GPUs; wattwise measures both, so a 1-GPU run
  # reports the second GPU's idle energy apart.
  "$WW" sweep --read-only --param gpus=1,2 --param batch=128,256 --repeat 2 --order random --seed 7 \
      --job-gpus '{gpus}' --db "$W/gpus.db" --trace-dir "$W/traces-gpus" -- \
      torchrun --standalone --nproc-per-node '{gpus}' workloads/train_cnn.py --samples-per-epoch 1000000 \
      --max-seconds 8 --warmup-iters 3 --model resnet50 --batch '{batch}' > "$W/gpus.sweep.txt" 2>&1
  echo "rc=$?" >> "$W/gpus.sweep.txt"
  tail -25 "$W/gpus.sweep.txt"
  "$WW" analyze "$W/gpus.db" --phase epoch > "$W/gpus.epoch.txt" 2>&1
  "$WW" analyze "$W/gpus.db" --phase epoch --json > "$W/gpus.epoch.json" 2>>"$W/gpus.epoch.txt"
  "$WW" report "$W/gpus.db" -o "$W/gpus.html" >> "$W/gpus.epoch.txt" 2>&1
  cat "$W/gpus.epoch.txt"
fi
step done
