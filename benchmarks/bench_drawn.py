"""`proton-tui view FILE` in a real terminal (tmux, 160×48, started in `/`), trees alternated in fresh processes:
from the command to the first frame ("Reading") and to TEXT on the pane (an instrumentation trace's "Launch 1 of",
another trace's "Timeline:"), medians and every run; each tree's bytecode compiled first, as an installed package has
it.

    git archive BASE proton_tui | tar -x -C /tmp/base
    python benchmarks/bench_drawn.py FILE "Launch 1 of" A=/tmp/base B=. --runs 7
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tmux_pane import tmux, until  # beside this script

SESSION = "proton-tui-bench-drawn"
TIMEOUT_S = 120


def one_run(file: Path, tree: Path, text: str) -> tuple[float, float]:
    """Seconds from the command to the first frame and to `text` drawn."""
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    # started in / : `-m` puts the working folder first on sys.path, ahead of the tree on PYTHONPATH
    command = f"PYTHONPATH={tree} {sys.executable} -m proton_tui view {file}"
    start = time.perf_counter()
    tmux("new-session", "-d", "-c", "/", "-s", SESSION, "-x", "160", "-y", "48", command)
    until(SESSION, lambda shown: "Reading" in shown or text in shown, TIMEOUT_S, "bench_drawn.py: the first frame")
    first = time.perf_counter() - start
    until(SESSION, lambda shown: text in shown, TIMEOUT_S, f"bench_drawn.py: {text!r}")
    drawn = time.perf_counter() - start
    time.sleep(0.3)
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    time.sleep(0.7)  # the process and its workers gone before the next run
    return first, drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("text")
    parser.add_argument("trees", nargs="+", help="LABEL=DIR: a folder holding the proton_tui to run")
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()
    trees = {label: Path(folder).resolve() for label, _, folder in (tree.partition("=") for tree in options.trees)}
    for tree in trees.values():  # bytecode written, as an installed package has it, whatever PYTHONDONTWRITEBYTECODE says
        compileall.compile_dir(tree / "proton_tui", quiet=1)
    found: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
    for _ in range(options.runs):
        for label, tree in trees.items():
            found[label].append(one_run(options.file.resolve(), tree, options.text))
    for label, runs in found.items():
        for name, at in (("first frame", 0), (repr(options.text), 1)):
            values = [run[at] for run in runs]
            print(f"{label} {name}: median {statistics.median(values):.3f} s  "
                  + " ".join(f"{value:.3f}" for value in values))


if __name__ == "__main__":
    main()
