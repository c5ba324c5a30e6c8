"""Capture wall time: `proton-tui run` against bare `python -m triton.profiler.proton` on the same payload.

    python benchmarks/bench_capture.py --size 16777216 --iters 200 --repeat 5 [--json OUT]

After one unrecorded warm-up pair (Triton's kernel cache, the probe cache), runs alternate in ABBA order (bare,
tool, tool, bare, …) so drift hits both alike; both run from the repository root. For the tool it records the whole command's
wall time (which includes probing the interpreter: a Python that imports torch and Triton) and the capture
phase alone (run.json's wall_s: the profiled payload process, streamed through the runner). Needs a GPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = ROOT / "payload" / "vecadd.py"


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="16777216")
    parser.add_argument("--iters", default="200")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    payload_args = ["--size", args.size, "--iters", args.iters]
    bare, tool, tool_capture = [], [], []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)

        def run_bare(index: int) -> float:
            return timed([sys.executable, "-m", "triton.profiler.proton", "-n", str(work / f"bare{index}"),
                          "-k", "triton", str(PAYLOAD), *payload_args], ROOT)

        def run_tool(index: int) -> tuple[float, float]:
            out = work / f"tool{index}"
            total = timed([sys.executable, "-m", "proton_tui", "run", *payload_args, "--output", str(out)], ROOT)
            record = json.loads(next(out.glob("*/run.json")).read_text())
            assert record["verdict"] == "PASS", record["message"]
            return total, record["wall_s"]

        run_bare(-1), run_tool(-1)  # warm-up, not recorded
        for index in range(args.repeat):
            if index % 2:
                total, capture = run_tool(index)
                bare.append(run_bare(index))
            else:
                bare.append(run_bare(index))
                total, capture = run_tool(index)
            tool.append(total)
            tool_capture.append(capture)
    summary = {
        "size": int(args.size), "iters": int(args.iters), "repeat": args.repeat,
        "bare_s": bare, "tool_total_s": tool, "tool_capture_s": tool_capture,
        "median_bare_s": statistics.median(bare),
        "median_tool_total_s": statistics.median(tool),
        "median_tool_capture_s": statistics.median(tool_capture),
    }
    summary["capture_ratio"] = summary["median_tool_capture_s"] / summary["median_bare_s"]
    summary["total_ratio"] = summary["median_tool_total_s"] / summary["median_bare_s"]
    summary["mean_ratio_total"] = statistics.mean(tool) / statistics.mean(bare)
    summary["median_outside_capture_s"] = statistics.median(t - c for t, c in zip(tool, tool_capture))
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
