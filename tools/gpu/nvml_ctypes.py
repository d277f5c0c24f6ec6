"""A minimal, independent NVML reader (ctypes, no wattwise code) for cross-checking wattwise on a real GPU.

Only reads; never changes a setting.
"""
import ctypes


class Nvml:
    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self._check(self.lib.nvmlInit_v2(), "nvmlInit_v2")
        self.handle = ctypes.c_void_p()
        self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.handle)), "GetHandleByIndex")

    def _check(self, rc, what):
        if rc != 0:
            self.lib.nvmlErrorString.restype = ctypes.c_char_p
            raise RuntimeError(f"{what}: {self.lib.nvmlErrorString(rc).decode()}")

    def energy_mj(self):
        value = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, ctypes.byref(value)), "energy")
        return value.value

    def power_usage_w(self):
        value = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetPowerUsage(self.handle, ctypes.byref(value)), "power usage")
        return value.value / 1000.0

    def close(self):
        self.lib.nvmlShutdown()
