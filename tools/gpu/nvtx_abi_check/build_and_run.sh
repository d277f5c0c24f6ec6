#!/usr/bin/env bash
# Compares src/nvtx/nvtx_abi.hpp with NVIDIA's nvtx3 headers: builds the check against the first nvtx3
# include directory found (or the one given) and runs it. Exit 0: every entry matches; 1: a mismatch;
# 3: no nvtx3 headers here (CUDA's include dir, or a Python wheel's copy).
#   usage: bash tools/gpu/nvtx_abi_check/build_and_run.sh [INCLUDE_DIR_WITH_nvtx3] [OUTPUT_BINARY]
set -uo pipefail
cd "$(dirname "$0")/../../.."
include=${1:-}
binary=${2:-$(mktemp -d)/nvtx_abi_check}
if [ -z "$include" ]; then
  candidates=(/usr/local/cuda/include /usr/local/cuda-*/include /usr/include)
  # The copy PyTorch's CUDA wheels depend on (nvidia-nvtx-cu12) and any the torch wheel carries.
  py_dirs=$(python3 - <<'PY' 2>/dev/null
import importlib.util, os
for name in ("nvidia.nvtx", "torch"):
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        continue
    if spec and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            print(os.path.join(location, "include"))
PY
)
  for dir in "${candidates[@]}" $py_dirs; do
    if [ -f "$dir/nvtx3/nvToolsExt.h" ]; then include=$dir; break; fi
  done
fi
if [ -z "$include" ] || [ ! -f "$include/nvtx3/nvToolsExt.h" ]; then
  echo "nvtx_abi_check: no nvtx3/nvToolsExt.h found (looked in CUDA's include dirs and Python wheels)" >&2
  exit 3
fi
echo "nvtx_abi_check: headers from $include/nvtx3"
g++ -std=c++20 -O1 -Isrc -Itools/gpu/abi_check -Itools/gpu/nvtx_abi_check -I"$include" \
    -DABI_HEADER_NAME='"nvToolsExt.h"' tools/gpu/abi_check/main.cpp tools/gpu/nvtx_abi_check/ours.cpp \
    tools/gpu/nvtx_abi_check/real.cpp -ldl -o "$binary" || exit 1
"$binary"
