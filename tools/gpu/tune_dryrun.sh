#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: `wattwise tune --dry-run` sees the GPUs through
# safety::ReadOnlyGpuSystem (GPUs without controls, by type), takes no lock and writes no journal; nothing here
# calls a setter. Every GPU's power limit, default limit, application clocks and clock locks are read
# before and after to show nothing moved.
#
# A dry run is the tuner's A/A test (issue 21, docs/tune.md "--dry-run"): every candidate runs at the
# captured setting, so the run must end holding the start value. The GPU starts cold (its warm-up is what
# fooled the earlier tuner), so nothing else should run on it just before.
#
# Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along. Writes under $OUT:
#   tune-dryrun.txt    the terminal output: every would-be decision and the summary (stderr), the job's stdout
#   tune-dryrun.json   the result (docs/tune.md "--json")
#   probes.csv         one line per decision: kind, setting, iteration, estimate, interval, iterations, reason
#   verdict.txt        held_start, settled, profiling and waited iterations, the A/A line of the summary
#   settings.txt       nvidia-smi before/after (power limits, clocks, persistence)
# usage: bash tools/gpu/tune_dryrun.sh [SECONDS [NPROC]]
#   SECONDS: of ResNet-50 training (default 420: the stationarity wait of one or two minutes, then the
#   search; ends within 10 minutes). NPROC > 1: data-parallel over that many GPUs with torchrun.
#   TUNE_ARGS (environment): more tune flags, e.g. TUNE_ARGS="--max-slowdown 10%" for the budget's A/A test.
source "$(dirname "$0")/preamble.sh"
TRAIN_S=${1:-420}
NPROC=${2:-1}
settings() {
  nvidia-smi --query-gpu=index,power.limit,power.default_limit,clocks.applications.graphics,clocks.sm,clocks.mem,persistence_mode \
    --format=csv,noheader
}
{ echo "before:"; settings; } > "$OUT/settings.txt"
JOB=(python3 workloads/train_cnn.py --model resnet50 --batch 128 --samples-per-epoch 100000000
     --max-seconds "$TRAIN_S")
GPUS=()
if [ "$NPROC" -gt 1 ]; then
  JOB=(torchrun --standalone --nproc-per-node "$NPROC" "${JOB[@]:1}")
  GPUS=(--gpus "$(seq -s, 0 $((NPROC - 1)))")
fi
read -r -a EXTRA <<< "${TUNE_ARGS:-}"
"$WW" tune --dry-run --marker-grace 300 --stationary-window 30 ${GPUS[@]+"${GPUS[@]}"} ${EXTRA[@]+"${EXTRA[@]}"} \
    --json "$OUT/tune-dryrun.json" -- "${JOB[@]}" > "$OUT/tune-dryrun.txt" 2>&1
echo "rc=$?" >> "$OUT/tune-dryrun.txt"
{ echo "after:"; settings; } >> "$OUT/settings.txt"
python3 - "$OUT" <<'EOF'
import csv, json, sys, os
out = sys.argv[1]
j = json.load(open(os.path.join(out, "tune-dryrun.json")))
with open(os.path.join(out, "probes.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kind", "at_iteration", "estimate_of", "estimate", "interval_low", "interval_high",
                "iterations", "power_limit_w", "reason"])
    for d in j["decisions"]:
        w.writerow([d["kind"], d["at_iteration"], d.get("estimate_of"), d["estimate"], d["interval_low"],
                    d["interval_high"], d["iterations"], d.get("power_limit_w"), d["reason"]])
t = j["tuning"]
aa = [l.strip() for l in open(os.path.join(out, "tune-dryrun.txt")) if "A/A test" in l]
with open(os.path.join(out, "verdict.txt"), "w") as f:
    f.write(f"dry_run={j['dry_run']} held_start={j['held_start']} settled={j['settled']} "
            f"captured={t['captured_value']} start={t['start_value']}\n")
    f.write(f"profiling_iterations={j['profiling_iterations']} "
            f"stationary_wait_iterations={t['stationary_wait_iterations']} "
            f"iterations_seen={t['iterations_seen']} fed={t['iterations_fed']}\n")
    f.write("\n".join(aa) + "\n")
EOF
tail -45 "$OUT/tune-dryrun.txt"
cat "$OUT/verdict.txt" "$OUT/settings.txt"
