#!/usr/bin/env python3
"""CPU and wall time of nvmlDeviceGetComputeRunningProcesses_v3 (the job-GPU detection of issue 11) on this
machine, read-only, with and without a CUDA process on the GPU: explains what wattwise's GPU-usage poll costs.

    python3 tools/gpu/process_list_cost.py OUT.json
"""
import ctypes
import json
import subprocess
import sys
import time

from nvml_ctypes import Nvml

nvml = Nvml(0)
lib, h = nvml.lib, nvml.handle


class ProcessInfo(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


def cost(label, n=50):
    infos = (ProcessInfo * 64)()
    count = ctypes.c_uint(64)
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        count.value = 64
        rc = lib.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(count), infos)
    w1, c1 = time.perf_counter(), time.process_time()
    r = {"rc": rc, "processes": count.value, "wall_ms": (w1 - w0) / n * 1e3, "cpu_ms": (c1 - c0) / n * 1e3}
    print(f"{label:30s} rc={rc} processes={count.value} wall {r['wall_ms']:.4f} ms cpu {r['cpu_ms']:.4f} ms")
    return r


result = {"idle": cost("no CUDA process")}
job = subprocess.Popen([sys.executable, "-c", "import torch, time; x = torch.ones(1, device='cuda'); "
                        "print('ready', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
job.stdout.readline()
result["one_process"] = cost("one CUDA process")
job.kill()
json.dump(result, open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout, indent=1)
