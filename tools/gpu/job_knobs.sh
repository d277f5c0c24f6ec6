#!/usr/bin/env bash
# Issue 5 on the GPU machine, READ-ONLY: sweeps of job knobs only (`wattwise sweep --read-only` refuses any
# hardware knob and wraps the GPUs so no setting can change). Expects build-gpu/bundle (make_bundle.sh).
#   bash tools/gpu/job_knobs.sh batch       resnet50, vgg19, alexnet x batch 64/128/256, 2 repeats, random order
#   (batch-rv: resnet50 and vgg19 sweeps and the fb runs; batch-a: alexnet alone: the same, in two calls)
#   bash tools/gpu/job_knobs.sh fb          the forward/backward split of resnet50 (markers off/on/synchronised)
#   bash tools/gpu/job_knobs.sh gpus        1 and 2 GPUs x batch 128/256, resnet50 (a two-GPU machine)
#   bash tools/gpu/job_knobs.sh default     resnet50 x batch 64/128/256, 2 repeats, analysed with analyze's
#                                           defaults (no --phase: issue 12 judges on the marked phases)
# Results: one archive under $OUT; tools/gpu/evaluate_job_knobs.py makes docs/evidence/job-knobs.md of it.
source "$(dirname "$0")/preamble.sh"
PART=${1:?part}
W=/tmp/ww-jobknobs-$PART
rm -rf "$W"   # a warm machine keeps /tmp between calls: never resume an old database by accident
mkdir -p "$OUT" "$W"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
step() { echo "== $(date +%T) $*"; }
pack() { tar czf "$OUT/jobknobs-$PART.tar.gz" -C "$W" . && ls -la "$OUT"; }
trap pack EXIT
# Each run trains one epoch of a FIXED number of samples (as the papers do; an epoch cut at a time limit would
# make energy and time of different batch sizes incomparable), after 2 warm-up iterations. The analysis is of
# the `epoch` phase (`analyze --phase epoch`): the process's start-up and cuDNN warm-up are left out.
TRAIN=(python3 workloads/train_cnn.py --warmup-iters 2)
samples_of() { case $1 in alexnet) echo 64000;; vgg19) echo 6400;; *) echo 12800;; esac; }

sweep_batch() {
  local model=$1
  step "sweep: $model, batch 64/128/256, 2 repeats, random order"
  "$WW" sweep --read-only --param batch=64,128,256 --repeat 2 --order random --seed 7 \
      --db "$W/$model.db" --trace-dir "$W/traces-$model" -- "${TRAIN[@]}" --model "$model" --batch '{batch}' \
      --samples-per-epoch "$(samples_of "$model")" \
      > "$W/$model.sweep.txt" 2>&1
  echo "rc=$?" >> "$W/$model.sweep.txt"
  tail -25 "$W/$model.sweep.txt"
  "$WW" analyze "$W/$model.db" --phase epoch > "$W/$model.epoch.txt" 2>&1
  "$WW" analyze "$W/$model.db" --phase epoch --json > "$W/$model.epoch.json" 2>>"$W/$model.epoch.txt"
  "$WW" report "$W/$model.db" -o "$W/$model.html" >> "$W/$model.epoch.txt" 2>&1
  cat "$W/$model.epoch.txt"
}

if [ "$PART" = batch ] || [ "$PART" = batch-rv ] || [ "$PART" = batch-a ]; then
  nvidia-smi -L > "$W/environment.txt"; "$WW" --version >> "$W/environment.txt"
fi
[ "$PART" = batch ] || [ "$PART" = batch-rv ] && { sweep_batch resnet50; sweep_batch vgg19; }
[ "$PART" = batch ] || [ "$PART" = batch-a ] && sweep_batch alexnet
if [ "$PART" = fb ] || [ "$PART" = batch-rv ]; then
  for mode in plain marked synced; do
    flags=(); [ $mode = marked ] && flags=(--mark-forward-backward); [ $mode = synced ] && flags=(--mark-forward-backward --sync)
    step "resnet50 batch 128, forward/backward markers: $mode"
    "$WW" measure --json "$W/fb_$mode.json" --trace "$W/fb_$mode.csv" -- \
        "${TRAIN[@]}" --model resnet50 --batch 128 --samples-per-epoch 25600 "${flags[@]}" > "$W/fb_$mode.txt" 2>&1
    tail -14 "$W/fb_$mode.txt"
  done
fi
if [ "$PART" = default ]; then
  nvidia-smi -L > "$W/environment.txt"; "$WW" --version >> "$W/environment.txt"
  step "sweep: resnet50, batch 64/128/256, 2 repeats, random order; analysed with the defaults"
  "$WW" sweep --read-only --param batch=64,128,256 --repeat 2 --order random --seed 7 \
      --db "$W/resnet50.db" --trace-dir "$W/traces-resnet50" -- "${TRAIN[@]}" --model resnet50 --batch '{batch}' \
      --samples-per-epoch 12800 > "$W/resnet50.sweep.txt" 2>&1
  echo "rc=$?" >> "$W/resnet50.sweep.txt"
  tail -30 "$W/resnet50.sweep.txt"
  "$WW" analyze "$W/resnet50.db" > "$W/resnet50.default.txt" 2>&1
  "$WW" analyze "$W/resnet50.db" --json > "$W/resnet50.default.json" 2>>"$W/resnet50.default.txt"
  "$WW" analyze "$W/resnet50.db" --phase run > "$W/resnet50.run.txt" 2>&1
  "$WW" report "$W/resnet50.db" -o "$W/resnet50.html" >> "$W/resnet50.default.txt" 2>&1
  cat "$W/resnet50.default.txt"; echo "-- --phase run:"; cat "$W/resnet50.run.txt"
fi
if [ "$PART" = gpus ]; then
  nvidia-smi -L > "$W/environment-gpus.txt"
  step "sweep: GPUs 1 and 2 x batch 128/256 (per GPU), resnet50; both GPUs measured, the unused one as idle"
  # --job-gpus is per run: the job uses the first {gpus} GPUs; wattwise measures both, so a 1-GPU run
  # reports the second GPU's idle energy apart.
  "$WW" sweep --read-only --param gpus=1,2 --param batch=128,256 --repeat "${REPEAT:-2}" --order random --seed 7 \
      --job-gpus '{gpus}' --db "$W/gpus.db" --trace-dir "$W/traces-gpus" -- \
      torchrun --standalone --nproc-per-node '{gpus}' workloads/train_cnn.py --samples-per-epoch 25600 \
      --warmup-iters 2 --model resnet50 --batch '{batch}' > "$W/gpus.sweep.txt" 2>&1
  echo "rc=$?" >> "$W/gpus.sweep.txt"
  tail -25 "$W/gpus.sweep.txt"
  "$WW" analyze "$W/gpus.db" --phase epoch > "$W/gpus.epoch.txt" 2>&1
  "$WW" analyze "$W/gpus.db" --phase epoch --json > "$W/gpus.epoch.json" 2>>"$W/gpus.epoch.txt"
  "$WW" report "$W/gpus.db" -o "$W/gpus.html" >> "$W/gpus.epoch.txt" 2>&1
  cat "$W/gpus.epoch.txt"
fi
step done
