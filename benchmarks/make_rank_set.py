#!/usr/bin/env python3
"""A rank set made from a real capture: N copies, one per rank (`job.rank<R>.hatchet`), every rank's kernel times
varied by up to ±2% (a seeded jitter, so no two ranks are equal) and one straggler whose largest kernel takes
`--slow` times as long. For the rank-set benchmark (bench_rank_set.py) and by hand.

    .venv/bin/python benchmarks/make_rank_set.py CAPTURE OUT_DIR [--ranks 1024] [--straggler 617] [--slow 1.5]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import orjson


def kernels(node: dict):
    """Every node that carries a kernel time."""
    if "device_id" in node.get("metrics", {}) and node["metrics"].get("time (ns)"):
        yield node
    for child in node.get("children", ()):
        yield from kernels(child)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--straggler", type=int, default=617)
    parser.add_argument("--slow", type=float, default=1.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 0 <= args.straggler < args.ranks:
        parser.error(f"--straggler {args.straggler}: no such rank among {args.ranks} (0 to {args.ranks - 1})")
    document = orjson.loads(args.capture.read_bytes())
    tree = document[0]
    nodes = list(kernels(tree))
    largest = max(nodes, key=lambda node: node["metrics"]["time (ns)"])
    originals = [node["metrics"]["time (ns)"] for node in nodes]
    args.out.mkdir(parents=True, exist_ok=True)
    jitter = random.Random(args.seed)
    for rank in range(args.ranks):
        for node, original in zip(nodes, originals):
            node["metrics"]["time (ns)"] = round(original * jitter.uniform(0.98, 1.02))
        if rank == args.straggler:
            largest["metrics"]["time (ns)"] = round(largest["metrics"]["time (ns)"] * args.slow)
        (args.out / f"job.rank{rank}.hatchet").write_text(json.dumps(document, indent=4))  # as Proton writes it
    total = sum(path.stat().st_size for path in args.out.glob("job.rank*.hatchet"))
    print(f"{args.out}\tranks={args.ranks}\tstraggler={args.straggler}\tbytes={total}")


if __name__ == "__main__":
    main()
