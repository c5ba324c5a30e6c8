#!/usr/bin/env python3
"""How long telling apart names that would cut alike takes (`view/names/cut.py` `told_apart`), and what it adds to
the viewer's table: COUNT cutlass-like names of ~150 characters that differ only in their middle, told apart at 22
cells (best of 5, its cache cleared each time); then a capture of COUNT such siblings under ROOT, its table's first
20 rows drawn at 78 cells, the kernel summary's, and again at 85 cells (a resize), against the same with the rule
off (`TOLD_APART_MOST` 0: each name cut alone).

    python benchmarks/bench_names_apart.py [--count 10000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from proton_tui.hatchet import load_profile
from proton_tui.tui.widgets import table_rows
from proton_tui.view.display import Display
from proton_tui.view.names import Names, cut


def name(at: int) -> str:
    return (f"void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_{at:06d}_256x128_8x4_nt_align1_very_long_common_"
            "suffix_for_testing_purposes>(Params)")


def best(call, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        cut._told_apart.cache_clear()
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


def table_times(path: Path, limit: int) -> dict[str, float]:
    """The first 20 rows drawn at 78 cells (tree), the kernel summary's, and the tree's again at 85 cells."""
    table_rows.TOLD_APART_MOST = limit
    cut._told_apart.cache_clear()
    profile = load_profile(path)
    names = Names.demangled(profile.names)
    found = {}
    started = time.perf_counter()
    model = table_rows.TableRows(Display(profile, names))
    [model.text(row, 78) for row in range(20)]
    found["tree_first_rows_s"] = time.perf_counter() - started
    started = time.perf_counter()
    model.show_kernels = True
    model.rebuild()
    [model.text(row, 78) for row in range(20)]
    found["kernels_s"] = time.perf_counter() - started
    model.show_kernels = False
    model.rebuild()
    started = time.perf_counter()
    [model.text(row, 85) for row in range(20)]
    found["resized_s"] = time.perf_counter() - started
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    options = parser.parse_args()
    names = [name(at) for at in range(options.count)]
    found = {"told_apart_s": best(lambda: cut.told_apart(names, 22))}
    kernel = {"time (ns)": 1000, "count": 1, "device_id": 0, "device_type": "CUDA"}
    tree = [{"frame": {"name": "ROOT", "type": "function"}, "metrics": {},
             "children": [{"frame": {"name": one, "type": "function"}, "metrics": kernel, "children": []}
                          for one in names]}, {}]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "siblings.hatchet"
        path.write_text(json.dumps(tree))
        found["told_apart"] = table_times(path, cut.TOLD_APART_MOST)
        found["each_cut_alone"] = table_times(path, 0)
    print(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
