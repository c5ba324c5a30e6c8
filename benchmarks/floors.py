#!/usr/bin/env python3
"""Floors behind README.md's "Where the time goes": what no change in proton_tui/ can go below on this machine.

    .venv/bin/python benchmarks/floors.py FILE.hatchet [--runs 5]

Each measurement runs in fresh interpreters, alternating, and prints the median (min–max) of --runs runs:

- textual floor: a trivial Textual app (one Static and a Footer), started with `App.run_test(size=(120, 40))` and
  waited for as tui_child.py does (no sleeps), then `down` posted and waited for: interpreter start-up +
  `import textual` + Textual's own start.
- proton-tui on a 2-node capture: `tui_child.py` on the sample capture shipped in the package (vecadd_hook): the
  viewer's own start-up with next to no data.
- orjson: `orjson.loads` of FILE in a fresh process (its objects are new memory: page faults included), as the
  measure of the machine's speed at the time (it moves by up to ~1.7x within an hour here).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

TEXTUAL_FLOOR = r"""
import time
T0 = time.perf_counter()
import asyncio
from textual import events
from textual.app import App
from textual.binding import Binding
from textual.widgets import Footer, Static

class Trivial(App):
    BINDINGS = [Binding("down", "noop", "Down")]
    pressed = False
    def compose(self):
        yield Static("hello")
        yield Footer()
    def action_noop(self):
        self.pressed = True

async def settled(pilot, done):
    while not done():
        await pilot._wait_for_screen()
        await asyncio.sleep(0)
    await pilot._wait_for_screen()
    pilot.app.screen._on_timer_update()

async def drive():
    app = Trivial()
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot, lambda: True)
        app.post_message(events.Key("down", None))
        await settled(pilot, lambda: app.pressed)
        print(time.perf_counter() - T0)

asyncio.run(drive())
"""

ORJSON = r"""
import sys, time, orjson
data = open(sys.argv[1], "rb").read()
start = time.perf_counter()
orjson.loads(data)
print(time.perf_counter() - start)
"""

def measure(script: str, args: list[str]) -> float:
    return float(subprocess.run([sys.executable, "-c", script, *args], check=True, capture_output=True, text=True,
                                cwd=HERE.parent).stdout.split()[-1])


def viewer_interactive(capture: Path) -> float:
    out = subprocess.run([sys.executable, str(HERE / "tui_child.py"), str(capture)], check=True,
                         capture_output=True, text=True, cwd=HERE.parent).stdout
    return json.loads(out.strip().splitlines()[-1])["interactive"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    file = str(args.file.resolve())
    sample = HERE.parent / "proton_tui" / "data" / "sample.hatchet"
    measurements = {
        "textual floor (trivial app interactive)": lambda: measure(TEXTUAL_FLOOR, []),
        "proton-tui viewer, 2-node capture, interactive": lambda: viewer_interactive(sample),
        "orjson.loads, fresh process": lambda: measure(ORJSON, [file]),
    }
    rows: dict[str, list[float]] = {label: [] for label in measurements}
    for _ in range(args.runs):  # alternate, so drift on a shared machine hits all alike
        for label, run in measurements.items():
            rows[label].append(run())
    print(f"{args.file.name}, {args.runs} runs each, median (min–max):")
    for label, values in rows.items():
        print(f"  {label:<50} {statistics.median(values):6.3f} s ({min(values):.3f}–{max(values):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
