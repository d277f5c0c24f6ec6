#!/usr/bin/env python3
"""Wall time and CPU time of each NVML reading wattwise takes, on this machine (read-only).

Explains wattwise's own CPU use: each cadence costs (calls per second) x (CPU per call).
"""
import ctypes
import json
import sys
import time

from nvml_ctypes import Nvml

nvml = Nvml(0)
lib, h = nvml.lib, nvml.handle
u, ull = ctypes.c_uint(), ctypes.c_ulonglong()


class FieldValue(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", ctypes.c_ulonglong)]


class Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


field = FieldValue(fieldId=186)
util = Utilization()
mem = Memory()
calls = {
    "nvmlDeviceGetTotalEnergyConsumption": lambda: lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(ull)),
    "nvmlDeviceGetPowerUsage": lambda: lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(u)),
    "nvmlDeviceGetFieldValues(POWER_INSTANT)": lambda: lib.nvmlDeviceGetFieldValues(h, 1, ctypes.byref(field)),
    "nvmlDeviceGetClockInfo(SM)": lambda: lib.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(u)),
    "nvmlDeviceGetUtilizationRates": lambda: lib.nvmlDeviceGetUtilizationRates(h, ctypes.byref(util)),
    "nvmlDeviceGetTemperature": lambda: lib.nvmlDeviceGetTemperature(h, 0, ctypes.byref(u)),
    "nvmlDeviceGetPerformanceState": lambda: lib.nvmlDeviceGetPerformanceState(h, ctypes.byref(u)),
    "nvmlDeviceGetCurrentClocksEventReasons": lambda: lib.nvmlDeviceGetCurrentClocksEventReasons(h, ctypes.byref(ull)),
    "nvmlDeviceGetMemoryInfo": lambda: lib.nvmlDeviceGetMemoryInfo(h, ctypes.byref(mem)),
    "nvmlDeviceGetPcieThroughput(TX)": lambda: lib.nvmlDeviceGetPcieThroughput(h, 0, ctypes.byref(u)),
}
result = {}
for name, call in calls.items():
    n = 20 if "Pcie" in name else 200
    call()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        rc = call()
    w1, c1 = time.perf_counter(), time.process_time()
    result[name] = {"rc": rc, "wall_ms": (w1 - w0) / n * 1e3, "cpu_ms": (c1 - c0) / n * 1e3}
    print(f"{name:45s} rc={rc}  wall {result[name]['wall_ms']:8.4f} ms  cpu {result[name]['cpu_ms']:8.4f} ms")
json.dump(result, open(sys.argv[1], "w") if len(sys.argv) > 1 else sys.stdout, indent=1)
