#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: `wattwise measure` changes no GPU setting (it only reads),
# and neither does the job, a bf16 matrix-product load on GPU 0 (torch). Proof for docs/windows.md: a job asks
# the running wattwise for the energy of the windows it marked (wattwise.window) and the answers are compared
# with the phase instances of the final report (reconciled to the counter).
# Expects build-gpu/bundle (tools/gpu/make_bundle.sh) carried along. Writes under $OUT:
#   window-answers.json (what the job was told, per window), window-run.json (`measure --json`),
#   window-measure.txt (the summary), window-compare.txt (answer vs report per window, and the spread).
#   usage: bash tools/gpu/window_readings.sh      (about 60 s: 3 s warm-up, 28 windows, ~0.5 s wait after each)
source "$(dirname "$0")/preamble.sh"
export PYTHONPATH="$PWD/python" CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
JOB="$OUT/window_job.py"
cat > "$JOB" <<'PY'
import json, sys, time
import torch
import wattwise

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

def busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(8):
            a @ b
        torch.cuda.synchronize()

answers = []
busy(3.0)  # warm up: clocks and power settle before the first window
for length_s in [2.0] * 6 + [0.5] * 8:
    for load in ("busy", "idle"):
        with wattwise.window("%s-%gs" % (load, length_s)) as w:
            busy(length_s) if load == "busy" else time.sleep(length_s)
        asked = time.monotonic()
        answers.append({"name": w.name, "begin_ns": w.begin_ns, "end_ns": w.end_ns, "energy_j": w.energy_j,
                        "per_gpu": w.energy_per_gpu_j, "method": w.method, "reason": w.reason,
                        "waited_s": time.monotonic() - asked})
json.dump(answers, open(sys.argv[1], "w"), indent=1)
PY
"$WW" measure --json "$OUT/window-run.json" -- python3 "$JOB" "$OUT/window-answers.json" \
    > "$OUT/window-measure.txt" 2>&1
echo "rc=$?" >> "$OUT/window-measure.txt"
python3 - "$OUT" > "$OUT/window-compare.txt" <<'PY'
import json, statistics, sys
out = sys.argv[1]
answers = json.load(open(out + "/window-answers.json"))
run = json.load(open(out + "/window-run.json"))
instances = [p for p in run["phase_instances"] if p["name"].startswith(("busy", "idle"))]
print("%-10s %10s %10s %8s %8s  %s" % ("window", "answer_j", "report_j", "diff_%", "waited_s", "methods"))
diffs = {}
for answer, phase in zip(answers, instances):
    if answer["energy_j"] is None or phase["energy_j"] is None:
        print("%-10s unknown: %s" % (answer["name"], answer["reason"]))
        continue
    diff = 100 * (answer["energy_j"] / phase["energy_j"] - 1)
    diffs.setdefault(answer["name"], []).append(diff)
    print("%-10s %10.2f %10.2f %8.3f %8.3f  %s / %s" % (answer["name"], answer["energy_j"], phase["energy_j"], diff,
                                                        answer["waited_s"], answer["method"], phase["method"]))
for name, values in diffs.items():
    print("%-10s n=%d mean %+.3f%% min %+.3f%% max %+.3f%%" % (name, len(values), statistics.mean(values),
                                                             min(values), max(values)))
print("waited: max %.3f s" % max(a["waited_s"] for a in answers))
PY
tail -5 "$OUT/window-measure.txt"
cat "$OUT/window-compare.txt"
