"""An end-to-end job shaped like a two-rank data-parallel run: the launcher starts two rank processes (RANK=0
and RANK=1, as torchrun does), each marking its own epoch and iterations through the Python module, which adds
rank= from the environment.

    python3 multirank_job.py ANCHOR_FILE

The launcher itself has no rank: it sends a point marker "anchor" whose CLOCK_MONOTONIC timestamp it writes to
ANCHOR_FILE (so the test can place the job on the fake GPUs' power profiles), and marks a rank-less phase
"launch" around the ranks' whole lifetime (charged to every job GPU).

The ranks' iterations differ in length (rank 0: ITERATION_S[0], rank 1: ITERATION_S[1]) with a pause between
them, so a window cut from the wrong rank's markers, or charged to the wrong GPU, gives a different energy.
Each iteration carries samples= and flops= counters. Without WATTWISE_SOCKET nothing is sent.
"""

import os
import socket
import subprocess
import sys
import time

import wattwise

RANKS = 2
ITERATIONS = 3
ITERATION_S = (0.25, 0.15)  # per rank
PAUSE_S = 0.1  # between iterations: not part of any iteration
SAMPLES_PER_ITERATION = 32
FLOPS_PER_ITERATION = 3.0e12


def send_anchor(anchor_path):
    socket_path = os.environ.get(wattwise.ENVIRONMENT_VARIABLE)
    if not socket_path:
        return
    t_ns = time.monotonic_ns()
    message = wattwise.encode("P", "anchor", t_ns, os.getpid()).encode("utf-8")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(message, socket_path)
    with open(anchor_path, "w") as out:
        out.write("%d\n" % t_ns)


def run_rank(rank):
    iteration_s = ITERATION_S[rank]
    wattwise.begin("epoch", epoch=0)
    for _ in range(ITERATIONS):
        with wattwise.iteration(samples=SAMPLES_PER_ITERATION, flops=FLOPS_PER_ITERATION):
            time.sleep(iteration_s)
        time.sleep(PAUSE_S)
    wattwise.end("epoch", epoch=0, samples=ITERATIONS * SAMPLES_PER_ITERATION)


def launch(anchor_path):
    send_anchor(anchor_path)
    with wattwise.phase("launch"):
        children = []
        for rank in range(RANKS):
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(RANKS))
            children.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank"], env=env))
        codes = [child.wait() for child in children]
    return max(codes)


def main():
    if sys.argv[1:] == ["--rank"]:
        run_rank(int(os.environ["RANK"]))
        return 0
    return launch(sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
