#!/usr/bin/env python3
"""What-if measurements behind the floors in README.md's "Where the time goes" (nothing in proton_tui/ changes).

    .venv/bin/python benchmarks/floors.py FILE.hatchet [--runs 5]

Each measurement runs in fresh interpreters, alternating, and prints the median (min–max) of --runs runs:

- textual floor: a trivial Textual app (one Static and a Footer), started with `App.run_test(size=(120, 40))` like
  tui_child.py, `pilot.pause()`, then `down` pressed: interpreter start-up + `import textual` + Textual's own start.
- proton-tui on a 2-node capture: `tui_child.py` on the sample capture shipped in the package (vecadd_hook): the
  viewer's own start-up with next to no data.
- orjson: `orjson.loads` of FILE in a fresh process (its objects are new memory: page faults included).
- forked loader: the design the README weighs for FILE: fork before importing Textual; the child runs
  `load_profile` and `kernel_stats()`, packs the per-node arrays (names joined, numbers as `array` bytes, metrics
  marshalled) into a pipe; the parent imports proton_tui's TUI meanwhile, then reads and unpacks. Printed: when the
  profile's arrays are usable in the UI process (seconds since start), before any Textual start-up.
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
from textual.app import App
from textual.binding import Binding
from textual.widgets import Footer, Static

class Trivial(App):
    BINDINGS = [Binding("down", "noop", "Down")]
    def compose(self):
        yield Static("hello")
        yield Footer()
    def action_noop(self):
        pass

async def drive():
    async with Trivial().run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("down")
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

FORKED_LOADER = r"""
import time
T0 = time.perf_counter()
import gc, marshal, os, sys, threading
from array import array

path = sys.argv[1]
read_end, write_end = os.pipe()
child = os.fork()
if child == 0:
    os.close(read_end)
    from proton_tui.hatchet import load_profile
    profile = load_profile(path)
    profile.kernel_stats()
    gc.disable()
    arrays = marshal.dumps((
        "\0".join(profile.names), "\0".join(profile.devices), bytes(profile.has_own), bytes(profile.is_kernel),
        *(array("q", values).tobytes() for values in (profile.parents, profile.depths, profile.launches,
                                                       profile.own_launches)),
        *(array("d", values).tobytes() for values in (profile.own, profile.inclusive, profile.bytes,
                                                       profile.own_bytes)),
    ))
    metrics = marshal.dumps(profile.metrics)
    with os.fdopen(write_end, "wb") as pipe:
        for blob in (arrays, metrics):
            pipe.write(len(blob).to_bytes(8, "little"))
            pipe.write(blob)
    os._exit(0)
os.close(write_end)
import proton_tui.cli, proton_tui.tui.app  # what `proton-tui view` imports meanwhile
blobs = []

def drain():
    with os.fdopen(read_end, "rb") as pipe:
        for _ in range(2):
            blobs.append(pipe.read(int.from_bytes(pipe.read(8), "little")))

reader = threading.Thread(target=drain)
reader.start()
reader.join()
gc.disable()
names, devices, has_own, is_kernel, *packed = marshal.loads(blobs[0])
names, devices = names.split("\0"), devices.split("\0")
has_own, is_kernel = [b == 1 for b in has_own], [b == 1 for b in is_kernel]
numbers = [array("q", blob) for blob in packed[:4]] + [array("d", blob) for blob in packed[4:]]
children = [[] for _ in names]
parents = numbers[0]
for node in range(1, len(names)):
    children[parents[node]].append(node)
metrics = marshal.loads(blobs[1])
os.waitpid(child, 0)
print(time.perf_counter() - T0)
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
        "forked loader: profile usable in the UI process": lambda: measure(FORKED_LOADER, [file]),
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
