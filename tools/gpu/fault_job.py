#!/usr/bin/env python3
"""A small GPU job for the fault checks on a real GPU (tools/gpu/faults_gpu.sh): matrix products on the GPU
in marked iterations, with helper processes like a data loader's workers, and a chosen answer to SIGTERM/SIGINT.

  --on-stop exit0     checkpoint-like: finish the iteration, print, exit 0 (what torchrun/SLURM jobs often do)
  --on-stop ignore    ignore SIGTERM and SIGINT (wattwise must escalate)
  --workers N         N child processes that sleep (they must not outlive the job)
  --hostile           also send hostile markers: invalid UTF-8, terminal escapes, an end before its begin
  --pids FILE         write the pids of this process and its workers, one per line
"""
import argparse
import multiprocessing as mp
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import wattwise  # noqa: E402


def worker():
    while True:
        time.sleep(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--on-stop", choices=["default", "exit0", "ignore"], default="default")
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--hostile", action="store_true")
    p.add_argument("--pids")
    a = p.parse_args()

    stop = {"asked": False}
    if a.on_stop == "exit0":
        def asked(signum, _frame):
            stop["asked"] = True
        signal.signal(signal.SIGTERM, asked)
        signal.signal(signal.SIGINT, asked)
    elif a.on_stop == "ignore":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    workers = [mp.Process(target=worker, daemon=False) for _ in range(a.workers)]
    for w in workers:
        w.start()
    if a.pids:
        with open(a.pids, "w") as f:
            f.write("\n".join(str(x) for x in [os.getpid()] + [w.pid for w in workers]) + "\n")

    import torch
    x = torch.randn(4096, 4096, device="cuda")
    if a.hostile:
        wattwise.begin("bad\udcff name")  # a lone surrogate: the client must send it without failing
        wattwise.end("bad\udcff name")
        with wattwise.phase("\x1b[2Jclear-screen"):
            torch.cuda.synchronize()
    t_end = time.monotonic() + a.seconds
    with wattwise.phase("train"):
        while time.monotonic() < t_end and not stop["asked"]:
            with wattwise.iteration(samples=4096):
                for _ in range(20):
                    x = torch.tanh(x @ x)
                torch.cuda.synchronize()
    if stop["asked"]:
        print("fault_job: stop asked: checkpointed, exiting 0", flush=True)
    for w in workers:
        w.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
