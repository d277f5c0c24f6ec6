#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: wattwise measure never changes a GPU setting, and nothing
# here calls a setter; the settings are read before and after. Expects build-gpu/bundle
# (tools/gpu/make_bundle.sh) carried along. Records dense counter traces (a read every 10 ms) of a resnet50
# training and of an on/off load with 0.5 s phases, on an idle CPU and with every core busy (twice as many
# spinners as cores and a fork loop, as data loaders do): a busy node holds reads up past postings, the case
# of a held-up read's knot (docs/evidence/energy-checks.md). Replayed here, thinned to sparse schedules
# (bench_replay_trace --schedule k), each phase's sparse figure is checked against all the trace's reads.
#   usage: bash tools/gpu/dense_under_load.sh   (about 4 minutes)
source "$(dirname "$0")/preamble.sh"
W=/tmp/ww-dense-load
rm -rf "$W"; mkdir -p "$OUT" "$W"
pack_on_exit dense-under-load
step environment
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; "$WW" --version; uname -r;
  echo "cores: $(nproc)"; } > "$W/environment.txt" 2>&1
gpu_settings > "$W/settings-before.txt" 2>&1
cat "$W/environment.txt" "$W/settings-before.txt"

# record NAME JOB...: the job under `wattwise measure --counter-interval 10`, its trace and phases kept.
record() {
  local name=$1; shift
  "$WW" measure --counter-interval 10 --json "$W/$name.json" --trace "$W/$name.csv" -- "$@" \
      > "$W/$name.txt" 2> "$W/$name.stderr"
  echo "rc=$?" >> "$W/$name.txt"
  grep '^wattwise:' "$W/$name.stderr" | head -5
  tail -4 "$W/$name.txt"
}
both() {
  local suffix=$1
  step "resnet50 training, 35 s ($suffix)"
  record "train_$suffix" python3 workloads/train_cnn.py --model resnet50 --batch 128 --max-seconds 35
  step "on/off load, 0.5 s phases x 10 ($suffix)"
  record "onoff_0.5_$suffix" python3 tools/gpu/onoff_load.py --phase-s 0.5 --periods 10
}
both idle
step "every core busy: $((2 * $(nproc))) spinners and a fork loop"
burn_every_core
uptime > "$W/load.txt"
both busy
uptime >> "$W/load.txt"
stop_burners

gpu_settings > "$W/settings-after.txt" 2>&1
compare_settings "$W"
step done
