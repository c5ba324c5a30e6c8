#!/usr/bin/env python3
"""Where the time of opening a capture goes: load_profile's phases and the per-repaint costs, one process.

    .venv/bin/python benchmarks/breakdown.py FILE [--no-gc]

The phases are those of reading a capture whole (source.mapped, decode.parse, reader._index, with_inclusive, so it
may need updating when they change); load_profile itself is timed too (in pieces from 2 x pieces.PIECE_BYTES).
--no-gc runs everything with the cyclic garbage collector disabled, to show what GC costs.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path


def timed(label: str, fn, *args, repeat: int = 1):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - start)
    print(f"  {label:<58} {best * 1000:10.1f} ms", flush=True)
    return result


def main() -> int:
    path = Path(sys.argv[1])
    if "--no-gc" in sys.argv:
        gc.disable()
    print(f"{path.name}  ({path.stat().st_size / 1e6:,.1f} MB)  gc {'off' if '--no-gc' in sys.argv else 'on'}")
    start = time.perf_counter()
    from proton_tui import hatchet
    from proton_tui.hatchet import decode, flatten, pieces, reader, source
    from proton_tui.output import details
    from proton_tui.view import formatting

    print(f"  {'import proton_tui.hatchet, output.details':<58} {(time.perf_counter() - start) * 1000:10.1f} ms")
    with source.mapped(path) as data:
        document = timed("_parse (orjson.loads of the memory-mapped file)", decode.parse, path, data)
    tree, device_info = document
    inclusive = flatten.with_inclusive
    spent = {}

    def measured_inclusive(profile):
        begin = time.perf_counter()
        result = inclusive(profile)
        spent["inclusive"] = time.perf_counter() - begin
        return result

    flatten.with_inclusive = measured_inclusive
    begin = time.perf_counter()
    profile = reader._index(path, tree, device_info, False)
    total = time.perf_counter() - begin
    flatten.with_inclusive = inclusive
    label = "_index without _with_inclusive (validate + flatten)"
    print(f"  {label:<58} {(total - spent['inclusive']) * 1000:10.1f} ms")
    print(f"  {'_with_inclusive':<58} {spent['inclusive'] * 1000:10.1f} ms")
    del tree, document
    print(f"  nodes loaded: {profile.node_count:,}")
    how = "in pieces" if path.stat().st_size >= 2 * pieces.PIECE_BYTES else "whole"
    timed(f"load_profile, as `view --json` runs it ({how})", hatchet.load_profile, path)
    timed("kernel_stats() (first call, then cached)", profile.kernel_stats)
    timed("device_names() (one call)", profile.device_names, repeat=3)
    timed("has_bytes (one call)", lambda: profile.has_bytes, repeat=3)
    timed("columns(profile)", formatting.columns, profile, repeat=3)
    timed("header_line(profile)", details.header_line, profile, repeat=3)
    rows = [0] + profile.sorted_children(0)
    rows += [kid for node in rows[1:] for kid in profile.sorted_children(node)]
    rows = rows[:38]
    timed(f"node_cells for one screen ({len(rows)} rows)", lambda: [formatting.node_cells(profile, n) for n in rows])
    timed("tree_text of the first 1,000 nodes' cells (x1000 node_cells)",
          lambda: [formatting.node_cells(profile, n) for n in range(min(1000, profile.node_count))])
    try:
        from proton_tui.tui.widgets.profile_table import ProfileTable

        timed("import textual + ProfileTable(profile) (construct)", ProfileTable, profile)
    except Exception as error:  # the TUI may be mid-change
        print(f"  ProfileTable: {type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
