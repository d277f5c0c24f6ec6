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
step() { echo "== $(date +%T) $*"; }
finish() {
  stop_burners
  wait 2>/dev/null
  tar czf "$OUT/evidence-starved.tar.gz" -C "$W" . && cp "$W/summary.txt" "$OUT/" 2>/dev/null
  ls -la "$OUT"
}
trap finish EXIT
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
python3 - "$W" "${starved_runs[@]}" > "$W/summary.txt" 2>&1 <<'PY'
import json, sys
w = sys.argv[1]
for name in ["idle"] + sys.argv[2:]:
    try:
        m = json.load(open(f"{w}/{name}.json"))
        ind = json.load(open(f"{w}/{name}_independent.json"))
    except Exception as e:  # a run that failed leaves its files behind: say so, go on
        print(f"{name}: no result ({e})")
        continue
    print(f"== {name}: wall {m['wall_s']:.1f} s, checks {'passed' if m['checks']['passed'] else 'FAILED'}")
    for f in m["checks"]["failures"]:
        print(f"   check failed: GPU {f['gpu']} {f['check']}: {f['detail']}")
    for g in m["gpus"]:
        s = g["sampler"]
        print(f"   GPU {g['index']}: {g['energy_j']:.1f} +- {g['energy_uncertainty_j']:.1f} J ({g['method']}"
              f"{', counter only' if g['counter_only'] else ''}), avg {g['avg_power_w']:.1f} W, "
              f"starved {s['starved']} (late reads {s['late_counter_reads']}, sample gaps {s.get('sample_gaps', '-')}, max delay "
              f"{s['max_counter_read_delay_ms']:.0f} ms, grid learnt {s['grid_learnt']} at {s['grid_known_s']})")
    win = next((i for i in m["phase_instances"] if i["name"] == "independent_window"), None)
    if win is not None and win["energy_j"] is not None:
        err = win["energy_j"] - ind["counter_j"]
        bar = win["energy_uncertainty_j"]
        print(f"   independent window {win['end_s'] - win['begin_s']:.2f} s: wattwise {win['energy_j']:.1f} +- {bar:.1f} J, "
              f"independent counter {ind['counter_j']:.1f} J: {err:+.1f} J ({100 * err / ind['counter_j']:+.3f}%), "
              f"{'within' if abs(err) <= bar else 'OUTSIDE'} the bar")
        # The counter's difference spans posting to posting, the window marker to marker: the part of the
        # difference the reference's own edge timing explains (counter_job.py "reference_timing_j").
        if "reference_timing_j" in ind:
            lo, hi = ind["reference_timing_j"]
            lags = ", ".join(f"{1000 * e['lag_min_s']:.1f}-{1000 * e['lag_max_s']:.1f} ms at {e['power_w']:.0f} W"
                             for e in ind["edges"])
            fits = err + bar >= lo and err - bar <= hi
            print(f"   the reference's edges lag their postings by {lags}: it explains {lo:+.1f}..{hi:+.1f} J; "
                  f"wattwise's {err:+.1f} +- {bar:.1f} J {'is consistent with it' if fits else 'is NOT explained by it'}")
    it = [i for i in m["phase_instances"] if i["name"] == "iteration" and i["energy_j"] is not None]
    if it:
        bars = sorted(100 * i["energy_uncertainty_j"] / i["energy_j"] for i in it if i["energy_j"] > 0)
        print(f"   iterations: {len(it)}, median bar {bars[len(bars) // 2]:.1f}% of an iteration")
    print(f"   wattwise said on stderr:")
    for line in open(f"{w}/{name}.stderr"):
        if line.startswith("wattwise:"):
            print("     " + line.rstrip())
PY
cat "$W/summary.txt"
step done
