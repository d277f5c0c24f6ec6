#!/usr/bin/env python3
"""Runs a command and measures it independently of wattwise, for docs/evidence.

Run under `wattwise measure`: this process is "the job". It reads the NVML energy counter itself just before
starting the command and just after it ends, and meanwhile integrates two other sources over the same window:
`nvidia-smi --query-gpu=power.draw` polling and a plain nvmlDeviceGetPowerUsage loop. Writes one JSON object.

    counter_job.py --out result.json -- python3 train_cnn.py ...
"""
import argparse
import json
import subprocess
import sys
import threading
import time

import os

from nvml_ctypes import Nvml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import wattwise  # noqa: E402


def integrate(points, t0, t1):
    """Trapezoid integral of (t, watts) points clipped to [t0, t1], holding the end values."""
    pts = sorted(p for p in points if t0 - 1 <= p[0] <= t1 + 1)
    if len(pts) < 2:
        return None
    energy = 0.0
    for (ta, wa), (tb, wb) in zip(pts, pts[1:]):
        a, b = max(ta, t0), min(tb, t1)
        if b <= a:
            continue
        # Linear interpolation of the power at the clipped ends.
        wa_c = wa + (wb - wa) * (a - ta) / (tb - ta)
        wb_c = wa + (wb - wa) * (b - ta) / (tb - ta)
        energy += 0.5 * (wa_c + wb_c) * (b - a)
    return energy


def poll_nvml(nvml, points, stop, period_s):
    next_t = time.monotonic()
    while not stop.is_set():
        points.append((time.monotonic(), nvml.power_usage_w()))
        next_t += period_s
        time.sleep(max(0.0, next_t - time.monotonic()))


def poll_nvidia_smi(points, stop, period_ms):
    proc = subprocess.Popen(
        ["nvidia-smi", "-i", "0", "--query-gpu=power.draw", "--format=csv,noheader,nounits", f"-lms={period_ms}"],
        stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        try:
            points.append((time.monotonic(), float(line.strip())))
        except ValueError:
            pass
        if stop.is_set():
            break
    proc.terminate()
    proc.wait()


def wait_for_posting(nvml):
    """Polls the counter until its value changes; returns (value, monotonic time of the change)."""
    first = nvml.energy_mj()
    while True:
        value = nvml.energy_mj()
        if value != first:
            return value, time.monotonic()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--nvml-period-ms", type=float, default=10.0)
    parser.add_argument("--smi-period-ms", type=int, default=100)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    nvml = Nvml(0)
    stop = threading.Event()
    nvml_points, smi_points = [], []
    threads = [threading.Thread(target=poll_nvml, args=(nvml, nvml_points, stop, args.nvml_period_ms / 1000)),
               threading.Thread(target=poll_nvidia_smi, args=(smi_points, stop, args.smi_period_ms))]
    for t in threads:
        t.start()
    time.sleep(1.0)  # let both pollers have data before the window opens

    # Open and close the window right after the counter posts a new value: then the value read is fresh
    # (a value read at a random moment can be up to ~100 ms old). The window is marked for wattwise as the
    # phase "independent_window", so both measure exactly the same span.
    e0, t0 = wait_for_posting(nvml)
    wattwise.begin("independent_window")
    rc = subprocess.call(command)
    e1, t1 = wait_for_posting(nvml)  # the job ended; close at the next posting, after its last moments
    wattwise.end("independent_window")
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(timeout=5)

    result = {
        "command": command,
        "exit_code": rc,
        "window_s": t1 - t0,
        "counter_j": (e1 - e0) / 1000.0,
        "nvml_power_usage_j": integrate(nvml_points, t0, t1),
        "nvml_power_usage_samples": len([p for p in nvml_points if t0 <= p[0] <= t1]),
        "nvidia_smi_power_draw_j": integrate(smi_points, t0, t1),
        "nvidia_smi_samples": len([p for p in smi_points if t0 <= p[0] <= t1]),
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    nvml.close()
    sys.exit(rc)


if __name__ == "__main__":
    main()
