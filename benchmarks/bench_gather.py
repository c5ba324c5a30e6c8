#!/usr/bin/env python3
"""The reading thread's work once a large trace's workers are done, and one worker's decode: trees alternated in
fresh processes, medians and every run printed. Four workers decode the trace (forked whatever the machine's cores);
once their columns are in hand, what follows is timed: the columns taken in and put in order (`trace`), the warps
(`warp_trace`) and the first launch's statistics. Apart, the first quarter of the trace decoded as a worker decodes it.

    git archive BASE proton_tui | tar -x -C /tmp/base
    python benchmarks/bench_gather.py TRACE A=/tmp/base B=. --runs 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

GATHER = r"""
import sys, time
from pathlib import Path
from proton_tui.hatchet import split_read
split_read.usable_cpus = lambda: split_read.MAX_WORKERS  # four workers, on any machine
from proton_tui.hatchet import pending_capture
import proton_tui.view.warps as warps
pending = pending_capture(Path(sys.argv[1]))
assert pending.decoded_by_workers
time.sleep(float(sys.argv[2]))  # the workers done
marks = {}
def first(trace):
    marks["trace"] = time.perf_counter()
    found = warps.warp_trace(trace, None)
    marks["warps"] = time.perf_counter()
    found.launches[0]
    marks["launch"] = time.perf_counter()
    raise SystemExit
start = time.perf_counter()
try:
    pending.finish(first)
except SystemExit:
    pass
print(marks["trace"] - start, marks["warps"] - marks["trace"], marks["launch"] - marks["warps"])
"""

DECODE = r"""
import os, sys, time
from pathlib import Path
from proton_tui.hatchet import split_read
fd = os.open(sys.argv[1], os.O_RDONLY)
read = split_read.SplitRead.__new__(split_read.SplitRead)
read.fd, read.size = fd, os.fstat(fd).st_size
start, end = read._stretches(split_read.MAX_WORKERS)[0]
began = time.perf_counter()
assert split_read._decode(Path(sys.argv[1]), fd, start, end, False) is not None
print(time.perf_counter() - began)
"""

PARTS = ("taken in and `trace`", "`warp_trace`", "launch 1", "the reading thread's work", "a quarter decoded")


def one_run(trace: Path, tree: Path, wait: float) -> list[float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    gathered = subprocess.run([sys.executable, "-c", GATHER, str(trace), str(wait)], capture_output=True, text=True,
                              env=env, cwd="/", check=True).stdout.split()
    decoded = subprocess.run([sys.executable, "-c", DECODE, str(trace)], capture_output=True, text=True, env=env,
                             cwd="/", check=True).stdout.split()
    parts = [float(value) for value in gathered]
    return [*parts, sum(parts), float(decoded[0])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("trees", nargs="+", help="LABEL=DIR: a folder holding the proton_tui to run")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--wait", type=float, default=3.0, help="seconds given to the workers before the work")
    options = parser.parse_args()
    trees = {label: Path(folder).resolve() for label, _, folder in (tree.partition("=") for tree in options.trees)}
    found: dict[str, list[list[float]]] = {label: [] for label in trees}
    for _ in range(options.runs):
        for label, tree in trees.items():
            found[label].append(one_run(options.trace.resolve(), tree, options.wait))
    for label, runs in found.items():
        for at, name in enumerate(PARTS):
            values = [run[at] for run in runs]
            print(f"{label} {name}: median {statistics.median(values) * 1000:.1f} ms  "
                  f"({' '.join(f'{value * 1000:.1f}' for value in values)})")


if __name__ == "__main__":
    main()
