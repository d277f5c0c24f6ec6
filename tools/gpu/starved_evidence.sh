#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: wattwise measure never changes a GPU setting, and nothing
# here calls a setter; the settings are read before and after. Expects build-gpu/bundle
# (tools/gpu/make_bundle.sh) carried along. Issue 20, "Measurement under a starved CPU":
# a resnet50 training run measured by wattwise while busy processes hold every core (twice as many spinners
# as cores and a fork loop, as data loaders do), its figures against an independent counter read
# (tools/gpu/counter_job.py reads the NVML energy counter itself around the training and marks that window
# as the phase "independent_window"), the warnings wattwise printed, its checks and error bars; and the same
# run on an idle CPU for comparison. Everything goes under $OUT as one archive plus summary.txt.
#   usage: [STARVED_REPEATS=N] bash tools/gpu/starved_evidence.sh   (about 3 minutes, +80 s per repeat)
source "$(dirname "$0")/preamble.sh"
W=/tmp/ww-starved
rm -rf "$W"; mkdir -p "$OUT" "$W"
pack_on_exit evidence-starved
TRAIN=(python3 workloads/train_cnn.py --model resnet50 --batch 128 --max-seconds 40)

step environment
{ nvidia-smi -L; "$WW" --version; uname -r; echo "cores: $(nproc)"; } > "$W/environment.txt" 2>&1
gpu_settings > "$W/settings-before.txt" 2>&1
cat "$W/environment.txt" "$W/settings-before.txt"

# run NAME: the training under `wattwise measure`, the independent counter read around it.
run() {
  local name=$1
  "$WW" measure --json "$W/$name.json" --trace "$W/$name.csv" -- \
      python3 tools/gpu/counter_job.py --out "$W/${name}_independent.json" -- "${TRAIN[@]}" \
      > "$W/$name.txt" 2> "$W/$name.stderr"
  echo "rc=$?" >> "$W/$name.txt"
  grep '^wattwise:' "$W/$name.stderr" | head -20
  tail -14 "$W/$name.txt"
}

step "resnet50 on an idle CPU (baseline)"
run idle

# STARVED_REPEATS=N: the starved run N times (starved, starved2, ...), for cases the load decides at random
# (whether the sampler learns the counter's grid under it).
starved_runs=(starved)
for ((k = 2; k <= ${STARVED_REPEATS:-1}; k++)); do starved_runs+=("starved$k"); done
step "resnet50 with every core busy: $((2 * $(nproc))) spinners and a fork loop (${#starved_runs[@]} run(s))"
burn_every_core
uptime > "$W/load.txt"
for name in "${starved_runs[@]}"; do
  run "$name"
  uptime >> "$W/load.txt"
done
stop_burners

gpu_settings > "$W/settings-after.txt" 2>&1
compare_settings "$W"

step summary
python3 tools/gpu/starved_summary.py "$W" idle "${starved_runs[@]}" > "$W/summary.txt" 2>&1
cat "$W/summary.txt"
step done
