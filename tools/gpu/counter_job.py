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
    """Polls the counter until its value changes; returns (value, monotonic time of the change, earliest
    time the posting can have been). A read's value comes from somewhere inside it (one read spins 4-9 ms
    on an idle H100, tens of ms on a starved CPU), so the posting lies after the start of the last read
    that still returned the old value and before the end of the read that returned the new one."""
    last_old_start = time.monotonic()
    first = nvml.energy_mj()
    while True:
        start = time.monotonic()
        value = nvml.energy_mj()
        if value != first:
            return value, time.monotonic(), last_old_start
        last_old_start = start


def edge_power_w(points, t, half_width_s=0.05):
    """The mean of the instant-power polls within half_width_s of t (None without any)."""
    near = [w for (tp, w) in points if abs(tp - t) <= half_width_s]
    return sum(near) / len(near) if near else None


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
    # The counter's difference spans posting to posting; the window wattwise measures spans marker to
    # marker, each a little after its posting (the read that saw it, then the call; more on a starved CPU).
    # Each edge's lag is bounded from the reads' and the call's times, so the difference the reference's own
    # timing can explain is known: "reference_timing_j" below.
    e0, t0, p0_earliest = wait_for_posting(nvml)
    m0_before = time.monotonic()
    wattwise.begin("independent_window")
    m0_after = time.monotonic()
    rc = subprocess.call(command)
    e1, t1, p1_earliest = wait_for_posting(nvml)  # the job ended; close at the next posting, after its last moments
    m1_before = time.monotonic()
    wattwise.end("independent_window")
    m1_after = time.monotonic()
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
    # wattwise's window minus this counter difference = P1 * lag1 - P0 * lag0, each lag = marker - posting,
    # within [marker call's start - the read that saw the posting's end, marker call's end - the last old
    # read's start]. The edges' power from the 10 ms instant-power polls, +-10% for what a poll misses.
    edges = []
    for (p_earliest, p_latest, m_before, m_after) in ((p0_earliest, t0, m0_before, m0_after),
                                                      (p1_earliest, t1, m1_before, m1_after)):
        edges.append({"lag_min_s": max(0.0, m_before - p_latest), "lag_max_s": m_after - p_earliest,
                      "power_w": edge_power_w(nvml_points, p_latest)})
    result["edges"] = edges
    if all(e["power_w"] is not None for e in edges):
        start, end = edges
        result["reference_timing_j"] = [
            0.9 * end["power_w"] * end["lag_min_s"] - 1.1 * start["power_w"] * start["lag_max_s"],
            1.1 * end["power_w"] * end["lag_max_s"] - 0.9 * start["power_w"] * start["lag_min_s"]]
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    nvml.close()
    sys.exit(rc)


if __name__ == "__main__":
    main()
