#!/usr/bin/env python3
"""A GPU load that switches on and off in phases of a fixed length, marking each phase for wattwise.

Used by docs/evidence to check per-phase energy: "on" phases run k identical bf16 matrix products (k chosen so a
phase lasts --phase-s), "off" phases sleep. A leading "steady" phase runs the same product back to back for
--steady-s, which gives the long-run energy per product: an "on" phase of k products should cost about k times it.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import wattwise  # noqa: E402
import torch  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase-s", type=float, required=True)
    parser.add_argument("--periods", type=int, default=10, help="number of on+off periods")
    parser.add_argument("--steady-s", type=float, default=6.0)
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()

    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)

    def products(n):
        for _ in range(n):
            torch.mm(a, b)
        torch.cuda.synchronize()

    products(20)  # warm-up: clocks up, kernels loaded
    start = time.monotonic()
    products(50)
    per_product_s = (time.monotonic() - start) / 50
    k = max(1, round(args.phase_s / per_product_s))
    chunks = max(1, round(args.steady_s / args.phase_s))
    steady_n = chunks * k
    time.sleep(1.0)

    # The steady phase is cut into back-to-back chunks of k products: short windows under a steady load,
    # each of which should cost steady/chunks.
    with wattwise.phase("steady", products=steady_n):
        for _ in range(chunks):
            with wattwise.phase("chunk", products=k):
                for _ in range(k):
                    torch.mm(a, b)
                torch.cuda.synchronize()
    time.sleep(1.0)
    for _ in range(args.periods):
        with wattwise.phase("on", products=k):
            products(k)
        with wattwise.phase("off"):
            time.sleep(args.phase_s)
    print(f'{{"per_product_s": {per_product_s:.6f}, "k": {k}, "steady_n": {steady_n}, "chunks": {chunks}}}')


if __name__ == "__main__":
    main()
