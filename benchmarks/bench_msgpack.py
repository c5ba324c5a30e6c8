"""Which decoder reads `.hatchet_msgpack`: msgspec (what proton-tui uses, typed into its Structs or untyped) against
the `msgpack` package (the reference), on one file; each decode in a fresh process, its time and its peak RSS.
Also `proton-tui view --json` end to end on the msgpack file and on a JSON twin, when one is given.

    python benchmarks/bench_msgpack.py benchmarks/.captures/proton_100000_seed0.hatchet_msgpack \\
        --twin benchmarks/.captures/proton_100000_seed0.hatchet --runs 5

Needs the `msgpack` package in the running interpreter (it is not a dependency of proton-tui).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

DECODERS = {
    "msgspec typed (proton-tui)": "from proton_tui.hatchet.decode import MSGPACK_DOCUMENT as d; decode = d.decode",
    "msgspec untyped": "import msgspec; decode = msgspec.msgpack.decode",
    "msgpack (reference)": "import msgpack, functools; decode = functools.partial(msgpack.unpackb, raw=False)",
}
CHILD = """
import gc, resource, sys, time
{setup}
data = open(sys.argv[1], "rb").read()
gc.disable()
start = time.perf_counter()
document = decode(data)
elapsed = time.perf_counter() - start
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def decode_once(setup: str, path: Path) -> tuple[float, int]:
    done = subprocess.run([sys.executable, "-c", CHILD.format(setup=setup), str(path)], capture_output=True,
                          text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    seconds, rss_kib = done.stdout.split()
    return float(seconds), int(rss_kib)


def view_once(command: str, path: Path) -> float:
    start = time.perf_counter()
    subprocess.run([command, "view", str(path), "--json"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("--twin", type=Path, help="the same capture as JSON")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--command", default=shutil.which("proton-tui") or "proton-tui",
                        help="the proton-tui to time end to end (default: the one on PATH)")
    args = parser.parse_args()
    size = args.capture.stat().st_size
    print(f"{args.capture.name}: {size:,} bytes, {args.runs} fresh processes each")
    results = {}
    for name, setup in DECODERS.items():
        runs = [decode_once(setup, args.capture) for _ in range(args.runs)]
        seconds = [s for s, _ in runs]
        rss = max(r for _, r in runs) / 1024
        results[name] = {"seconds": seconds, "peak_rss_mib": rss}
        print(f"| {name} | {statistics.median(seconds) * 1000:.0f} ms (min {min(seconds) * 1000:.0f}) | "
              f"{rss:,.0f} MiB |")
    for path in [args.capture] + ([args.twin] if args.twin else []):
        times = [view_once(args.command, path) for _ in range(args.runs)]
        results[f"view --json {path.name}"] = times
        print(f"view --json {path.name}: median {statistics.median(times):.2f} s (min {min(times):.2f})")
    out = Path(__file__).resolve().parent / ".results" / "msgpack.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"capture": str(args.capture), "bytes": size, "results": results,
                               "maxrss_unit": "MiB", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "rusage_self_only": resource.RUSAGE_SELF == 0}, indent=2) + "\n")


if __name__ == "__main__":
    main()
