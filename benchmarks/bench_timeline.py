"""The timeline's work in one process (no terminal) on a trace: `load_profile`, then a layout of the whole trace and
of 1/1000 of it, 140 cells wide, twice each (the first builds the lanes' index), then `n` (the next launch of the
same kernel) with its details, twice (the first sorts each kernel's launches).

    python benchmarks/make_trace.py 1000000 --out DIR
    python benchmarks/bench_timeline.py DIR/proton_trace_1000000_seed0.chrome_trace
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from proton_tui.hatchet import load_profile
from proton_tui.output.details import event_details
from proton_tui.view.names import Names
from proton_tui.view.timeline import TimelineLayout

WIDTH = 140


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    args = parser.parse_args()
    seconds, profile = timed(lambda: load_profile(args.trace))
    trace = profile.trace
    print(f"load_profile: {seconds:.2f} s, {len(trace.events):,} events on {len(trace.lanes)} lanes")
    middle = (trace.start + trace.end) / 2
    windows = {"the whole trace": (trace.start, trace.end),
               "1/1000 of it": (middle, middle + (trace.end - trace.start) / 1000)}
    layouts = {}
    for label, (start, end) in windows.items():
        for attempt in ("first", "then"):
            seconds, layouts[label] = timed(lambda start=start, end=end: TimelineLayout(trace, start, end, WIDTH))
            print(f"layout of {label}, {attempt}: {seconds * 1000:.1f} ms, "
                  f"{sum(len(row) for row in layouts[label].rows)} bars")
    event = next(bar.events[0] for row in layouts["the whole trace"].rows for bar in row
                 if trace.events[bar.events[0]].category == "kernel")
    for attempt in ("first", "then"):
        seconds, _ = timed(lambda: (trace.next_launch(event), event_details(trace, event, Names())))
        print(f"n and its details, {attempt}: {seconds * 1000:.1f} ms")


if __name__ == "__main__":
    main()
