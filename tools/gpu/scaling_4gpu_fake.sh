#!/usr/bin/env bash
# Tries tools/gpu/scaling_4gpu.sh and scaling_4gpu_summary.py without a GPU: the fake NVML driver with four
# GPUs (GPU 0 draws 300 W, GPUs 1-3 80 W, whatever the job does), stand-ins for torchrun and nvidia-smi
# (tools/gpu/fake_node: fake_train.py ranks that mark the phases train_cnn.py and scaling_train.py mark,
# with sleeps for compute and communication), smaller runs. It checks the script's flow (the sweeps, the
# deadline, the fine-marked runs, both scopes' analyses, the settings before/after, the archive) and the
# summary's table, not any number of a real GPU.
#   bash tools/gpu/scaling_4gpu_fake.sh [PARTS]     (after building wattwise and fake_nvml in build/)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
T=$(mktemp -d /tmp/ww-scaling-fake-XXXXXX)
cat > "$T/fake_nvml.json" <<JSON
{"driver_version": "580.159.04", "gpus": [
$(for i in 0 1 2 3; do
  w=$([ $i = 0 ] && echo 300 || echo 80)
  echo "{\"name\": \"NVIDIA H100 80GB HBM3\", \"uuid\": \"GPU-fake-$i\", \"pci_bus_id\": \"00000000:1$i:00.0\",
   \"power_limit_w\": {\"min\": 200, \"max\": 700, \"default\": 700, \"initial\": 700},
   \"profile\": [{\"duration_s\": 1.0, \"watts\": $w}]}$([ $i = 3 ] || echo ,)"
done)
]}
JSON
export WATTWISE_FAKE_NVML_CONFIG="$T/fake_nvml.json"
export WATTWISE_NVML_LIB=${WATTWISE_NVML_LIB:-"$ROOT/build/fake_nvml/libnvidia-ml.so.1"}
export WATTWISE_BIN=${WATTWISE_BIN:-"$ROOT/build/src/cli/wattwise"}
export PATH="$ROOT/tools/gpu/fake_node:$PATH"
export OUT="$T/out" DEADLINE_S=${DEADLINE_S:-500} REPEAT=${REPEAT:-2}
export RESNET_SAMPLES=4096 VGG_SAMPLES=2048 ALLREDUCE_SAMPLES=16384
bash tools/gpu/scaling_4gpu.sh "${1:-resnet50,allreduce}"
mkdir -p "$T/unpacked"
tar xzf "$OUT"/scaling-*.tar.gz -C "$T/unpacked"
python3 tools/gpu/scaling_4gpu_summary.py "$T/unpacked"
echo "fake trial: $T"
