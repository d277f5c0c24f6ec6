#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: wattwise info/measure never change a GPU setting, and
# nothing here calls a setter. Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along.
# Writes everything under $OUT; tools/gpu/evaluate_h100.py turns it into docs/evidence/h100-measure.md.
#   usage: bash tools/gpu/h100_evidence.sh [quick]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/ww-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build-gpu/bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
WW="$PWD/build-gpu/bundle/wattwise"
MODE=${1:-full}
step() { echo "== $(date +%T) $*"; }

step environment
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,power.limit,power.default_limit --format=csv;
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)';
  "$WW" --version; uname -r; nproc; } > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

step "ABI check of our NVML declarations against the real nvml.h"
g++ -std=c++20 -O1 -Isrc -Itools/gpu/abi_check -I/usr/local/cuda/include tools/gpu/abi_check/*.cpp \
    -o /tmp/abi_check && /tmp/abi_check > "$OUT/abi_check.txt" 2>&1; echo "abi_check rc=$?" >> "$OUT/abi_check.txt"
tail -2 "$OUT/abi_check.txt"

step "wattwise info"
"$WW" info > "$OUT/info.txt" 2>&1; echo "rc=$?" >> "$OUT/info.txt"
"$WW" info --json > "$OUT/info.json" 2>>"$OUT/info.txt"
cat "$OUT/info.txt"

TRAIN=(python3 workloads/train_cnn.py --model resnet50 --batch 128)
if [ "$MODE" = quick ]; then
  step "quick: a 10 s resnet50 measurement"
  "$WW" measure --json "$OUT/quick.json" --trace "$OUT/quick.csv" -- \
      python3 tools/gpu/counter_job.py --out "$OUT/quick_independent.json" -- "${TRAIN[@]}" --max-seconds 10 \
      > "$OUT/quick.txt" 2>&1
  tail -30 "$OUT/quick.txt"
  exit 0
fi

step "resnet50 training measured by wattwise, with independent counter, nvidia-smi and NVML power-usage readings"
"$WW" measure --json "$OUT/resnet50.json" --trace "$OUT/resnet50.csv" -- \
    python3 tools/gpu/counter_job.py --out "$OUT/resnet50_independent.json" -- "${TRAIN[@]}" --max-seconds 45 \
    > "$OUT/resnet50.txt" 2>&1
tail -25 "$OUT/resnet50.txt"

for phase in 5 0.5 0.2; do
  periods=3; [ "$phase" = 0.5 ] && periods=10; [ "$phase" = 0.2 ] && periods=25
  step "on/off load, ${phase} s phases"
  "$WW" measure --json "$OUT/onoff_${phase}.json" --trace "$OUT/onoff_${phase}.csv" -- \
      python3 tools/gpu/onoff_load.py --phase-s "$phase" --periods "$periods" > "$OUT/onoff_${phase}.txt" 2>&1
  tail -12 "$OUT/onoff_${phase}.txt"
done

step "throughput with and without wattwise, interleaved"
for i in 1 2 3; do
  "${TRAIN[@]}" --max-seconds 20 > "$OUT/plain_$i.txt" 2>&1
  "$WW" measure --json "$OUT/wrapped_$i.json" -- "${TRAIN[@]}" --max-seconds 20 > "$OUT/wrapped_$i.txt" 2>&1
  tail -1 "$OUT/plain_$i.txt"; grep images_per_s "$OUT/wrapped_$i.txt" | tail -1
done
step done
