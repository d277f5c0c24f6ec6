#!/usr/bin/env python3
"""The cost of one torch.cuda.nvtx.range_push + range_pop pair, for tools/gpu/nvtx_evidence.sh: run it under
`wattwise measure --nvtx` (each range becomes two markers) and under `wattwise measure` alone (NVTX then has no
injection and every call is a no-op). Prints one JSON line: {"pairs": N, "ns_per_pair": ...}.
    usage: nvtx_rate.py [PAIRS] [BURST]   BURST pairs back to back, then a 1 ms pause (default: no pause)"""
import json
import sys
import time

import torch

pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
burst = int(sys.argv[2]) if len(sys.argv) > 2 else 0
torch.cuda.nvtx.range_push("warm-up")  # the first call loads the injection library
torch.cuda.nvtx.range_pop()
start = time.perf_counter_ns()
paused_ns = 0
for i in range(pairs):
    torch.cuda.nvtx.range_push("r")
    torch.cuda.nvtx.range_pop()
    if burst and (i + 1) % burst == 0:
        t = time.perf_counter_ns()
        time.sleep(0.001)
        paused_ns += time.perf_counter_ns() - t
elapsed_ns = time.perf_counter_ns() - start - paused_ns
print(json.dumps({"pairs": pairs, "burst": burst, "ns_per_pair": elapsed_ns / pairs}))
