#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: only `wattwise measure` runs (no setter is ever called).
# PyTorch Lightning and the Hugging Face Trainer each train a small ResNet-18 (workloads/train_frameworks.py)
# with wattwise's callback as the only instrumentation, under `wattwise measure`. Writes under $OUT, per
# framework: FW.json (measure's JSON: the epochs as phases), FW.txt (summary and the script's last line: the
# epoch energies the framework's own log holds), FW-log/ (the framework's log files), and callbacks.txt: each
# epoch's energy as wattwise's JSON has it beside what the framework logged.
#   usage: bash tools/gpu/callbacks_evidence.sh [EPOCHS]   (default 3; about a minute for both)
source "$(dirname "$0")/preamble.sh"
EPOCHS=${1:-3}
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
for fw in lightning huggingface; do
  "$WW" measure --json "$OUT/$fw.json" -- python3 workloads/train_frameworks.py --framework "$fw" \
      --epochs "$EPOCHS" --log-dir "$OUT/$fw-log" > "$OUT/$fw.txt" 2>&1
  echo "rc=$?" >> "$OUT/$fw.txt"
done
python3 - "$OUT" <<'PY' | tee "$OUT/callbacks.txt"
import json, sys
out = sys.argv[1]
for fw in ("lightning", "huggingface"):
    try:
        m = json.load(open(f"{out}/{fw}.json"))
    except (OSError, ValueError) as error:
        print(f"{fw}: no JSON ({error})"); continue
    logged = []
    for line in open(f"{out}/{fw}.txt"):
        if line.startswith('{"framework"'):
            logged = json.loads(line)["logged"]
    epochs = [p for p in m.get("phase_instances", []) if p.get("name") == "epoch"]
    print(f"{fw}: {len(epochs)} epochs in wattwise's JSON, {len(logged)} energies in the framework's log")
    for i, p in enumerate(epochs):
        got = logged[i] if i < len(logged) else None
        diff = f"{100 * (got - p['energy_j']) / p['energy_j']:+.2f}%" if got and p.get("energy_j") else "-"
        print(f"  epoch {i}: {p['end_s'] - p['begin_s']:.2f} s, wattwise {p.get('energy_j')} J, "
              f"logged {got} J, {diff}")
PY
