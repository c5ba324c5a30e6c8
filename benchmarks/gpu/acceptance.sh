#!/usr/bin/env bash
# The GPU checks of instrumentation, doctor and the box check, for docs/measurements.md. Each part writes under OUT
# (default gpu-results/acceptance-<UTC time>; nothing there is committed); machine.txt first.
#
#   benchmarks/gpu/acceptance.sh [--python PY] [--out DIR] PART...
#
# PART: tests (the GPU-marked tests, evidence in OUT/evidence), instr (instrumentation runs: tree, trace, sampled
# warps, a small buffer, the SIGFPE payload, and their text views), doctor (proton-tui doctor, text and --json,
# timed), doctor-jobs (doctor with 16 and 24 cells at once, alternating, then benchmarks/gpu/doctor_cost.py), nvml
# (NVML readings of GPU 0 idle and loaded), check-load (proton-tui check with the last GPU kept busy by
# benchmarks/gpu/load_gpu.py), clock (Triton driver's device properties of GPU 0).
set -u
cd "$(dirname "$0")/../.." || exit 1
PY=python3
DEST=""
while [ $# -gt 0 ]; do
    case $1 in
        --python) PY=$2; shift 2 ;;
        --out) DEST=$2; shift 2 ;;
        *) break ;;
    esac
done
OUT=${DEST:-gpu-results/acceptance-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
BIN=$(dirname "$(command -v "$PY")")
TUI="$BIN/proton-tui"
{
    date -u +%FT%TZ
    git rev-parse --short HEAD 2>/dev/null
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null
    $PY -c 'import sys, torch, triton; print(sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, triton.__file__)'
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

for part in "$@"; do
    echo "== $part"
    case $part in
        tests)
            PROTON_TUI_EVIDENCE="$OUT/evidence" $PY -m pytest -q -p no:cacheprovider -m gpu -n 4 tests \
                --ignore=tests/architecture/test_layers.py > "$OUT/tests.log" 2>&1
            tail -15 "$OUT/tests.log" ;;
        instr)
            for args in "--data tree" "--data trace" "--mode env --warps 0,2" "--mode env --buffer-size 64"; do
                tag=$(echo "$args" | tr -c 'a-z0-9\n' '_')
                $TUI run --backend instrumentation $args --output "$OUT/instr/$tag" > "$OUT/instr_$tag.log" 2>&1
                echo "$args: rc=$? $(grep -m1 '^verdict:' "$OUT/instr_$tag.log" | cut -c1-160)"
                for capture in "$OUT"/instr/"$tag"/*/vecadd.*; do
                    $TUI view "$capture" --plain > "$capture.txt" 2>&1
                    head -12 "$capture.txt"
                done
            done
            $TUI run --backend instrumentation --payload benchmarks/gpu/sigfpe.py --output "$OUT/instr/sigfpe" \
                > "$OUT/instr_sigfpe.log" 2>&1
            echo "sigfpe payload: rc=$? $(grep -m1 '^verdict:' "$OUT/instr_sigfpe.log")" ;;
        doctor)
            start=$(date +%s%N)
            $TUI doctor --output "$OUT/doctor-runs" > "$OUT/doctor.txt" 2>&1
            rc=$?
            echo "doctor: rc=$rc $(( ($(date +%s%N) - start) / 1000000 )) ms"
            cat "$OUT/doctor.txt"
            $TUI doctor --json --output "$OUT/doctor-runs" > "$OUT/doctor.json" 2>"$OUT/doctor.err"
            echo "doctor --json: rc=$?" ;;
        doctor-jobs)
            $TUI doctor --output "$OUT/doctor-runs" > /dev/null 2>&1  # Triton's cache filled first
            for jobs in 16 24 16 24 16 24; do
                start=$(date +%s%N)
                $TUI doctor --jobs $jobs --output "$OUT/doctor-runs" > "$OUT/doctor-jobs$jobs.txt" 2>&1
                echo "--jobs $jobs: rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms"
            done
            PYTHONUNBUFFERED=1 $PY benchmarks/gpu/doctor_cost.py --python "$PY" --out "$OUT/doctor-cost" --fresh \
                --forked 1 4 8 24 | tee "$OUT/doctor-cost.txt" ;;
        nvml)
            PYTHONPATH=. $PY benchmarks/gpu/record_nvml.py --gpu 0 --seconds 0 --out "$OUT/nvml_idle.json" | tail -5
            PYTHONPATH=. $PY benchmarks/gpu/record_nvml.py --gpu 0 --seconds 5 --out "$OUT/nvml_load.json" | tail -5 ;;
        check-load)
            last=$(( $($PY -c 'import torch; print(torch.cuda.device_count())') - 1 ))
            $PY benchmarks/gpu/load_gpu.py --gpu "$last" --seconds 240 > "$OUT/load_gpu.log" 2>&1 &
            load=$!
            sleep 8
            $TUI check --size 2^26 --output "$OUT/check-runs" > "$OUT/check.txt" 2>&1
            echo "check: rc=$?"
            cat "$OUT/check.txt"
            $TUI check --size 2^26 --json --output "$OUT/check-runs" > "$OUT/check.json" 2>/dev/null
            kill $load; wait $load 2>/dev/null ;;
        clock)
            $PY -c 'import torch; from triton.runtime import driver; print(driver.active.utils.get_device_properties(0))' ;;
    esac
done
