#!/usr/bin/env python3
"""A data-parallel job whose communication does not overlap its computation (issue 24).

Each iteration runs forward and backward of a stack of large fully connected layers, then ONE all-reduce of
all the gradients flattened into a single tensor (--comm-mb of them, default 1024 MB), waited for before the
optimizer step: nothing computes while it runs, unlike DistributedDataParallel's bucketed all-reduce that
overlaps the backward pass. On one GPU there is nothing to reduce. So adding GPUs adds communication time
that no computation hides: the case where one of the studies saw poor scaling.

Marks the phases train_cnn.py marks (warmup, training, epoch, iteration with samples=) through the wattwise
client, each rank its own (the client adds rank=); with --mark-forward-backward also forward, backward,
allreduce and optimizer (with --sync, each after torch.cuda.synchronize()).

    torchrun --standalone --nproc-per-node 4 tools/gpu/scaling_train.py --batch 256 --samples-per-epoch 8192
    python3 tools/gpu/scaling_train.py --device cpu --batch 8 --samples-per-epoch 32 --width 256 --comm-mb 1

At the end rank 0 prints one JSON line: {"images_per_s", "samples", "seconds", "gpus", "batch", ...}.
"""

import argparse
import contextlib
import json
import os
import sys
import time

EXIT_ENVIRONMENT = 3


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256, help="samples per iteration (per GPU)")
    parser.add_argument("--samples-per-epoch", type=int, default=8192, help="all ranks together")
    parser.add_argument("--warmup-iters", type=int, default=2)
    parser.add_argument("--width", type=int, default=4096, help="features of each layer")
    parser.add_argument("--comm-mb", type=float, default=1024,
                        help="megabytes all-reduced per iteration (the gradients, padded or cut to this size)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--mark-forward-backward", action="store_true",
                        help="also mark forward, backward, allreduce and optimizer in every iteration")
    parser.add_argument("--sync", action="store_true", help="synchronize before each fine-grained marker")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu, for trying the script")
    args = parser.parse_args(argv)
    if min(args.batch, args.samples_per_epoch, args.width, args.layers) <= 0 or args.comm_mb <= 0:
        parser.error("--batch, --samples-per-epoch, --width, --layers and --comm-mb must be positive")
    return args


def import_wattwise():
    try:
        import wattwise
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
        import wattwise
    return wattwise


def log(text):
    sys.stderr.write("scaling_train: %s\n" % text)
    sys.stderr.flush()


def main(argv=None):
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    wattwise = import_wattwise()
    try:
        import torch
    except ImportError:
        sys.stderr.write("scaling_train.py: this job needs PyTorch\n")
        return EXIT_ENVIRONMENT
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("scaling_train.py: no CUDA GPU is visible (use --device cpu to try the script)\n")
        return EXIT_ENVIRONMENT
    if world_size > 1:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if args.device == "cuda":
            torch.cuda.set_device(local_rank)
            device = torch.device("cuda", local_rank)
            torch.distributed.init_process_group("nccl")
        else:
            device = torch.device("cpu")
            torch.distributed.init_process_group("gloo")
    else:
        device = torch.device(args.device)
    sync = args.sync and device.type == "cuda"

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    @contextlib.contextmanager
    def fine(name):
        if not args.mark_forward_backward:
            yield
            return
        if sync:
            synchronize()
        wattwise.begin(name)
        try:
            yield
        finally:
            if sync:
                synchronize()
            wattwise.end(name)

    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    inputs = torch.randn(args.batch, args.width, device=device)
    targets = torch.randn(args.batch, args.width, device=device)
    params = [p for p in model.parameters()]
    grad_elements = sum(p.numel() for p in params)
    comm_elements = max(1, int(args.comm_mb * 1e6 / 4))
    flat = torch.zeros(comm_elements, device=device)  # the one buffer all-reduced every iteration
    iterations = max(1, args.samples_per_epoch // (args.batch * world_size))
    if rank == 0:
        log("%d GPU(s), batch %d, %d iterations, %.0f MB all-reduced per iteration (gradients %.0f MB)" %
            (world_size, args.batch, iterations, comm_elements * 4 / 1e6, grad_elements * 4 / 1e6))

    def step():
        optimizer.zero_grad(set_to_none=True)
        with fine("forward"):
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
        with fine("backward"):
            loss.backward()
        with fine("allreduce"):
            if world_size > 1:
                # The gradients into the one buffer, reduced at once and waited for: nothing overlaps it.
                offset = 0
                for p in params:
                    n = min(p.numel(), comm_elements - offset)
                    if n <= 0:
                        break
                    flat[offset:offset + n].copy_(p.grad.reshape(-1)[:n])
                    offset += n
                torch.distributed.all_reduce(flat)
                synchronize()
                offset = 0
                for p in params:
                    n = min(p.numel(), comm_elements - offset)
                    if n <= 0:
                        break
                    p.grad.reshape(-1)[:n].copy_(flat[offset:offset + n] / world_size)
                    offset += n
        with fine("optimizer"):
            optimizer.step()

    with wattwise.phase("warmup", samples=args.warmup_iters * args.batch):
        for _ in range(args.warmup_iters):
            step()
        synchronize()
    started = time.monotonic()
    with wattwise.phase("training"):
        wattwise.begin("epoch", epoch=0)
        done = 0
        try:
            for _ in range(iterations):
                wattwise.begin("iteration")
                step()
                wattwise.end("iteration", samples=args.batch)
                done += 1
            synchronize()
        finally:
            wattwise.end("epoch", epoch=0, samples=done * args.batch)
    seconds = time.monotonic() - started
    if world_size > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    if rank == 0:
        total = done * args.batch * world_size
        print(json.dumps({"images_per_s": total / seconds, "samples": total, "seconds": seconds,
                          "model": "allreduce", "batch": args.batch, "gpus": world_size,
                          "comm_mb": comm_elements * 4 / 1e6}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
