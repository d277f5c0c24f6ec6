#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: `wattwise tune --dry-run` sees the GPUs through
# safety::ReadOnlyGpuSystem (every control call throws), takes no lock and writes no journal; nothing here
# calls a setter. The power limit is read before and after to show it did not move.
# Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along. Writes under $OUT:
#   tune-dryrun.txt (the summary, every would-be decision on stderr), tune-dryrun.json (docs/tune.md),
#   limits.txt (nvidia-smi before/after).
#   usage: bash tools/gpu/tune_dryrun.sh [SECONDS]   (default 150 s of ResNet-50 training; ends within 10 min)
source "$(dirname "$0")/preamble.sh"
TRAIN_S=${1:-150}
limits() { nvidia-smi --query-gpu=index,power.limit,power.default_limit,clocks.sm --format=csv,noheader; }
{ echo "before: $(limits)"; } > "$OUT/limits.txt"
"$WW" tune --dry-run --marker-grace 300 --json "$OUT/tune-dryrun.json" -- \
    python3 workloads/train_cnn.py --model resnet50 --batch 128 --samples-per-epoch 100000000 \
    --max-seconds "$TRAIN_S" > "$OUT/tune-dryrun.txt" 2>&1
echo "rc=$?" >> "$OUT/tune-dryrun.txt"
{ echo "after:  $(limits)"; } >> "$OUT/limits.txt"
tail -40 "$OUT/tune-dryrun.txt"
cat "$OUT/limits.txt"
