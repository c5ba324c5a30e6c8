#!/usr/bin/env bash
# Workloads through `proton-tui run --` on a GPU box, for docs/measurements.md: a timm model torch.compile'd
# (random weights) as a script (Proton's CLI) and as a module (the start-up hook), torchrun with two ranks on one GPU
# (gloo; rank 1 does more work), a rank made to raise, and a Chrome trace of a workload. Writes OUT (default
# gpu-results/workload-<UTC time>): each run's folder under OUT/runs, the commands' output in OUT/*.log.
#
#   benchmarks/gpu/workload.sh [--python PY] [--out DIR]
set -u
cd "$(dirname "$0")/../.." || exit 1
REPO=$PWD
PY=python3
DEST=""
while [ $# -gt 0 ]; do
    case $1 in
        --python) PY=$2; shift 2 ;;
        --out) DEST=$2; shift 2 ;;
        *) break ;;
    esac
done
OUT=${DEST:-gpu-results/workload-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
BIN=$(dirname "$(command -v "$PY")")
TUI="$BIN/proton-tui"
TORCHRUN="$BIN/torchrun"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{
    date -u +%FT%TZ
    git rev-parse --short HEAD 2>/dev/null
    nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null
    $PY -c 'import torch, triton, timm; print("torch", torch.__version__, "triton", triton.__version__, "timm", timm.__version__)'
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
timed() {  # NAME CMD...: the command's output in OUT/NAME.log, its exit status and wall time in OUT/NAME.status
    local name=$1; shift
    local start=$(date +%s%N)
    "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "rc=$rc wall_s=$(( ($(date +%s%N) - start) / 1000000 ))e-3" > "$OUT/$name.status"
    echo "== $name: $(cat "$OUT/$name.status")"; grep -E "^verdict|^hint" "$OUT/$name.log"
}
timed timm-script "$TUI" run --output "$OUT/runs" -- "$PY" "$REPO/benchmarks/gpu/timm_train.py"
(cd "$REPO/benchmarks/gpu" && timed timm-module "$TUI" run --output "$OUT/runs" -- "$PY" -m timm_train)
timed timm-trace "$TUI" run --output "$OUT/runs" --data trace -- "$PY" "$REPO/benchmarks/gpu/timm_train.py" --steps 2
cat > "$OUT/ranks.py" <<'PYEOF'
import sys
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
x = torch.randn(2048, 2048, device="cuda")
for step in range(3):
    y = x @ x
    if rank == 1:  # the slow rank
        for _ in range(16):
            y = y @ x
    total = torch.tensor([float(y.float().sum())])
    dist.all_reduce(total)
torch.cuda.synchronize()
print(f"rank {rank} done", flush=True)
if "--raise" in sys.argv and rank == 1:
    raise RuntimeError("rank 1 gave up")
dist.destroy_process_group()
PYEOF
(cd "$OUT" && timed torchrun-two "$TUI" run --output "$OUT/runs" -- "$TORCHRUN" --nproc-per-node 2 ranks.py)
(cd "$OUT" && timed torchrun-trace "$TUI" run --output "$OUT/runs" --data trace -- "$TORCHRUN" --nproc-per-node 2 ranks.py)
(cd "$OUT" && timed torchrun-raise "$TUI" run --output "$OUT/runs" -- "$TORCHRUN" --nproc-per-node 2 ranks.py --raise)
for run in "$OUT"/runs/*/; do
    for capture in "$run"*.hatchet; do
        [ -f "$capture" ] && "$TUI" view --kernels "$capture" 2>&1 | head -8 > "$capture.kernels.txt"
    done
done
ls -la "$OUT"/runs/*/
