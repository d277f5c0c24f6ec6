#!/usr/bin/env python3
"""Synthetic-ImageNet training of torchvision CNNs: the reference job for wattwise sweeps.

Trains alexnet, vgg19, inception_v3, resnet50 or resnet152 (torchvision, random init) with SGD and
momentum on random tensors shaped like ImageNet (3x224x224, 3x299x299 for inception_v3; 1000 classes),
as the power-capping papers did, so that runs measure the GPU, not the disk or the data loader. One
batch is generated on the GPU once and reused (as tf_cnn_benchmarks' synthetic mode does).

Phases are marked through the wattwise Python client: warmup, training, epoch (epoch=, samples=, flops=),
iteration (samples=batch, flops=), and with --mark-forward-backward also forward, backward and optimizer
(with --sync, each after torch.cuda.synchronize(), so short phases line up with the power trace).

Work as floating-point operations: before the warm-up, one forward+backward of the real batch runs under
PyTorch's torch.utils.flop_counter.FlopCounterMode (outside any timed or marked phase); that count is the
work of every iteration, so wattwise shows GFLOPS/W for iterations and epochs. It counts the matrix
multiplications and convolutions (a multiply-add is 2 operations), not element-wise ops or the optimizer
step. --no-flops skips it (PyTorch before 2.1 has no flop counter: the script then says so and goes on).

Work per epoch: the papers used 100000 samples per epoch (the default here). For quick runs use
--quick: 6400 samples per epoch (50 iterations at batch 128), 1 epoch, 5 warm-up iterations; or cap
each epoch's duration with --max-seconds.

At the end one JSON line goes to stdout: {"images_per_s": ..., "samples": ..., "seconds": ...} over the
training phase (warm-up excluded); progress goes to stderr.

Several GPUs: start with torchrun (one process per GPU); each rank trains its share of the samples
under DistributedDataParallel and marks its own phases (the client adds rank=); rank 0 prints the
JSON line with the total throughput. docs/multi-gpu.md: measuring such a job, and how ranks map to GPUs.

    wattwise measure -- python3 workloads/train_cnn.py --model resnet50 --batch 128 --quick
"""

import argparse
import json
import os
import sys
import time

MODELS = ("alexnet", "vgg19", "inception_v3", "resnet50", "resnet152")
NUM_CLASSES = 1000
PAPER_SAMPLES_PER_EPOCH = 100000
QUICK_SAMPLES_PER_EPOCH = 6400
EXIT_ENVIRONMENT = 3  # wattwise's exit code for "the machine needs fixing"


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=MODELS, default="resnet50")
    parser.add_argument("--batch", type=int, default=128, help="samples per iteration (per GPU)")
    parser.add_argument("--samples-per-epoch", type=int, default=None,
                        help="default %d as in the papers; %d with --quick" %
                        (PAPER_SAMPLES_PER_EPOCH, QUICK_SAMPLES_PER_EPOCH))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--warmup-iters", type=int, default=None,
                        help="iterations before the measured training (cudnn autotuning, allocator); default 5")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="end each epoch early after this many seconds (quick evidence runs)")
    parser.add_argument("--quick", action="store_true",
                        help="%d samples per epoch, 1 epoch, 5 warm-up iterations" % QUICK_SAMPLES_PER_EPOCH)
    parser.add_argument("--amp", action="store_true", help="mixed precision (float16 autocast + GradScaler)")
    parser.add_argument("--mark-forward-backward", action="store_true",
                        help="also mark forward, backward and optimizer in every iteration")
    parser.add_argument("--sync", action="store_true",
                        help="torch.cuda.synchronize() before each fine-grained marker (slower, exact phases)")
    parser.add_argument("--no-flops", action="store_true",
                        help="do not count the model's floating-point operations (no flops= counters)")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu, for trying the script")
    args = parser.parse_args(argv)
    if args.samples_per_epoch is None:
        args.samples_per_epoch = QUICK_SAMPLES_PER_EPOCH if args.quick else PAPER_SAMPLES_PER_EPOCH
    if args.warmup_iters is None:
        args.warmup_iters = 5
    if args.batch <= 0 or args.samples_per_epoch <= 0 or args.epochs <= 0 or args.warmup_iters < 0:
        parser.error("--batch, --samples-per-epoch and --epochs must be positive, --warmup-iters >= 0")
    return args


def import_wattwise():
    """The installed client, else the one in ../python next to this script."""
    try:
        import wattwise
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
        import wattwise
    return wattwise


def import_torch():
    try:
        import torch
        import torchvision
    except ImportError as error:
        sys.stderr.write("train_cnn.py: cannot import %s: this workload needs PyTorch and torchvision "
                         "(pip install torch torchvision)\n" % (error.name or "torch"))
        sys.exit(EXIT_ENVIRONMENT)
    return torch, torchvision


def log(text):
    sys.stderr.write("train_cnn: %s\n" % text)
    sys.stderr.flush()


