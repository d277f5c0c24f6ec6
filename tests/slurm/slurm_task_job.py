"""One SLURM task's job for the SLURM test: an epoch of ITERATIONS iterations marked through the Python
module, whose rank is the task's SLURM_LOCALID (the module reads it). The iterations' length differs per local
rank (ITERATION_S), so a task's phases read from the wrong task's markers would have the wrong duration.

    srun ... wattwise measure -- python3 slurm_task_job.py
"""

import os
import time

import wattwise

ITERATIONS = 3
ITERATION_S = (0.30, 0.20)  # by SLURM_LOCALID
PAUSE_S = 0.1  # between iterations: not part of any iteration
SAMPLES_PER_ITERATION = 16


def main():
    local_id = int(os.environ.get("SLURM_LOCALID", "0"))
    iteration_s = ITERATION_S[local_id % len(ITERATION_S)]
    with wattwise.phase("epoch", epoch=0):
        for _ in range(ITERATIONS):
            with wattwise.iteration(samples=SAMPLES_PER_ITERATION):
                time.sleep(iteration_s)
            time.sleep(PAUSE_S)


if __name__ == "__main__":
    main()
