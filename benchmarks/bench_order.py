#!/usr/bin/env python3
"""Sorting a trace's events by a whole number, then a time: `np.lexsort` against one stable sort of complex numbers
(`proton_tui.hatchet.columns.order_by`), on the orders the trace views need, from a real or generated trace's
columns; each order checked equal to lexsort's, best of the runs.

    python benchmarks/bench_order.py FILE [--runs 5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from proton_tui.hatchet.columns import order_by
from proton_tui.hatchet.lanes import WARP
from proton_tui.hatchet.loader import load_profile
from proton_tui.hatchet.trace_tree import _by_warp_start_longest


def best(function, runs: int) -> tuple[float, np.ndarray]:
    found, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        found = min(found, time.perf_counter() - start)
    return found, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    trace = load_profile(options.file).trace
    columns = trace.columns
    on_warp = np.array([lane.kind == WARP for lane in trace.lanes], dtype=bool)[columns.lane]
    warp_events = np.flatnonzero(on_warp)
    groups = columns.lane[warp_events].astype(np.int64) // 2  # two lines a warp, as the tree groups them
    starts, durations = columns.start[warp_events], columns.duration[warp_events]
    shuffled = np.random.default_rng(1).permutation(len(columns))
    lane, start = columns.lane[shuffled], columns.start[shuffled]
    cases = {
        "events by lane, then start, shuffled": (lambda: np.lexsort((start, lane)), lambda: order_by(lane, start)),
        "events by lane, then start, in order already": (lambda: np.lexsort((columns.start, columns.lane)),
                                                         lambda: order_by(columns.lane, columns.start)),
        "warp scopes by warp, then start, the longest first": (lambda: np.lexsort((-durations, starts, groups)),
                                                               lambda: _by_warp_start_longest(groups, starts,
                                                                                              durations)),
    }
    print(f"{options.file.name}: {len(columns):,} events, best of {options.runs}")
    for label, (old, new) in cases.items():
        old_s, old_order = best(old, options.runs)
        new_s, new_order = best(new, options.runs)
        assert np.array_equal(old_order, new_order), label
        print(f"  {label}: lexsort {old_s * 1000:.1f} ms, complex {new_s * 1000:.1f} ms ({old_s / new_s:.1f}×)")


if __name__ == "__main__":
    main()