class Trainer:
    """One model, one synthetic batch, one optimizer; `step()` is a training iteration."""

    def __init__(self, args, torch, torchvision, marker, device, distributed):
        self.torch = torch
        self.args = args
        self.marker = marker
        image_size = 299 if args.model == "inception_v3" else 224
        builder = getattr(torchvision.models, args.model)
        extra = {"aux_logits": True, "init_weights": True} if args.model == "inception_v3" else {}
        model = builder(weights=None, num_classes=NUM_CLASSES, **extra).to(device)
        if distributed:
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index])
        self.model = model
        self.model.train()
        generator = torch.Generator(device="cpu").manual_seed(args.seed)
        self.images = torch.randn(args.batch, 3, image_size, image_size, generator=generator).to(device)
        self.labels = torch.randint(0, NUM_CLASSES, (args.batch,), generator=generator).to(device)
        self.criterion = torch.nn.CrossEntropyLoss().to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=args.lr, momentum=args.momentum)
        use_scaler = args.amp and device.type == "cuda"
        if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
            self.scaler = torch.amp.GradScaler("cuda", enabled=use_scaler)
        else:  # PyTorch before 2.3
            self.scaler = torch.cuda.amp.GradScaler(enabled=use_scaler)
        self.autocast_device = device.type

    def loss(self):
        output = self.model(self.images)
        if isinstance(output, tuple):  # inception_v3 in training mode: (logits, aux_logits)
            logits, aux_logits = output
            return self.criterion(logits, self.labels) + 0.4 * self.criterion(aux_logits, self.labels)
        return self.criterion(output, self.labels)

    def count_flops(self, flop_counter_mode):
        """Operations of one forward+backward of the batch, as `flop_counter_mode` (FlopCounterMode) counts
        them. Leaves no gradients behind and does not step the optimizer, so training starts as without it."""
        self.optimizer.zero_grad(set_to_none=True)
        counter = flop_counter_mode(display=False)
        with counter:
            with self.torch.autocast(self.autocast_device, enabled=self.args.amp):
                loss = self.loss()
            loss.backward()
        self.optimizer.zero_grad(set_to_none=True)
        return counter.get_total_flops()

    def step(self):
        self.optimizer.zero_grad(set_to_none=True)
        with self.marker.forward():
            with self.torch.autocast(self.autocast_device, enabled=self.args.amp):
                loss = self.loss()
        with self.marker.backward():
            self.scaler.scale(loss).backward()
        with self.marker.optimizer():
            self.scaler.step(self.optimizer)
            self.scaler.update()


def setup_device(torch, args):
    """Returns (device, rank, world_size); under torchrun, one process per GPU with NCCL."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("train_cnn.py: no CUDA GPU is visible to PyTorch (use --device cpu to try the script)\n")
        sys.exit(EXIT_ENVIRONMENT)
    if world_size > 1:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        try:  # naming the device up front lets NCCL bind to it at once (PyTorch 2.3 and later)
            torch.distributed.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
        except TypeError:
            torch.distributed.init_process_group("nccl")
        return torch.device("cuda", local_rank), rank, world_size
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device, rank, world_size


def flops_per_iteration(args, trainer):
    """The operations of one training iteration, or None (--no-flops, or no flop counter in this PyTorch)."""
    if args.no_flops:
        return None
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        log("this PyTorch has no torch.utils.flop_counter (2.1 or later): no flops= counters")
        return None
    flops = trainer.count_flops(FlopCounterMode)
    return float(flops) if flops and flops > 0 else None


def work_counters(samples, flops_per_iteration, iterations):
    """Marker counters for `iterations` iterations of `samples` samples each; flops= only when known."""
    counters = {"samples": samples * iterations}
    if flops_per_iteration is not None:
        counters["flops"] = flops_per_iteration * iterations
    return counters


def synchronize(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(args, torch, torchvision, wattwise):
    from wattwise.torch import TrainLoopMarker

    device, rank, world_size = setup_device(torch, args)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    marker = TrainLoopMarker(fine=args.mark_forward_backward, sync=args.sync)
    trainer = Trainer(args, torch, torchvision, marker, device, world_size > 1)
    # Counted once, before anything is timed or marked; every iteration does the same work.
    flops = flops_per_iteration(args, trainer)
    # Each rank does its share of an epoch's samples, in whole batches.
    iterations_per_epoch = max(1, args.samples_per_epoch // (args.batch * world_size))
    if rank == 0:
        log("%s batch %d x %d GPU(s), %d iterations per epoch, %d epoch(s)%s" %
            (args.model, args.batch, world_size, iterations_per_epoch, args.epochs, ", amp" if args.amp else ""))
        if flops is not None:
            log("%.1f GFLOP per iteration (per GPU)" % (flops / 1e9))

    with wattwise.phase("warmup", samples=args.warmup_iters * args.batch):
        for _ in range(args.warmup_iters):
            trainer.step()
        synchronize(torch, device)

    samples = 0
    started = time.monotonic()
    with wattwise.phase("training"):
        for epoch in range(args.epochs):
            epoch_started = time.monotonic()
            epoch_iterations = 0
            # begin/end rather than phase(): the end carries the samples done, known only then.
            wattwise.begin("epoch", epoch=epoch)
            try:
                for _ in range(iterations_per_epoch):
                    with marker.iteration(**work_counters(args.batch, flops, 1)):
                        trainer.step()
                    epoch_iterations += 1
                    if args.max_seconds is not None and time.monotonic() - epoch_started >= args.max_seconds:
                        break
                synchronize(torch, device)
            finally:
                wattwise.end("epoch", epoch=epoch, **work_counters(args.batch, flops, epoch_iterations))
            epoch_samples = epoch_iterations * args.batch
            samples += epoch_samples
            if rank == 0:
                log("epoch %d: %d samples in %.2f s" % (epoch, epoch_samples, time.monotonic() - epoch_started))
        synchronize(torch, device)
    seconds = time.monotonic() - started

    total_samples = samples * world_size
    if world_size > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    if rank == 0:
        result = {"images_per_s": total_samples / seconds, "samples": total_samples, "seconds": seconds,
                  "model": args.model, "batch": args.batch, "gpus": world_size, "amp": args.amp}
        print(json.dumps(result), flush=True)


def main(argv=None):
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    wattwise = import_wattwise()
    torch, torchvision = import_torch()
    train(args, torch, torchvision, wattwise)
    return 0


if __name__ == "__main__":
    sys.exit(main())
