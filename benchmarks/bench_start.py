#!/usr/bin/env python3
"""Start-up of the command line, A/B: `proton-tui --help`, `proton-tui view --help` (and any other argv) from this
checkout against the tree of another commit (`git archive`, unpacked in a temporary folder), in alternating fresh
processes of the same interpreter, both trees byte-compiled first. Prints the medians, min–max and the difference
of the medians per command, and the raw seconds as JSON with --json.

    python benchmarks/bench_start.py --base COMMIT [--pairs 20] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
COMMANDS = (["--help"], ["view", "--help"])
CHILD = "import sys; sys.path.insert(0, sys.argv[1]); sys.argv = ['proton-tui', *sys.argv[2:]]; " \
        "from proton_tui.entry import main; main()"


def unpack(commit: str, into: Path) -> Path:
    """The tree of ``commit`` in ``into`` (the package only)."""
    archive = subprocess.run(["git", "-C", str(HERE), "archive", commit, "proton_tui"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def once(tree: Path, argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD, str(tree), *argv], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare this checkout against")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-start-") as folder:
        base = unpack(args.base, Path(folder))
        for tree in (base, HERE):
            compileall.compile_dir(str(tree / "proton_tui"), quiet=1)
        results = {}
        for argv in COMMANDS:
            once(base, argv), once(HERE, argv)  # warm the file cache
            times = {"base": [], "this": []}
            for _ in range(args.pairs):
                times["base"].append(once(base, argv))
                times["this"].append(once(HERE, argv))
            results[" ".join(argv)] = times
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for command, times in results.items():
        base, this = statistics.median(times["base"]), statistics.median(times["this"])
        print(f"proton-tui {command}: base {base * 1e3:.0f} ms ({min(times['base']) * 1e3:.0f}–"
              f"{max(times['base']) * 1e3:.0f}), this {this * 1e3:.0f} ms ({min(times['this']) * 1e3:.0f}–"
              f"{max(times['this']) * 1e3:.0f}), difference {(this - base) * 1e3:+.1f} ms "
              f"(medians of {args.pairs} alternating pairs)")


if __name__ == "__main__":
    main()
