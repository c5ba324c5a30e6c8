"""The payload's sizes and launch counts, by what each command measures with them."""

from __future__ import annotations

RUN_SIZE = 2**20  # elements of a run (`run`, the form's default): a capture of a few kernels, quick on any GPU
CHECK_SIZE = 2**28  # elements of a box check's run per GPU: 3 GiB moved per launch, bandwidth-bound on any current GPU
GPU_ITERS = 20  # launches of a run and of a box check on a GPU
CPU_SIZE = 4096  # the interpreter runs a block in Python: keep it tiny
CPU_ITERS = 2
DOCTOR_SIZE = 4096  # elements per doctor cell's payload: a capture needs a kernel, not bandwidth
DOCTOR_ITERS = 2
# The Triton interpreter's cost of a vecadd run: start-up, per element, per element and launch (seconds), fitted to
# `payload/vecadd.py --device cpu` at 4096 to 1M elements and 2 to 8 launches on the 2-core CI machine.
INTERPRETER_COST_S = (2.6, 2.5e-6, 0.7e-6)


def interpreter_seconds(size: int, iters: int) -> float:
    """About how long the payload takes through the Triton interpreter (the first launch compiles: iters + 1)."""
    start, per_element, per_launch = INTERPRETER_COST_S
    return start + size * (per_element + per_launch * (iters + 1))
