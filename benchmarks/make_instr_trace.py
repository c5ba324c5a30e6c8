"""An instrumentation trace shaped like the payload's under `--backend instrumentation --data trace`: CTAs × 4
warps × launches, each warp's `kernel` scope on line 0 and `load`, `add`, `store` on line 1, `dur` in cycles / 1000
as Proton writes it; most CTAs keep their SM across launches, one in 16 moves (as on the H200).

    python benchmarks/make_instr_trace.py --ctas 1024 --launches 21 --out DIR
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

WARPS = 4
SMS = 132


def events(ctas: int, launches: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    found, origin = [], 0.0
    args = {"Frequency (MHz)": 1000.0, "call_stack": ["ROOT", "add_kernel<n=1048576>"]}
    for launch in range(launches):
        for cta in range(ctas):
            sm = (cta * 7 + (launch if cta % 16 == 0 else 0)) % SMS
            pid = f"add_kernel_scoped Core{sm} CTA{cta}"
            for warp in range(WARPS):
                start = origin + rng.random() * 2.0
                parts = (("load", 0.1 + rng.random() * 0.1), ("add", 0.6 + rng.random()), ("store", 0.08))
                found.append({"args": args, "cat": "add_kernel_scoped", "name": "kernel", "ph": "X", "pid": pid,
                              "tid": f"warp {warp} (line 0)", "ts": round(start, 3),
                              "dur": round(sum(d for _, d in parts) + 0.3, 3)})
                at = start + 0.05
                for name, duration in parts:
                    found.append({"args": args, "cat": "add_kernel_scoped", "name": name, "ph": "X", "pid": pid,
                                  "tid": f"warp {warp} (line 1)", "ts": round(at, 3), "dur": round(duration, 3)})
                    at += duration + 0.02
        origin += 700.0
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctas", type=int, default=1024)
    parser.add_argument("--launches", type=int, default=21)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/.captures"))
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / f"instr_trace_{options.ctas}x{options.launches}.chrome_trace"
    path.write_text(json.dumps({"displayTimeUnit": "ns",
                                "traceEvents": events(options.ctas, options.launches, options.seed)}))
    print(path)


if __name__ == "__main__":
    main()
