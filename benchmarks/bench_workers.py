#!/usr/bin/env python3
"""How many workers decode a large trace best (`proton_tui/hatchet/split_read.py`): `open_capture(FILE)` in a fresh
process with `split_read.MAX_WORKERS` set to each count (no more than the machine's cores; 0: one reader), the
counts alternated, the read's medians and runs printed.

    python benchmarks/bench_workers.py FILE [--counts 0 4 8 12 16] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

ONE = """
import sys, time
from proton_tui.hatchet import split_read
count = int(sys.argv[2])
if count:
    split_read.MAX_WORKERS, split_read.MIN_CPUS = count, 1  # as many as the machine's cores allow
else:
    split_read.MIN_CPUS = 1 << 20
start = time.perf_counter()
from proton_tui.hatchet import open_capture
open_capture(sys.argv[1])
print(time.perf_counter() - start)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--counts", type=int, nargs="+", default=[0, 4, 8, 12, 16])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    found: dict[int, list[float]] = {}
    for _ in range(options.runs):
        for count in options.counts:
            done = subprocess.run([sys.executable, "-c", ONE, options.file, str(count)], capture_output=True,
                                  text=True, check=True)
            found.setdefault(count, []).append(float(done.stdout))
    print(json.dumps({("one reader" if count == 0 else f"{count} workers"):
                      {"median_s": round(statistics.median(runs), 3), "runs_s": [round(run, 3) for run in runs]}
                      for count, runs in found.items()}, indent=1))


if __name__ == "__main__":
    main()
