"""Under Proton's instrumentation backend, launch the payload's scoped kernel and its plain twin in the order
given, then finalize. Prints what ran; the process's exit status tells whether Proton survived.

    python benchmarks/gpu/sigfpe.py OUT_NAME scoped,plain
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "payload"))

import torch  # noqa: E402
import triton.profiler as proton  # noqa: E402
import vecadd  # noqa: E402


def main() -> None:
    name, order = sys.argv[1], sys.argv[2].split(",")
    n = 1 << 16
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    proton.start(name, backend="instrumentation")
    for which in order:
        kernel, cdiv = vecadd.build_kernel(scoped=which == "scoped")
        kernel[(cdiv(n, 1024),)](x, y, out, n, n, BLOCK_SIZE=1024)
        torch.cuda.synchronize()
        print(f"launched {which}: equal={torch.equal(out, x + y)}", flush=True)
    proton.finalize()
    print("finalized", flush=True)


main()
