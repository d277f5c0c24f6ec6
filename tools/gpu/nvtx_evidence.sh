#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: `wattwise measure` reads the GPUs and changes no setting;
# the power limits are read before and after to show it. Expects build-gpu/bundle (tools/gpu/make_bundle.sh:
# wattwise and libwattwise-nvtx.so beside it) carried along. About 3-4 minutes on an H100.
#   1. the NVTX ABI check: src/nvtx/nvtx_abi.hpp against NVIDIA's nvtx3 headers (CUDA's, or a wheel's copy);
#   2. tools/gpu/nvtx_train.py (resnet18, 4 epochs x 100 steps) four times: wattwise markers only, NVTX
#      ranges only under `measure --nvtx`, markers only again, and both at the same instants in one run;
#   3. the cost of a torch.cuda.nvtx range_push/pop pair with and without the injection, and what a very high
#      range rate does to markers (markers.dropped).
# Writes under $OUT: nvtx_abi_check.txt, nvtx-{markers,nvtx,markers2,both}.json and .txt, nvtx-rate*.json, limits.txt
# and nvtx-evidence.md (the comparison; evaluate_nvtx.py exits non-zero when a phase differs by more than 2%).
#   usage: bash tools/gpu/nvtx_evidence.sh [EPOCHS] [STEPS]
source "$(dirname "$0")/preamble.sh"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
EPOCHS=${1:-4}
STEPS=${2:-100}
step() { echo "== $*"; }
limits() { nvidia-smi --query-gpu=index,power.limit,power.default_limit,clocks.sm --format=csv,noheader; }
echo "before: $(limits)" > "$OUT/limits.txt"
ls -l build-gpu/bundle/libwattwise-nvtx.so > "$OUT/bundle.txt" 2>&1

step "NVTX ABI check against the real nvtx3 headers"
bash tools/gpu/nvtx_abi_check/build_and_run.sh "" /tmp/nvtx_abi_check > "$OUT/nvtx_abi_check.txt" 2>&1
echo "nvtx_abi_check rc=$?" >> "$OUT/nvtx_abi_check.txt"
tail -2 "$OUT/nvtx_abi_check.txt"

python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda)' > "$OUT/torch.txt" 2>&1
cat "$OUT/torch.txt"
# markers, nvtx, markers again: the NVTX run is compared with the mean of the runs around it (a GPU warming
# up over the runs drifts them all alike), and the two marker runs show the run-to-run noise.
for run in markers nvtx markers2 both; do
  mode=${run%2}
  step "training annotated with: $mode"
  flags=()
  [ "$mode" != markers ] && flags=(--nvtx)
  "$WW" measure --gpus 0 "${flags[@]}" --json "$OUT/nvtx-$run.json" -- \
      python3 tools/gpu/nvtx_train.py --annotate "$mode" --epochs "$EPOCHS" --steps "$STEPS" \
      > "$OUT/nvtx-$run.txt" 2>&1
  echo "rc=$?" >> "$OUT/nvtx-$run.txt"
  tail -3 "$OUT/nvtx-$run.txt"
done

step "cost of a range_push/pop pair, and a very high range rate"
: > "$OUT/nvtx-rate.txt"
"$WW" measure --gpus 0 --json "$OUT/nvtx-rate-off.json" -- python3 tools/gpu/nvtx_rate.py 200000 \
    2>> "$OUT/nvtx-rate-log.txt" | sed 's/^/without --nvtx: /' >> "$OUT/nvtx-rate.txt"
"$WW" measure --gpus 0 --nvtx --json "$OUT/nvtx-rate-on.json" -- python3 tools/gpu/nvtx_rate.py 200000 \
    2>> "$OUT/nvtx-rate-log.txt" | sed 's/^/with --nvtx, back to back: /' >> "$OUT/nvtx-rate.txt"
"$WW" measure --gpus 0 --nvtx --json "$OUT/nvtx-rate-burst.json" -- python3 tools/gpu/nvtx_rate.py 20000 4 \
    2>> "$OUT/nvtx-rate-log.txt" | sed 's/^/with --nvtx, 4 pairs then 1 ms: /' >> "$OUT/nvtx-rate.txt"
python3 - "$OUT" >> "$OUT/nvtx-rate.txt" <<'PY'
import json, sys
for name in ("off", "on", "burst"):
    m = json.load(open(f"{sys.argv[1]}/nvtx-rate-{name}.json"))
    r = next((p for p in m["phases"] if p["name"] == "r"), None)
    print(f"{name}: markers {json.dumps(m['markers'])}; phase r count {r['count'] if r else 0}")
PY
cat "$OUT/nvtx-rate.txt"

echo "after:  $(limits)" >> "$OUT/limits.txt"
cat "$OUT/limits.txt"
python3 tools/gpu/evaluate_nvtx.py "$OUT/nvtx-nvtx.json" "$OUT/nvtx-markers.json,$OUT/nvtx-markers2.json" \
    "$OUT/nvtx-both.json" \
    "$OUT/nvtx-rate.txt" > "$OUT/nvtx-evidence.md"
echo "evaluate rc=$?" >> "$OUT/nvtx-evidence.md"
cat "$OUT/nvtx-evidence.md"
