"""The warp timeline's work on an instrumentation trace, in one process (no terminal): `load_profile` (the trace
and the tree of its scopes), then `warp_trace` (launches, SM → CTA → warp groups, per-scope statistics), each
timed, the best of `--runs`.

    python benchmarks/make_instr_trace.py --ctas 1024 --launches 21 --out DIR
    python benchmarks/bench_warps.py DIR/instr_trace_1024x21.chrome_trace
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from proton_tui.hatchet import load_profile
from proton_tui.view.warps import warp_trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    loads, warps = [], []
    for _ in range(options.runs):
        start = time.perf_counter()
        profile = load_profile(options.trace)
        loads.append(time.perf_counter() - start)
        start = time.perf_counter()
        found = warp_trace(profile.trace, 1_980_000)
        warps.append(time.perf_counter() - start)
    print(f"{len(profile.trace.events):,} events, {len(found.launches)} launches: load_profile {min(loads):.2f} s "
          f"(max {max(loads):.2f}), warp_trace {min(warps):.2f} s (max {max(warps):.2f})")


if __name__ == "__main__":
    main()
