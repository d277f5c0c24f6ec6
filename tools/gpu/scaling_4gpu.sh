#!/usr/bin/env bash
# Issue 24 on a 4-GPU node, READ-ONLY: the GPU-count study. `wattwise sweep --read-only` refuses every
# hardware knob and wraps the GPUs so that no setting can change; nothing here calls a setter. Every GPU of
# the node is sampled in every run (--job-gpus {gpus}: the job uses the first {gpus}, the others are
# measured idle), and the sweep judges on the node's energy by default (docs/energy-scope.md).
#
#   bash tools/gpu/scaling_4gpu.sh PARTS     PARTS: a comma list of resnet50, vgg19, allreduce (default: all
#                                            three; two calls fit 10 minutes each: resnet50,allreduce and vgg19)
#
# Per model: a sweep over GPU count 1,2,4 x batch 128,256 per GPU, 3 repeats, random order (18 runs), then
# forward/backward/optimizer marked (synchronised) at batch 256 on 1, 2 and 4 GPUs (a one-repeat sweep of its
# own, so the main sweep's timings carry no marker cost). resnet50 and vgg19: workloads/train_cnn.py under
# DistributedDataParallel (communication overlaps the backward pass); allreduce: tools/gpu/scaling_train.py
# (one 1 GB all-reduce per iteration, waited for: nothing overlaps it).
# The power limits, application clocks and clocks are read before and after (settings-*.csv). A deadline
# (DEADLINE_S, default 560 s from the start) stops a sweep cleanly with SIGINT, so what ran is kept.
# Everything goes into $OUT/scaling-PARTS.tar.gz (databases, logs, analyze JSON both scopes, reports).
# Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along.
# Then, here: python3 tools/gpu/scaling_4gpu_summary.py DIR/*.db  (the table of docs/evidence/scaling-4gpu.md)
source "$(dirname "$0")/preamble.sh"
PARTS=${1:-resnet50,vgg19,allreduce}
START=$(date +%s)
DEADLINE_S=${DEADLINE_S:-560}
REPEAT=${REPEAT:-3}
TAG=$(echo "$PARTS" | tr ',' '-')
W=/tmp/ww-scaling-$TAG
rm -rf "$W"   # a warm machine keeps /tmp between calls: never resume an old database by accident
mkdir -p "$OUT" "$W"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
step() { echo "== $(date +%T) (+$(( $(date +%s) - START )) s) $*"; }
settings() {
  nvidia-smi --query-gpu=index,uuid,name,power.limit,power.default_limit,enforced.power.limit,clocks.applications.graphics,clocks.applications.memory,clocks.sm,clocks.mem,persistence_mode,compute_mode,power.draw \
    --format=csv
}
pack() {
  settings > "$W/settings-after.csv" 2>&1
  # The settings must be the same after as before: every column but the momentary clocks and draw.
  cut -d, -f1-8,11,12 "$W/settings-before.csv" > "$W/.b"; cut -d, -f1-8,11,12 "$W/settings-after.csv" > "$W/.a"
  if cmp -s "$W/.b" "$W/.a"; then echo "settings unchanged" > "$W/settings-check.txt"
  else { echo "SETTINGS CHANGED"; diff "$W/.b" "$W/.a"; } > "$W/settings-check.txt"; fi
  rm -f "$W/.b" "$W/.a"
  cat "$W/settings-check.txt"
  tar czf "$OUT/scaling-$TAG.tar.gz" -C "$W" . && ls -la "$OUT"
}
trap pack EXIT
left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }

{ nvidia-smi -L; nvidia-smi topo -m; "$WW" --version; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } > "$W/environment.txt" 2>&1
settings > "$W/settings-before.csv" 2>&1
cat "$W/environment.txt" "$W/settings-before.csv"
GPUS=$(nvidia-smi -L | wc -l)
[ "$GPUS" -ge 4 ] || echo "WARNING: $GPUS GPU(s) here, not 4: gpus=4 runs will be refused"

job() {  # job MODEL: the command after `--`, with {gpus} and {batch}
  case $1 in
    resnet50) echo torchrun --standalone --nproc-per-node '{gpus}' workloads/train_cnn.py --model resnet50 \
                --batch '{batch}' --samples-per-epoch "${RESNET_SAMPLES:-6144}" --warmup-iters 2 --no-flops;;
    vgg19)    echo torchrun --standalone --nproc-per-node '{gpus}' workloads/train_cnn.py --model vgg19 \
                --batch '{batch}' --samples-per-epoch "${VGG_SAMPLES:-3072}" --warmup-iters 2 --no-flops;;
    allreduce) echo torchrun --standalone --nproc-per-node '{gpus}' tools/gpu/scaling_train.py \
                --batch '{batch}' --samples-per-epoch "${ALLREDUCE_SAMPLES:-393216}" --warmup-iters 2;;
  esac
}

sweep() {  # sweep NAME [sweep flags] -- MODEL [job flags]: one read-only sweep, stopped by SIGINT at the deadline
  local name=$1; shift
  local flags=(); while [ "$1" != -- ]; do flags+=("$1"); shift; done; shift
  local model=$1; shift
  local budget; budget=$(left)
  if [ "$budget" -le 20 ]; then step "skipped $name: the deadline is near"; echo "skipped: deadline" > "$W/$name.sweep.txt"; return; fi
  step "sweep $name (at most $budget s)"
  # shellcheck disable=SC2046
  timeout --signal=INT --kill-after=30 "$budget" "$WW" sweep --read-only --job-gpus '{gpus}' --timeout 150 \
      --db "$W/$name.db" "${flags[@]}" -- $(job "$model") "$@" > "$W/$name.sweep.txt" 2>&1
  echo "rc=$?" >> "$W/$name.sweep.txt"
  tail -32 "$W/$name.sweep.txt"
  for scope in node job; do
    "$WW" analyze "$W/$name.db" --energy-scope $scope --json > "$W/$name.$scope.json" 2> "$W/$name.$scope.err"
    "$WW" analyze "$W/$name.db" --energy-scope $scope > "$W/$name.$scope.txt" 2>> "$W/$name.$scope.err"
  done
  "$WW" report "$W/$name.db" -o "$W/$name.html" > /dev/null 2>> "$W/$name.node.err"
  "$WW" report "$W/$name.db" --format md -o "$W/$name.md" > /dev/null 2>> "$W/$name.node.err"
}

for model in ${PARTS//,/ }; do
  sweep "$model" --param gpus=1,2,4 --param batch=128,256 --repeat "$REPEAT" --order random --seed 24 -- "$model"
  sweep "$model-fb" --param gpus=1,2,4 --param batch=256 --repeat 1 --order ascending -- "$model" \
      --mark-forward-backward --sync
done
step done
