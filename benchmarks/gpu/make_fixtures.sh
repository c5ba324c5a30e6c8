#!/usr/bin/env bash
# Make the small real captures kept as test fixtures, on a box with a GPU, torch and Triton.
#
#   benchmarks/gpu/make_fixtures.sh PYTHON OUT
#
# Writes into OUT (tests/fixtures/README.md says what each one is):
#   python_scopes.hatchet        python context, user scopes (one that launches nothing): empty frames
#   vecadd_trace.chrome_trace    the payload under `-d trace -k triton` (1M floats, 5 launches)
#   vecadd_trace_twin.hatchet    the same run as a tree
set -u
PY=${1:?the interpreter with torch and Triton}
OUT=${2:?the folder for the captures}
cd "$(dirname "$0")/../.." || exit 1
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
"$PY" - "$OUT/python_scopes" <<'PYTHON'
import sys

import torch
import triton.profiler as proton

proton.start(sys.argv[1], context="python")
x = torch.ones(1 << 20, device="cuda")
with proton.scope("step"):
    y = x + 1
with proton.scope("nothing_launched"):
    z = y.shape
torch.cuda.synchronize()
proton.finalize()
PYTHON
"$PY" -m triton.profiler.proton -n "$OUT/vecadd_trace" -d trace -k triton payload/vecadd.py --size 1048576 --iters 5
"$PY" -m triton.profiler.proton -n "$OUT/vecadd_trace_twin" -k triton payload/vecadd.py --size 1048576 --iters 5
ls -l "$OUT"
