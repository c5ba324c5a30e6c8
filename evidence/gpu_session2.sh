#!/usr/bin/env bash
# GPU evidence, call 2 (2×H200): proton-tui check on both GPUs (text, JSON, subset, flagging, an injected FAIL,
# the CPU mode), the GPU-marked tests, env mode again with the final payload, and a diff of two real captures.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
E=$OUT/ev2; mkdir -p "$E/check"
T="python3 -m proton_tui"
nvidia-smi -L > "$E/machine.txt" 2>&1
cd "$E/check" || exit 1
step() { echo "### $*"; "$@"; echo "### exit=$?"; }
{
  step $T check --output runs
  step $T check --json --output runs-json
  step $T check --gpus 1 --no-profile --output runs-subset
  step $T check --min-fraction 1.0 --output runs-flag
  step $T check --inject-bug 1 --output runs-fail
  step $T check --cpu --jobs 2 --output runs-cpu
} > "$E/check.log" 2> "$E/check-live.log"
cd - >/dev/null
{
  step $T run --output "$E/runs" --name env-mode --mode env
  step $T run --output "$E/runs" --name auto-a
  step $T run --output "$E/runs" --name auto-b --size 4194304
} > "$E/runs.log" 2>&1
$T diff "$E"/runs/*-auto-a/auto-a.hatchet "$E"/runs/*-auto-b/auto-b.hatchet > "$E/diff.txt" 2>&1
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ > "$E/pytest-gpu.log" 2>&1; echo "pytest exit=$?" >> "$E/pytest-gpu.log"
if [ -f evidence/drive_check.py ]; then python3 evidence/drive_check.py "$E/tui-check" > "$E/tui-check.log" 2>&1; fi
find "$E" -name "*.hatchet" -size +5M -delete
tar czf "$OUT/evidence2.tar.gz" -C "$OUT" ev2
grep -h "^###\|verdict" "$E/check.log" "$E/runs.log"; tail -3 "$E/pytest-gpu.log"; cat "$E/diff.txt" | cut -c1-150 | head -12
