#!/usr/bin/env bash
# GPU evidence, call 6 (H200): capture overhead after the changes call 5 pointed at: typer 0.28 (0.29 imports
# pydantic on every command line), byte-compiled modules as `pip install` leaves them (call 5 installed with
# --no-compile, so every run compiled ~100 modules), the probe checked by stat(), exit noticed within 10 ms.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
python3 -m compileall -q proton_tui payload > /dev/null
export PYTHONPATH=/tmp/site:$PWD
E=$OUT/ev6; mkdir -p "$E"
{
  echo "== python: $(command -v python3) $(python3 -V); typer $(python3 -c 'import typer; print(typer.__version__)')"
  env | grep -E '^PYTHON' | sort
  for i in 1 2 3 4 5; do /usr/bin/time -f "python -c pass: %e s" python3 -c pass; done
  for i in 1 2 3 4 5; do /usr/bin/time -f "import proton_tui.cli + capture.session: %e s" python3 -c "import proton_tui.cli, proton_tui.capture.session"; done
  for i in 1 2 3; do /usr/bin/time -f "proton-tui run --help: %e s" python3 -m proton_tui run --help > /dev/null; done
} > "$E/startup.log" 2>&1
{ time python3 -m proton_tui run --size 16777216 --iters 200 --output "$E/first-run" --name first; } > "$E/first-run.log" 2>&1
python3 -X importtime -m proton_tui run --size 16777216 --iters 200 --output "$E/importtime-run" > /dev/null 2> "$E/importtime.log"
python3 benchmarks/bench_capture.py --size 16777216 --iters 200 --repeat 20 --json "$E/capture_overhead.json" > "$E/capture_overhead.log" 2>&1
find "$E" -name "*.hatchet" -size +5M -delete
tar czf "$OUT/evidence6.tar.gz" -C "$OUT" ev6
cat "$E/startup.log"; tail -3 "$E/first-run.log"; grep -h "ratio\|median\|mean" "$E/capture_overhead.json"
sort -t'|' -k2 -n "$E/importtime.log" | tail -8
