#!/usr/bin/env bash
# GPU evidence, call 1 (one H200): proton-tui run per backend/context/mode/hook + a FAIL, GPU tests,
# payload bandwidth vs torch.add, capture overhead vs bare Proton, and the TUI driven headless (auto, cupti).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
E=$OUT/ev; mkdir -p "$E/runs"
T="python3 -m proton_tui"
{ nvidia-smi; python3 -c "import sys, torch, triton; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())"; } > "$E/machine.txt" 2>&1
R="--output $E/runs --size 1048576 --iters 20"
run() { name=$1; shift; echo "### proton-tui run $* --name $name"; $T run $R --name "$name" "$@"; echo "### exit=$?"; }
{
  run auto
  run cupti --backend cupti
  run instrumentation --backend instrumentation
  run python-context --context python
  run env-mode --mode env
  run no-hook --no-hook
  run fail --inject-bug
  run roctracer --backend roctracer
  run roctracer-env --backend roctracer --mode env
  echo "### big hook run"; $T run --output "$E/runs" --size 268435456 --iters 50 --name hook-2p28; echo "### exit=$?"
} > "$E/runs.log" 2>&1
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ > "$E/pytest-gpu.log" 2>&1; echo "pytest exit=$?" >> "$E/pytest-gpu.log"
python3 benchmarks/bench_bandwidth.py --json "$E/bandwidth.json" > "$E/bandwidth.log" 2>&1
python3 benchmarks/bench_capture.py --repeat 5 --json "$E/capture_overhead.json" > "$E/capture_overhead.log" 2>&1
python3 evidence/drive_tui.py "$E/tui" --backend auto --backend cupti > "$E/tui.log" 2>&1; echo "drive exit=$?" >> "$E/tui.log"
tar czf "$OUT/evidence1.tar.gz" -C "$OUT" ev
tail -5 "$E/runs.log" "$E/pytest-gpu.log" "$E/bandwidth.log" "$E/capture_overhead.log" "$E/tui.log"
grep -h "^### \|^verdict" "$E/runs.log"
