#!/usr/bin/env python3
"""A/B of two checkouts of proton-tui on one capture, in alternating fresh processes: the viewer's time to
interactive (each tree's own benchmarks/tui_child.py) and the peak of RSS summed over the process and its children
(sampled every 20 ms), as the loader designs in benchmarks/README.md were compared.

    python benchmarks/ab_loader.py CAPTURE PAIRS TREE_A TREE_B   # e.g. a `git worktree` of another commit, and .
"""

import json
import os
import statistics
import subprocess
import sys
import time


def tree_rss(pid: int) -> int:
    total, pids = 0, [pid]
    try:
        pids += [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def run(tree: str, capture: str) -> tuple[float | None, int]:
    env = dict(os.environ, PYTHONPATH=tree)
    proc = subprocess.Popen([sys.executable, f"{tree}/benchmarks/tui_child.py", capture], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=tree, text=True)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.02)
    lines = proc.stdout.read().splitlines()
    data = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    return data.get("interactive"), peak


def main() -> None:
    capture, pairs = sys.argv[1], int(sys.argv[2])
    trees = {"A": os.path.abspath(sys.argv[3]), "B": os.path.abspath(sys.argv[4])}
    results: dict[str, list] = {name: [] for name in trees}
    for i in range(pairs):
        for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
            results[name].append(run(trees[name], capture))
            print(name, results[name][-1], flush=True)
    for name, rows in results.items():
        times, peaks = [t for t, _ in rows if t], [p for _, p in rows]
        print(f"{name} ({trees[name]}): interactive median {statistics.median(times):.3f} s "
              f"({min(times):.3f}-{max(times):.3f}), peak RSS summed median {statistics.median(peaks) / 2**20:,.0f} MiB "
              f"(max {max(peaks) / 2**20:,.0f})")
    pairs_ab = list(zip(results["A"], results["B"]))
    faster = sum(1 for (a, _), (b, _) in pairs_ab if a and b and b < a)
    change = statistics.median([b - a for (a, _), (b, _) in pairs_ab if a and b])
    print(f"B faster in {faster} of {pairs} pairs; median difference B - A {change:+.3f} s")


if __name__ == "__main__":
    main()
