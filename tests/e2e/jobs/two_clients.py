"""An end-to-end job that marks phases through both clients: Python epochs, each running the C job, which
marks its own "c_step" phases through the C API.

    python3 two_clients.py E2E_JOB ANCHOR_FILE

Under wattwise it first sends a point marker "anchor" whose CLOCK_MONOTONIC timestamp it writes to
ANCHOR_FILE: with the anchor's begin_s from the JSON, the test places the job's window on the fake GPU's
power profile (anchored at monotonic 0) and integrates the expected energy exactly. On its own (no
WATTWISE_SOCKET) it sends nothing and must still succeed silently.
"""

import os
import socket
import subprocess
import sys
import time

import wattwise


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


def main():
    c_job, anchor_path = sys.argv[1], sys.argv[2]
    send_anchor(anchor_path)
    for _ in range(2):
        with wattwise.phase("epoch", samples=128):
            time.sleep(0.3)
            subprocess.run([c_job, "phases", "2", "150"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
