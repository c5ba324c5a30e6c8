#!/usr/bin/env bash
# GPU evidence, call 3 (2×H200): capture overhead again now that the interpreter probe is cached on disk, the
# TUI's box check (F5) driven headless on both GPUs, and the GPU-marked tests on the final code.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
E=$OUT/ev3; mkdir -p "$E"
{ time python3 -m proton_tui run --output "$E/first-run" --name first; } > "$E/first-run.log" 2>&1
python3 benchmarks/bench_capture.py --repeat 5 --json "$E/capture_overhead.json" > "$E/capture_overhead.log" 2>&1
python3 evidence/drive_check.py "$E/tui-check" > "$E/tui-check.log" 2>&1; echo "drive exit=$?" >> "$E/tui-check.log"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ > "$E/pytest-gpu.log" 2>&1; echo "pytest exit=$?" >> "$E/pytest-gpu.log"
find "$E" -name "*.hatchet" -size +5M -delete
tar czf "$OUT/evidence3.tar.gz" -C "$OUT" ev3
tail -4 "$E/first-run.log"; grep -h "ratio\|median" "$E/capture_overhead.json"; cat "$E/tui-check.log"; tail -2 "$E/pytest-gpu.log"
