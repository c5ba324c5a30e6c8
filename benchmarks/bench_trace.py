"""A trace's views timed as ratios to `orjson.loads` of the same file, this checkout (B) against another tree (A, a
`git archive` of an earlier commit), alternating fresh processes, medians of the runs, peak RSS of each process
(and the peak of the summed PSS of a process and the workers it forks), both trees' bytecode compiled first:

- `orjson.loads` of the file, in a process of its own: the generic parse, the reference of every ratio;
- `proton-tui view FILE --plain > /dev/null` and `--json`, from the command to the process's end (their outputs of
  A and B compared byte for byte once);
- with `--tui`: `proton-tui view FILE` in a real terminal (tmux, 160×48), from the command to the timeline drawn
  (an instrumentation trace's first launch, "Launch 1 of"; another trace's lanes, "Timeline:"), then, on an
  instrumentation trace, `]` to the next launch drawn ("Launch 2 of").

    git archive BASE | tar -x -C /tmp/base
    python benchmarks/bench_trace.py FILE --base /tmp/base --runs 5 [--tui]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import tmux_pane  # beside this script
from tmux_pane import tmux

HERE = Path(__file__).resolve().parent
SESSION = "proton-tui-bench-trace"
LOADS = "import orjson, sys, time; d = open(sys.argv[1], 'rb').read(); t = time.perf_counter(); orjson.loads(d); " \
        "print(time.perf_counter() - t)"


def output_of(command: list[str], tree: Path) -> bytes:
    done = subprocess.run(command, capture_output=True, env={**os.environ, "PYTHONPATH": str(tree)}, cwd="/")
    if done.returncode:
        raise SystemExit(f"bench_trace.py: {' '.join(command)} failed: {done.stderr.decode()[-400:]}")
    return done.stdout


def rss_of(command: list[str], tree: Path | None) -> tuple[float, float, float]:
    """Wall seconds and peak RSS (MiB) of one process, read from wait4 (the largest of the process and its workers,
    not their sum), and the peak of the summed PSS of the process and its workers (shared pages counted once),
    sampled every 10 ms."""
    env = {**os.environ, **({"PYTHONPATH": str(tree)} if tree else {})}
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd="/")
    peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss_kib(child.pid) / 1024)
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if status:
        raise SystemExit(f"bench_trace.py: {' '.join(command)} exited with status {status}")
    return wall, usage.ru_maxrss / 1024, peak[0]


def tree_pss_kib(pid: int) -> int:
    """The summed PSS (KiB) of a process and its descendants now (0 for those gone meanwhile)."""
    total, pending = 0, [pid]
    while pending:
        found = pending.pop()
        try:
            for line in Path(f"/proc/{found}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
            for task in Path(f"/proc/{found}/task").iterdir():
                pending.extend(int(kid) for kid in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return total


def until(test, seconds: float, what: str) -> float:
    return tmux_pane.until(SESSION, test, seconds, f"bench_trace.py: {what}")


def tui_run(file: Path, tree: Path, warps: bool) -> dict:
    """The timeline drawn from the command, and `]` to the next launch (an instrumentation trace)."""
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    command = f"PYTHONPATH={tree} {sys.executable} -m proton_tui view {file}"
    start = time.perf_counter()
    # started in / : `-m` puts the working folder first on sys.path, ahead of the tree on PYTHONPATH
    tmux("new-session", "-d", "-c", "/", "-s", SESSION, "-x", "160", "-y", "48", command)
    tmux("set-option", "-s", "escape-time", "0")
    until(lambda s: ("Launch 1 of" if warps else "Timeline:") in s, 300, "the timeline")
    found = {"first_drawn_s": time.perf_counter() - start}
    if warps:
        time.sleep(0.5)
        began = time.perf_counter()
        tmux("send-keys", "-t", SESSION, "]")
        until(lambda s: "Launch 2 of" in s, 60, "the next launch")
        found["next_launch_s"] = time.perf_counter() - began
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--base", type=Path, required=True, help="the tree to compare with (A)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tui", action="store_true")
    parser.add_argument("--warps", action="store_true", help="an instrumentation trace: time `]` too")
    options = parser.parse_args()
    file, trees = options.file.resolve(), {"A": options.base.resolve(), "B": HERE.parent}
    view = [sys.executable, "-m", "proton_tui", "view", str(file)]
    for tree in trees.values():  # bytecode written, as an installed package has it, whatever PYTHONDONTWRITEBYTECODE says
        compileall.compile_dir(tree / "proton_tui", quiet=1)
    outputs = {}
    for label, tree in trees.items():  # once each: the outputs compared, and the files in the page cache
        outputs[label] = {form: output_of([*view, form], tree) for form in ("--plain", "--json")}
    same = {form: outputs["A"][form] == outputs["B"][form] for form in ("--plain", "--json")}
    results: dict[str, dict[str, list]] = {label: {} for label in (*trees, "orjson")}
    for _ in range(options.runs):
        done = subprocess.run([sys.executable, "-c", LOADS, str(file)], capture_output=True, text=True, check=True)
        results["orjson"].setdefault("loads_s", []).append(float(done.stdout))
        results["orjson"].setdefault("rss_mib", []).append(rss_of([sys.executable, "-c", LOADS, str(file)], None)[1])
        for label, tree in trees.items():
            for form in ("--plain", "--json"):
                wall, peak, together = rss_of([*view, form], tree)
                results[label].setdefault(f"{form[2:]}_s", []).append(wall)
                results[label].setdefault(f"{form[2:]}_rss_mib", []).append(peak)
                results[label].setdefault(f"{form[2:]}_pss_all_mib", []).append(together)
            if options.tui:
                for key, value in tui_run(file, tree, options.warps).items():
                    results[label].setdefault(key, []).append(value)
    medians = {label: {key: statistics.median(values) for key, values in found.items()}
               for label, found in results.items()}
    reference = medians["orjson"]["loads_s"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    record = {"file": str(file), "bytes": file.stat().st_size, "commit": commit, "base": str(options.base),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": results, "medians": medians,
              "same_output": same, "load_average": os.getloadavg()}
    out = HERE / ".results" / f"trace_{file.stem}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    size_mib = file.stat().st_size / 2**20
    print(f"{file.name} ({size_mib:.0f} MiB), B = {commit}, A = {options.base}, {options.runs} runs alternated, "
          f"medians; outputs of A and B the same: {same}")
    print(f"orjson.loads: {reference:.2f} s, peak {medians['orjson']['rss_mib']:.0f} MiB")
    for label in trees:
        found = medians[label]
        parts = [f"{key}: {value:.2f} s ({value / reference:.2f}×)" if key.endswith("_s") and key != "next_launch_s"
                 else f"{key}: {value * 1000:.0f} ms" if key == "next_launch_s"
                 else f"{key}: {value:.0f} MiB ({value / size_mib:.2f}× the file)" for key, value in found.items()]
        print(f"{label}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
