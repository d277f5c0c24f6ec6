#!/usr/bin/env python3
"""A rank of a pretend data-parallel training (tools/gpu/scaling_4gpu_fake.sh): no GPU, only the markers and
the timing of train_cnn.py / scaling_train.py, so that the GPU-count study's scripts can be tried on the fake
driver. Each iteration computes batch / RATE seconds; with more than one rank it then communicates for
COMM seconds (overlapped with the backward pass for the CNNs, not for allreduce). Marks warmup, training,
epoch (samples=) and iteration, each rank its own; with --mark-forward-backward also forward, backward,
allreduce (allreduce only) and optimizer."""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
import wattwise  # noqa: E402

RATE = {"train_cnn.py": 40000.0, "scaling_train.py": 400000.0}  # samples per second per rank
COMM = {"train_cnn.py": 0.0, "scaling_train.py": 0.004}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--script")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--samples-per-epoch", type=int, default=6144)
    parser.add_argument("--warmup-iters", type=int, default=2)
    parser.add_argument("--mark-forward-backward", action="store_true")
    args, _ = parser.parse_known_args()
    world = int(os.environ.get("WORLD_SIZE", "1"))
    compute = args.batch / RATE.get(args.script, 40000.0)
    comm = COMM.get(args.script, 0.0) if world > 1 else 0.0
    iterations = max(1, args.samples_per_epoch // (args.batch * world))

    def fine(name, seconds):
        if args.mark_forward_backward:
            with wattwise.phase(name):
                time.sleep(seconds)
        else:
            time.sleep(seconds)

    def step():
        fine("forward", compute / 3)
        fine("backward", 2 * compute / 3)
        if comm:
            fine("allreduce", comm)
        fine("optimizer", compute / 20)

    with wattwise.phase("warmup"):
        for _ in range(args.warmup_iters):
            step()
    with wattwise.phase("training"):
        with wattwise.phase("epoch", samples=iterations * args.batch):
            for _ in range(iterations):
                with wattwise.phase("iteration", samples=args.batch):
                    step()
    return 0


if __name__ == "__main__":
    sys.exit(main())
