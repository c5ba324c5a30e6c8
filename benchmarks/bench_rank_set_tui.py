#!/usr/bin/env python3
"""A rank set of many captures in the viewer, in a real terminal (tmux, 200×50 and 80×24), a fresh process per run:
the time from the command to the drawn rank set (the ranks' table and the kernel table with its first kernel), then
how fast it answers: `s` three times (the kernel table by max, by name, and back by max ÷ median: each until its
title says so), `down` five times (each until the details show the next kernel), `Enter` (until the kernel on
every rank is drawn as share bars) and `Escape` (until the kernel table is back); the screen polled every 5 ms (the
poll itself takes ~3 ms). Then the viewer's peak RSS (VmHWM of its process and any child it started, read from /proc
before it quits).

    .venv/bin/python benchmarks/make_rank_set.py CAPTURE DIR --ranks 1024
    .venv/bin/python benchmarks/bench_rank_set_tui.py DIR [--runs 5] [--sizes 200x50,80x24]

Writes benchmarks/.results/rank_set_tui.json (git-ignored) and prints medians and maxima.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import tmux_pane  # beside this script
from tmux_pane import screen, tmux

HERE = Path(__file__).resolve().parent
SESSION = "proton-tui-bench-ranks"
SORT_TITLES = ("Kernels by max─", "Kernels by name", "Kernels by max/med")  # what `s` cycles through, from the first


def until(test, seconds: float, what: str) -> float:
    return tmux_pane.until(SESSION, test, seconds, f"bench_rank_set_tui.py: {what}")


def press(key: str, test, what: str) -> float:
    start = time.perf_counter()
    tmux("send-keys", "-t", SESSION, key)
    until(test, 30, what)
    return time.perf_counter() - start


def spread(text: str) -> str | None:
    """The details' spread line (the selected kernel's min – max, median and slowest rank)."""
    return next((line for line in text.splitlines() if "spread  " in line), None)


def drawn(text: str) -> bool:
    """The rank set on the terminal: its summary, the ranks' table, and the kernel table's first kernel."""
    return "ranks (ranks from" in text and "Kernels by max/med" in text and "rank 617" in text


def peak_rss(pid: int) -> int:
    """VmHWM of a process and every process under it, summed (bytes)."""
    total = 0
    for entry in [pid, *descendants(pid)]:
        try:
            with open(f"/proc/{entry}/status") as status:
                total += next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:")), 0)
        except OSError:
            pass
    return total


def descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def one_run(command: list[str], width: int, height: int) -> dict:
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    start = time.perf_counter()
    tmux("new-session", "-d", "-s", SESSION, "-x", str(width), "-y", str(height), "exec " + " ".join(command))
    tmux("set-option", "-s", "escape-time", "0")  # tmux would hold an Escape 500 ms to see if a sequence follows
    until(drawn, 120, "the rank set")
    result: dict = {"drawn_s": time.perf_counter() - start}
    pid = int(tmux("display", "-p", "-t", SESSION, "#{pane_pid}"))
    time.sleep(1.0)  # the readable names land after the first paint: let that repaint pass
    result["sort_s"] = [press("s", lambda s, title=title: title in s, f"the kernels by {title}")
                        for title in SORT_TITLES]
    moves = []
    before = spread(screen(SESSION))
    for _ in range(5):
        moves.append(press("Down", lambda s, b=before: spread(s) not in (b, None), "a move down"))
        before = spread(screen(SESSION))
    result["move_s"] = moves
    result["enter_s"] = press("Enter", lambda s: "% of rank" in s, "the kernel on every rank")
    result["back_s"] = press("Escape", lambda s: "% of rank" not in s and "max/med" in s, "the kernel table again")
    result["peak_rss"] = peak_rss(pid)
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="200x50,80x24")
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("proton-tui")))
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench_rank_set_tui.py: needs tmux")
    files = sorted(args.folder.glob("*.hatchet"))
    size = sum(path.stat().st_size for path in files)
    command = [args.command, "view", str(args.folder.resolve())]
    sizes = [tuple(map(int, text.split("x"))) for text in args.sizes.split(",")]
    runs: dict[str, list[dict]] = {f"{w}x{h}": [] for w, h in sizes}
    for _ in range(args.runs):  # the sizes alternated: a slower moment of the machine falls on each alike
        for width, height in sizes:
            runs[f"{width}x{height}"].append(one_run(command, width, height))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout
    record = {"folder": str(args.folder), "files": len(files), "bytes": size, "commit": commit.strip(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": os.cpu_count(),
              "load": os.getloadavg(), "runs": runs}
    out = HERE / ".results" / "rank_set_tui.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{len(files):,} captures ({size:,} bytes), commit {record['commit']}, {record['date']}, {args.runs} runs "
          f"per size, load average {record['load'][0]:.1f}")
    for name, size_runs in runs.items():
        print(f"{name}:")
        for key, label in (("drawn_s", "command → rank set drawn"), ("sort_s", "s → kernel table re-sorted"),
                           ("move_s", "down → next kernel's details"), ("enter_s", "Enter → share bars drawn"),
                           ("back_s", "Escape → kernel table again")):
            values = [v for run in size_runs for v in (run[key] if isinstance(run[key], list) else [run[key]])]
            print(f"  {label}: median {statistics.median(values) * 1000:,.0f} ms, max {max(values) * 1000:,.0f} ms "
                  f"({len(values)} keystrokes)" if key != "drawn_s" else
                  f"  {label}: median {statistics.median(values):.2f} s, max {max(values):.2f} s")
        peak = max(run["peak_rss"] for run in size_runs)
        print(f"  peak RSS {peak / 1e6:,.1f} MB ({peak / size:.2f}x the files)")


if __name__ == "__main__":
    main()
