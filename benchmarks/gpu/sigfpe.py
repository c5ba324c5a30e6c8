"""Under Proton's instrumentation backend, launch the payload's scoped kernel and its plain twin in the order
given. Standalone it starts and finalizes Proton itself; given the payload's options (as `proton-tui run
--payload` passes them) it is a payload that prints the payload's first lines and leaves Proton to its caller.

    python benchmarks/gpu/sigfpe.py OUT_NAME scoped,plain
    proton-tui run --backend instrumentation --payload benchmarks/gpu/sigfpe.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "payload"))

import torch  # noqa: E402
import vecadd  # noqa: E402


def launch(order: list[str]) -> None:
    n = 1 << 16
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    for which in order:
        kernel, cdiv = vecadd.build_kernel(scoped=which == "scoped")
        kernel[(cdiv(n, 1024),)](x, y, out, n, n, BLOCK_SIZE=1024)
        torch.cuda.synchronize()
        print(f"launched {which}: equal={torch.equal(out, x + y)}", flush=True)


def main() -> None:
    if sys.argv[1:2] and sys.argv[1].startswith("--"):  # as a payload: Proton is its caller's
        print(f"vecadd: device={torch.cuda.get_device_name()}", flush=True)
        launch(["scoped", "plain"])
        print("vecadd: PASS", flush=True)
        return
    import triton.profiler as proton

    name, order = sys.argv[1], sys.argv[2].split(",")
    proton.start(name, backend="instrumentation")
    launch(order)
    proton.finalize()
    print("finalized", flush=True)


main()
