"""The payload's kernel against torch.add on one GPU: achieved GB/s at a bandwidth-bound size.

    python benchmarks/bench_bandwidth.py --size 268435456 [--json OUT]

Both are timed with triton.testing.do_bench (CUDA events, L2 flushed between runs, median of the repetitions);
GB/s counts 3·n·4 bytes (read x, read y, write out). Needs a GPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

PAYLOAD = Path(__file__).resolve().parent.parent / "payload" / "vecadd.py"


def load_payload():
    spec = importlib.util.spec_from_file_location("vecadd_payload", PAYLOAD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 28)
    parser.add_argument("--block-size", type=int, default=1024)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch
    import triton.testing

    add_kernel, cdiv = load_payload().build_kernel()
    n = args.size
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    grid = (cdiv(n, args.block_size),)
    launch = lambda: add_kernel[grid](x, y, out, n, n, BLOCK_SIZE=args.block_size)  # noqa: E731
    launch()
    assert torch.equal(out, x + y), "payload kernel disagrees with x + y"
    moved = 3 * n * x.element_size()
    results = {"device": torch.cuda.get_device_name(), "size": n, "block_size": args.block_size,
               "triton": triton.__version__, "torch": torch.__version__}
    for name, fn in (("payload_add_kernel", launch), ("torch_add", lambda: torch.add(x, y, out=out))):
        ms = triton.testing.do_bench(fn, warmup=50, rep=500)
        results[name] = {"median_ms": ms, "gbps": moved / (ms * 1e-3) / 1e9}
    results["ratio_payload_over_torch"] = results["payload_add_kernel"]["gbps"] / results["torch_add"]["gbps"]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
