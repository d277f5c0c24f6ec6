#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: wattwise info/measure never change a GPU setting, and
# nothing here calls a setter. Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along.
# Writes everything under $OUT; tools/gpu/evaluate_h100.py turns it into docs/evidence/h100-measure.md.
#   usage: bash tools/gpu/h100_evidence.sh measure|overhead   (two calls: each must end within 10 minutes)
source "$(dirname "$0")/preamble.sh"
W=/tmp/ww-evidence   # many files: they travel back as one archive ($OUT takes at most 8 files)
mkdir -p "$OUT" "$W"
PART=${1:-measure}
step() { echo "== $(date +%T) $*"; }
pack() { tar czf "$OUT/evidence-$PART.tar.gz" -C "$W" . && ls -la "$OUT"; }
trap pack EXIT
TRAIN=(python3 workloads/train_cnn.py --model resnet50 --batch 128)

if [ "$PART" = measure ]; then
  step environment
  { nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,power.limit,power.default_limit --format=csv;
    python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)';
    "$WW" --version; uname -r; nproc; } > "$W/environment.txt" 2>&1
  cat "$W/environment.txt"

  step "ABI check of our NVML declarations against the real nvml.h"
  if g++ -std=c++20 -O1 -Isrc -Itools/gpu/abi_check -I/usr/local/cuda/include tools/gpu/abi_check/*.cpp \
      -o /tmp/abi_check > "$W/abi_check_build.txt" 2>&1; then
    /tmp/abi_check > "$W/abi_check.txt" 2>&1; echo "abi_check rc=$?" >> "$W/abi_check.txt"
  else
    grep -m5 "error" "$W/abi_check_build.txt"
  fi
  tail -2 "$W/abi_check.txt"

  step "cost of each NVML reading (explains wattwise's CPU use)"
  python3 tools/gpu/nvml_call_cost.py "$W/nvml_call_cost.json" > "$W/nvml_call_cost.txt" 2>&1
  cat "$W/nvml_call_cost.txt" | head -12

  step "wattwise info"
  "$WW" info > "$W/info.txt" 2>&1; echo "rc=$?" >> "$W/info.txt"
  "$WW" info --json > "$W/info.json" 2>>"$W/info.txt"
  cat "$W/info.txt"

  step "resnet50 training measured by wattwise, with independent counter, nvidia-smi and NVML power-usage readings"
  "$WW" measure --json "$W/resnet50.json" --trace "$W/resnet50.csv" -- \
      python3 tools/gpu/counter_job.py --out "$W/resnet50_independent.json" -- "${TRAIN[@]}" --max-seconds 45 \
      > "$W/resnet50.txt" 2>&1
  tail -22 "$W/resnet50.txt"

  for phase in 5 0.5 0.2; do
    periods=3; [ "$phase" = 0.5 ] && periods=10; [ "$phase" = 0.2 ] && periods=25
    step "on/off load, ${phase} s phases"
    "$WW" measure --json "$W/onoff_${phase}.json" --trace "$W/onoff_${phase}.csv" -- \
        python3 tools/gpu/onoff_load.py --phase-s "$phase" --periods "$periods" > "$W/onoff_${phase}.txt" 2>&1
    tail -9 "$W/onoff_${phase}.txt"
  done
  step "on/off load, 0.2 s phases, counter read every 10 ms instead of 17 ms (accuracy against CPU)"
  "$WW" measure --counter-interval 10 --json "$W/onoff_0.2_c10.json" --trace "$W/onoff_0.2_c10.csv" -- \
      python3 tools/gpu/onoff_load.py --phase-s 0.2 --periods 25 > "$W/onoff_0.2_c10.txt" 2>&1
  tail -9 "$W/onoff_0.2_c10.txt"
fi

if [ "$PART" = overhead ]; then
  step "throughput with and without wattwise, interleaved"
  for i in 1 2 3; do
    "${TRAIN[@]}" --max-seconds 15 > "$W/plain_$i.txt" 2>&1
    "$WW" measure --json "$W/wrapped_$i.json" -- "${TRAIN[@]}" --max-seconds 15 > "$W/wrapped_$i.txt" 2>&1
    grep images_per_s "$W/plain_$i.txt" | tail -1; grep images_per_s "$W/wrapped_$i.txt" | tail -1
  done
fi
step done
