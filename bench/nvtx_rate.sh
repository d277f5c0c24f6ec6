#!/usr/bin/env bash
# What a range costs through libwattwise-nvtx.so, and what a very high range rate does to the markers
# (docs/nvtx.md "Cost"; results in docs/evidence/nvtx-rate.md). Runs tests/nvtx/fake_nvtx_loader, which calls
# the injection library's slots as an instrumented program does, under the real `wattwise measure` with the
# fake NVML: without --nvtx (no injection: each call finds an empty slot), with --nvtx back to back, and
# with --nvtx in bursts of 4 pairs 1 ms apart (~8000 markers/s, a busy but plausible step-level rate).
#   usage: bash bench/nvtx_rate.sh BUILD_DIR [PAIRS]
set -euo pipefail
build=${1:?usage: nvtx_rate.sh BUILD_DIR [PAIRS]}
pairs=${2:-100000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/fake.json" <<'JSON'
{"driver_version": "580.159.04", "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-bench-0",
  "pci_bus_id": "00000000:19:00.0", "power_limit_w": {"min": 200, "max": 700, "default": 700, "initial": 700},
  "profile": [{"duration_s": 1.0, "watts": 300}]}]}
JSON
export WATTWISE_NVML_LIB="$build/fake_nvml/libnvidia-ml.so.1" WATTWISE_FAKE_NVML_CONFIG="$work/fake.json"
ww="$build/src/cli/wattwise"
loader="$build/tests/nvtx/fake_nvtx_loader"
run() {  # LABEL FLAGS... -- OP
  local label=$1; shift
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  local line
  line=$("$ww" measure --no-status "${flags[@]}" --json "$work/m.json" -- "$loader" "$@" 2> "$work/err.txt")
  python3 - "$label" "$line" "$work/m.json" <<'PY'
import json, sys
label, line, path = sys.argv[1], json.loads(sys.argv[2]), json.load(open(sys.argv[3]))
r = next((p for p in path["phases"] if p["name"] == "r"), {"count": 0})
m = path["markers"]
print(f"| {label} | {line['pairs']} | {line['ns_per_pair']:.0f} | {m['received']} | {m['dropped']} | {r['count']} |")
PY
}
echo "machine: $(nproc)-core VM, no GPU, shared with other builds; $(date -u +%Y-%m-%dT%H:%MZ); fake NVML"
echo
echo "| run | pairs | ns per push+pop pair | markers received | markers dropped (reported) | phase r count |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
run "without --nvtx (empty slots)" -- "rate:$pairs"
run "--nvtx, back to back" --nvtx -- "rate:$pairs"
run "--nvtx, 4 pairs per ms" --nvtx -- "rate:$((pairs / 10)):4"
