#!/usr/bin/env python3
"""A small PyTorch training job whose phases are marked in one of three ways, for tools/gpu/nvtx_evidence.sh.

  --annotate nvtx     torch.cuda.nvtx.range_push/range_pop only (measured with `wattwise measure --nvtx`)
  --annotate markers  the wattwise Python client only (wattwise.begin/end)
  --annotate both     both at the same instants, NVTX ranges named like the markers with an "nvtx_" prefix,
                      so one run compares the two paths on the very same work

Phases: training (all epochs), epoch (each), step (each iteration). Every phase ends after
torch.cuda.synchronize(), so its end is when the GPU finished its work, whichever way it is marked.
The model is torchvision's resnet18 (random init, synthetic ImageNet-shaped batch on the GPU); without
torchvision a small conv net. One JSON line on stdout at the end: {"steps": ..., "seconds": ...}.
"""

import argparse
import json
import sys
import time


def build_model(torch):
    try:
        import torchvision
        return torchvision.models.resnet18(num_classes=1000)
    except ImportError:
        nn = torch.nn
        return nn.Sequential(nn.Conv2d(3, 64, 7, stride=2), nn.ReLU(), nn.Conv2d(64, 128, 3, stride=2), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 1000))


class Marks:
    """Begins and ends phases through NVTX, wattwise markers, or both."""

    def __init__(self, how, torch):
        self.nvtx = torch.cuda.nvtx if how in ("nvtx", "both") else None
        self.prefix = "nvtx_" if how == "both" else ""
        self.ww = None
        if how in ("markers", "both"):
            import wattwise
            self.ww = wattwise

    def begin(self, name):
        if self.nvtx:
            self.nvtx.range_push(self.prefix + name)
        if self.ww:
            self.ww.begin(name)

    def end(self, name):
        if self.ww:
            self.ww.end(name)
        if self.nvtx:
            self.nvtx.range_pop()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotate", choices=("nvtx", "markers", "both"), required=True)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=100, help="iterations per epoch")
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args(argv)

    import torch
    if not torch.cuda.is_available():
        print("nvtx_train: no CUDA device", file=sys.stderr)
        return 3
    torch.manual_seed(0)
    device = torch.device("cuda")
    model = build_model(torch).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    images = torch.randn(args.batch, 3, 224, 224, device=device)
    labels = torch.randint(0, 1000, (args.batch,), device=device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(images), labels).backward()
        optimizer.step()

    for _ in range(30):  # warm-up (cudnn autotuning, allocator), outside every phase
        step()
    torch.cuda.synchronize()

    marks = Marks(args.annotate, torch)
    start = time.monotonic()
    marks.begin("training")
    for _ in range(args.epochs):
        marks.begin("epoch")
        for _ in range(args.steps):
            marks.begin("step")
            step()
            torch.cuda.synchronize()
            marks.end("step")
        marks.end("epoch")
    marks.end("training")
    print(json.dumps({"steps": args.epochs * args.steps, "seconds": time.monotonic() - start}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
