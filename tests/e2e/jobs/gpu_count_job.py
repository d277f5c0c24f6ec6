"""An end-to-end job for a GPU-count sweep: python3 gpu_count_job.py GPUS

It trains the same 1024 samples on 1, 2 or 4 GPUs: for 1.0 s, 0.8132 s or 0.5833 s. On the fake node of
tests/e2e/energy_scope_test.cpp (GPU 0 draws 300 W, GPUs 1-3 80 W each, busy or idle) the job's GPUs then
use 300 J, 309 J (+3%) and 315 J (+5%): the fewer GPUs, the less energy of the job's own. The node's four
GPUs use 540 J, 439 J and 315 J: the idle ones' 240 W makes one GPU the dearest.
"""

import sys
import time

import wattwise

TRAINING_S = {1: 1.0, 2: 0.8132, 4: 0.5833}


def main():
    gpus = int(sys.argv[1])
    with wattwise.phase("training"):
        with wattwise.phase("epoch", samples=1024):
            time.sleep(TRAINING_S[gpus])


if __name__ == "__main__":
    main()
