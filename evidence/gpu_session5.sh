#!/usr/bin/env bash
# GPU evidence, call 5 (H200): where `proton-tui run`'s time outside the capture goes, and the capture overhead
# with the interpreter probe validated by stat() instead of an interpreter start.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
E=$OUT/ev5; mkdir -p "$E"
{
  echo "== python: $(command -v python3) $(python3 -V)"
  for i in 1 2 3 4 5; do /usr/bin/time -f "python -c pass: %e s" python3 -c pass; done
  for i in 1 2 3 4 5; do /usr/bin/time -f "import proton_tui.cli: %e s" python3 -c "import proton_tui.cli"; done
  for i in 1 2 3; do /usr/bin/time -f "proton-tui run --help: %e s" python3 -m proton_tui run --help > /dev/null; done
} > "$E/startup.log" 2>&1
{ time python3 -m proton_tui run --size 16777216 --iters 200 --output "$E/first-run" --name first; } > "$E/first-run.log" 2>&1
python3 -X importtime -m proton_tui run --size 16777216 --iters 200 --output "$E/importtime-run" > /dev/null 2> "$E/importtime.log"
python3 -m cProfile -o "$E/run.prof" -m proton_tui run --size 16777216 --iters 200 --output "$E/profiled-run" > /dev/null 2>&1
python3 -c "
import pstats, sys
stats = pstats.Stats('$E/run.prof', stream=sys.stdout)
stats.sort_stats('cumulative').print_stats(60)" > "$E/run-profile.txt" 2>&1
python3 benchmarks/bench_capture.py --size 16777216 --iters 200 --repeat 12 --json "$E/capture_overhead.json" > "$E/capture_overhead.log" 2>&1
find "$E" -name "*.hatchet" -size +5M -delete
tar czf "$OUT/evidence5.tar.gz" -C "$OUT" ev5
cat "$E/startup.log"; tail -3 "$E/first-run.log"; grep -h "ratio\|median" "$E/capture_overhead.json"
sort -t'|' -k2 -n "$E/importtime.log" | tail -8
head -70 "$E/run-profile.txt" | tail -62
