"""Keep one GPU busy with a memory-bound torch loop (copies of a 1 GiB buffer) for N seconds: a box check run
alongside it should flag that GPU and name this process as its likely cause.

    python benchmarks/gpu/load_gpu.py --gpu 1 --seconds 120

`--gpu` is a CUDA index as this interpreter sees it. Prints one line when busy, one when done (GB/s it moved)."""

from __future__ import annotations

import argparse
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--mib", type=int, default=1024, help="buffer size in MiB (default 1024)")
    args = parser.parse_args()
    device = torch.device("cuda", args.gpu)
    source = torch.empty(args.mib * 2**20 // 4, dtype=torch.float32, device=device).fill_(1.0)
    target = torch.empty_like(source)
    print(f"load_gpu: busy on cuda:{args.gpu} ({torch.cuda.get_device_name(device)}) for {args.seconds:g} s",
          flush=True)
    started = time.monotonic()
    copies = 0
    while time.monotonic() - started < args.seconds:
        for _ in range(50):
            target.copy_(source)
        copies += 50
        torch.cuda.synchronize(device)
    elapsed = time.monotonic() - started
    moved = 2 * copies * source.numel() * 4  # each copy reads and writes the buffer
    print(f"load_gpu: done: {copies} copies in {elapsed:.1f} s, {moved / elapsed / 1e9:.1f} GB/s", flush=True)


if __name__ == "__main__":
    main()
