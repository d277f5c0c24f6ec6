"""A training-like job for the e2e tests of `wattwise tune`: iterations of a fixed duration, marked with
wattwise.iteration(), for a number of seconds; then it ends as its mode says.

    tune_job.py SECONDS ITERATION_MS MODE OUT_DIR
    MODE: ok (exit 0), crash (SIGABRT), crash-after-change (SIGABRT one second after wattwise tune first
    holds a setting other than the captured one, or at SECONDS: a crash while the GPU is changed, however
    slowly a loaded machine runs the search), nomarkers (no markers at all), pidfile (writes its pid to
    OUT_DIR/job.pid first, for tests that kill wattwise).
It writes what wattwise.tuning_state() said at its end to OUT_DIR/tuning_state.json (null without wattwise tune).
"""
import json
import os
import signal
import sys
import time

import wattwise

seconds, iteration_ms, mode, out_dir = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
if mode == "pidfile":
    with open(os.path.join(out_dir, "job.pid.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(out_dir, "job.pid.tmp"), os.path.join(out_dir, "job.pid"))
end = time.monotonic() + seconds
iteration = 0
while time.monotonic() < end:
    iteration += 1
    if mode == "crash-after-change" and iteration % 5 == 0:
        state = wattwise.tuning_state() or {}
        changed = state.get("value") is not None and state.get("value") != state.get("captured_value")
        if changed:
            end = min(end, time.monotonic() + 1.0)
            mode = "crash"
    if mode == "nomarkers":
        time.sleep(iteration_ms / 1000)
        continue
    with wattwise.iteration(samples=32):
        time.sleep(iteration_ms / 1000)
with open(os.path.join(out_dir, "tuning_state.json"), "w") as f:
    json.dump(wattwise.tuning_state(), f)
if mode == "crash":
    os.kill(os.getpid(), signal.SIGABRT)
