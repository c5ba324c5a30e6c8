"""A/B of the columnar libraries for a trace's events: numpy arrays against the standard library (`array` columns,
`sorted`, dicts), on the operations every trace view needs, from the same decoded file: the columns made from the
decoded events, the events ordered by lane then start, each lane's kernels merged into busy time and gaps, and an
instrumentation trace's per-scope samples (a warp's cycles in a scope, summed per launch) with their median and
p99. Each design in a fresh process, alternating, medians of the runs; peak RSS from the child.

    python benchmarks/ab_columns.py FILE --runs 5
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from array import array
from itertools import groupby
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def decoded(path: Path) -> list:
    from proton_tui.hatchet.chrome_trace import EVENTS, TRACE_INDEX

    pieces = TRACE_INDEX.decode(path.read_bytes()).traceEvents
    return [event for event in EVENTS.decode(b"[" + b",".join(pieces) + b"]") if event.ph == "X"]


def with_numpy(events: list) -> dict:
    import numpy as np

    times = {}
    began = time.perf_counter()
    lanes: dict = {}
    names: dict = {}
    lane = np.array([lanes.setdefault((e.pid, e.tid), len(lanes)) for e in events], dtype=np.int32)
    name = np.array([names.setdefault(e.name, len(names)) for e in events], dtype=np.int32)
    start = np.array([e.ts for e in events]) * 1000.0
    duration = np.array([e.dur for e in events]) * 1000.0
    times["columns"] = time.perf_counter() - began
    began = time.perf_counter()
    order = np.lexsort((start, lane))
    lane, name, start, duration = lane[order], name[order], start[order], duration[order]
    end = start + duration
    times["order"] = time.perf_counter() - began
    began = time.perf_counter()
    distinct, rank = np.unique(end, return_inverse=True)
    keys = lane.astype(np.int64) * len(distinct) + rank
    reach = distinct[np.maximum.accumulate(keys) - lane.astype(np.int64) * len(distinct)]
    opens = np.r_[True, (lane[1:] != lane[:-1]) | (start[1:] > reach[:-1])]
    closes = np.flatnonzero(np.r_[opens[1:], True])
    busy = float((reach[closes] - start[opens]).sum())
    times["busy"] = time.perf_counter() - began
    began = time.perf_counter()
    cycles = np.rint(duration).astype(np.int64)
    key = name.astype(np.int64) * (int(lane.max()) + 1) + lane
    by = np.argsort(key, kind="stable")
    firsts = np.flatnonzero(np.r_[True, key[by][1:] != key[by][:-1]])
    sums = np.add.reduceat(cycles[by], firsts)
    group_name = key[by][firsts] // (int(lane.max()) + 1)
    stats = {}
    for scope in np.unique(group_name).tolist():
        values = np.sort(sums[group_name == scope])
        stats[scope] = (int(values[len(values) // 2]), int(values[max(1, math.ceil(0.99 * len(values))) - 1]))
    times["scopes"] = time.perf_counter() - began
    return {"times": times, "busy": busy, "stats": stats}


def with_stdlib(events: list) -> dict:
    times = {}
    began = time.perf_counter()
    lanes: dict = {}
    names: dict = {}
    lane = array("i", [lanes.setdefault((e.pid, e.tid), len(lanes)) for e in events])
    name = array("i", [names.setdefault(e.name, len(names)) for e in events])
    start = array("d", [e.ts * 1000.0 for e in events])
    duration = array("d", [e.dur * 1000.0 for e in events])
    times["columns"] = time.perf_counter() - began
    began = time.perf_counter()
    order = sorted(range(len(start)), key=lambda i: (lane[i], start[i]))
    lane = array("i", [lane[i] for i in order])
    name = array("i", [name[i] for i in order])
    start = array("d", [start[i] for i in order])
    duration = array("d", [duration[i] for i in order])
    times["order"] = time.perf_counter() - began
    began = time.perf_counter()
    busy = 0.0
    for _, run in groupby(range(len(start)), key=lane.__getitem__):
        current = None
        for i in run:
            begin, finish = start[i], start[i] + duration[i]
            if current is None:
                current = [begin, finish]
            elif begin > current[1]:
                busy += current[1] - current[0]
                current = [begin, finish]
            else:
                current[1] = max(current[1], finish)
        busy += current[1] - current[0]
    times["busy"] = time.perf_counter() - began
    began = time.perf_counter()
    sums: dict = {}
    for i in range(len(start)):
        key = (name[i], lane[i])
        sums[key] = sums.get(key, 0) + round(duration[i])
    by_scope: dict = {}
    for (scope, _), value in sums.items():
        by_scope.setdefault(scope, []).append(value)
    stats = {}
    for scope, values in by_scope.items():
        values.sort()
        stats[scope] = (values[len(values) // 2], values[max(1, math.ceil(0.99 * len(values))) - 1])
    times["scopes"] = time.perf_counter() - began
    return {"times": times, "busy": busy, "stats": stats}


def child(path: Path, design: str) -> None:
    events = decoded(path)
    found = (with_numpy if design == "numpy" else with_stdlib)(events)
    found["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    found["stats"] = {str(key): value for key, value in sorted(found["stats"].items())}
    print(json.dumps(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", choices=("numpy", "stdlib"))
    options = parser.parse_args()
    if options.child:
        child(options.file, options.child)
        return
    results: dict[str, list[dict]] = {"numpy": [], "stdlib": []}
    for _ in range(options.runs):
        for design in results:
            done = subprocess.run([sys.executable, __file__, str(options.file), "--child", design], check=True,
                                  capture_output=True, text=True)
            results[design].append(json.loads(done.stdout))
    same = results["numpy"][0]["stats"] == results["stdlib"][0]["stats"]
    print(f"{options.file.name}: {options.runs} runs each, alternating; medians; same statistics: {same}")
    print("| design | columns | lane-then-start order | busy per lane | per-scope samples and stats | total | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for design, runs in results.items():
        parts = {key: statistics.median(run["times"][key] for run in runs) for key in runs[0]["times"]}
        total = statistics.median(sum(run["times"].values()) for run in runs)
        rss = statistics.median(run["rss_mib"] for run in runs)
        print(f"| {design} | " + " | ".join(f"{value * 1000:.0f} ms" for value in parts.values())
              + f" | {total * 1000:.0f} ms | {rss:.0f} MiB |")


if __name__ == "__main__":
    main()
