"""Write a large Chrome trace in Proton's >= 3.8 shape (named lanes, kernel events with call stacks and launch
metadata, flows from a CPU thread) for measuring how `proton-tui view` reads big traces.

    python benchmarks/make_trace.py 1500000 --out benchmarks/.captures

Serving users report traces of hundreds of MB; 1.5M kernel events make about 500 MB here.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

KERNELS = ["add_kernel<n=4194304>", "_attn_fwd<Z=4,H=32,N_CTX=4096,HEAD_DIM=128>", "matmul_kernel<M=4096,N=4096>",
           "void at::native::vectorized_elementwise_kernel<4>", "rms_norm_kernel", "softmax_kernel"]
SCOPES = ["forward", "backward", "optimizer", "allreduce"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int)
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    path = args.out / f"proton_trace_{args.events}_seed{args.seed}.chrome_trace"
    args.out.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        out.write('{"displayTimeUnit": "us", "baseTimeNanoseconds": 1796066334530334338, "traceEvents": [\n')
        meta = [{"args": {"name": "CPU Thread 0"}, "name": "thread_name", "ph": "M", "pid": 0, "tid": 0}]
        meta += [{"args": {"name": f"GPU Stream {s}"}, "name": "thread_name", "ph": "M", "pid": 0, "tid": 200000 + s}
                 for s in (7, 13, 17, 21)]
        out.write(",\n".join(json.dumps(event) for event in meta))
        ts = 0.0
        for number in range(args.events):
            stream = rng.choice((7, 13, 17, 21))
            name = rng.choice(KERNELS)
            duration = round(rng.uniform(1.0, 400.0), 3)
            ts = round(ts + rng.uniform(0.0, 20.0), 3)
            scope = rng.choice(SCOPES)
            kernel = {"args": {"call_stack": ["ROOT", f"step_{number // 100000}", scope, name],
                               "metrics": {"bytes": str(rng.randrange(1, 1 << 30))}},
                      "cat": "kernel", "dur": duration, "name": name, "ph": "X", "pid": 0, "tid": 200000 + stream,
                      "ts": ts}
            flow_start = {"bp": "e", "cat": "flow", "id": number, "name": "launch->kernel", "ph": "s", "pid": 0,
                          "tid": 0, "ts": round(ts - 5.0, 3)}
            flow_end = {**flow_start, "ph": "f", "tid": 200000 + stream, "ts": ts}
            out.write(",\n" + ",\n".join(json.dumps(event) for event in (kernel, flow_start, flow_end)))
        out.write("\n]}\n")
    print(path, path.stat().st_size)


if __name__ == "__main__":
    main()
