#!/usr/bin/env python3
"""A rank set of many captures, as the user meets it from the command line: `proton-tui view DIR --plain` and
`--json`, each in a fresh process, alternated with a generic parse of the same files (`orjson.loads` of each, in a
fresh process: the floor any reader pays), medians of `--repeats`; peak memory (wait4's ru_maxrss) against the
files' total size.

    .venv/bin/python benchmarks/make_rank_set.py CAPTURE DIR --ranks 1024
    .venv/bin/python benchmarks/bench_rank_set.py DIR [--repeats 5] [--baseline TREE]

With --baseline, a source tree of another commit (`git archive main | tar -x -C TREE`) runs the same two commands
(its proton_tui first on PYTHONPATH), alternated with this checkout's: an A/B in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARSE = ("import orjson, pathlib, sys\n"
         "for path in sorted(pathlib.Path(sys.argv[1]).glob('*.hatchet')): orjson.loads(path.read_bytes())\n")


def timed(command: list[str], tree: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS in bytes of one fresh process (with `tree` first on PYTHONPATH), its output thrown
    away."""
    env = {**os.environ, "PYTHONPATH": str(tree)} if tree else None
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: a rank flagged
        sys.exit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return seconds, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a source tree of another commit to run alternated with this")
    args = parser.parse_args()
    cli = str(Path(sys.executable).with_name("proton-tui"))
    files = sorted(args.folder.glob("*.hatchet"))
    size = sum(path.stat().st_size for path in files)
    commands = {"orjson.loads of every file": [sys.executable, "-c", PARSE, str(args.folder)],
                "view DIR --plain": [cli, "view", str(args.folder), "--plain"],
                "view DIR --json": [cli, "view", str(args.folder), "--json"]}
    trees: dict[str, Path | None] = dict.fromkeys(commands)
    if args.baseline:
        for name in ("view DIR --plain", "view DIR --json"):
            commands[f"baseline: {name}"], trees[f"baseline: {name}"] = commands[name], args.baseline.resolve()
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in commands}
    for _ in range(args.repeats):  # alternated: a slower moment of the machine falls on each alike
        for name, command in commands.items():
            results[name].append(timed(command, trees[name]))
    floor = statistics.median(seconds for seconds, _ in results["orjson.loads of every file"])
    print(f"{len(files):,} captures, {size:,} bytes; medians of {args.repeats}")
    summary = {}
    for name, runs in results.items():
        seconds = statistics.median(run[0] for run in runs)
        peak = max(run[1] for run in runs)
        summary[name] = {"seconds": seconds, "of_parse": seconds / floor, "peak_rss": peak, "of_files": peak / size}
        print(f"{name:40} {seconds:6.2f} s ({seconds / floor:4.2f}x the parse)  peak {peak / 1e6:7.1f} MB "
              f"({peak / size:4.2f}x the files)")
    out = HERE / ".results" / "rank_set.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"files": len(files), "bytes": size, "results": summary}, indent=2))


if __name__ == "__main__":
    main()
