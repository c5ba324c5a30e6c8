#!/usr/bin/env bash
# Reproduce the GPU measurements listed in docs/measurements.md, on a box with a GPU, torch and Triton.
#
#   benchmarks/gpu/measure.sh [options] WHAT...
#
# WHAT, run in the order given (`all` = tests runs check tui bandwidth overhead); machine.txt (date, commit,
# nvidia-smi, the Python, torch and Triton versions) is always written first (`machine` writes only that):
#   tests      the GPU-marked tests: python -m pytest -m gpu
#   runs       `proton-tui run` per backend, context, mode and hook; an injected FAIL; roctracer (refused on
#              NVIDIA); a 2^28-element run; `proton-tui diff` of two captures of different sizes
#   check      `proton-tui check` on every visible GPU: text, --json, one GPU, flagging, an injected FAIL, --cpu
#   tui        the TUI driven headless (Textual's run_test) for each --backend: form filled, Run, kernel table;
#              SVG screenshots and the table as text
#   tui-check  the TUI's box check (F5) driven headless: screenshot and table
#   bandwidth  the payload's kernel against torch.add at 2^28 float32 elements (benchmarks/bench_bandwidth.py)
#   overhead   `proton-tui run` against bare `python -m triton.profiler.proton`, ABBA pairs (benchmarks/bench_capture.py)
#   startup    where a run's time outside the capture goes: start-up times, -X importtime, cProfile of one run
#
# Options:
#   --out DIR        raw outputs (default gpu-results/<UTC date-time>, git-ignored); nothing here is committed
#   --python PY      the interpreter with torch and Triton (default python3)
#   --install        first install the project with PY: pip install --no-build-isolation --no-index --find-links .whl .
#                    (.whl/ holds the dependency wheels, for a box without network access)
#   --backend B      a backend for `tui` (repeatable; default auto)
#   --repeat N       pairs for `overhead` (default 20)
#   --keep-captures  keep captures over 5 MB (deleted at the end by default)
#
# Example: benchmarks/gpu/measure.sh --install tests tui runs bandwidth overhead
set -u
cd "$(dirname "$0")/../.." || exit 1
export PYTHONUNBUFFERED=1

PY=python3
OUT=""
INSTALL=0
BACKENDS=()
REPEAT=20
KEEP=0
WHAT=()
MACHINE_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --install) INSTALL=1; shift ;;
    --backend) BACKENDS+=("$2"); shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --keep-captures) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    all) WHAT+=(tests runs check tui bandwidth overhead); shift ;;
    machine) WHAT+=(); MACHINE_ONLY=1; shift ;;
    tests|runs|check|tui|tui-check|bandwidth|overhead|startup) WHAT+=("$1"); shift ;;
    *) echo "measure.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#WHAT[@]} -gt 0 ] || [ "$MACHINE_ONLY" = 1 ] || { echo "measure.sh: say what to run (see --help)" >&2; exit 2; }
[ ${#BACKENDS[@]} -gt 0 ] || BACKENDS=(auto)
OUT=${OUT:-gpu-results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
TOOL=("$PY" -m proton_tui)

if [ "$INSTALL" = 1 ]; then
  "$PY" -m pip install -q --no-build-isolation --no-index --find-links .whl . || exit 1
  "$PY" -m pip install -q --no-index --find-links .whl pytest-asyncio || exit 1  # the GPU tests are async
fi

# Each step writes its own log under $OUT and a one-line summary to stdout.
step_machine() {
  {
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    "$PY" -c "import sys, torch, triton; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'triton', triton.__version__, 'gpus', torch.cuda.device_count())"
    nvidia-smi 2>/dev/null || rocm-smi 2>/dev/null || echo "no nvidia-smi or rocm-smi"
  } > "$OUT/machine.txt" 2>&1
  head -4 "$OUT/machine.txt"
}

step_tests() {
  # only the modules that hold GPU tests: the rest need test-only packages a GPU box may lack
  "$PY" -m pytest -m gpu -q -p no:cacheprovider $(grep -rl "pytest.mark.gpu\|mark\.gpu" tests) > "$OUT/pytest-gpu.log" 2>&1
  echo "pytest exit=$?" >> "$OUT/pytest-gpu.log"
  tail -2 "$OUT/pytest-gpu.log"
}

step_runs() {
  local dir=$OUT/runs
  mkdir -p "$dir"
  run() {
    local name=$1; shift
    echo "### proton-tui run $* --name $name"
    "${TOOL[@]}" run --output "$dir" --name "$name" "$@"
    echo "### exit=$?"
  }
  local small=(--size 1048576 --iters 20)
  {
    run auto "${small[@]}"
    run cupti "${small[@]}" --backend cupti
    run instrumentation "${small[@]}" --backend instrumentation
    run python-context "${small[@]}" --context python
    run env-mode "${small[@]}" --mode env
    run no-hook "${small[@]}" --no-hook
    run fail "${small[@]}" --inject-bug
    run roctracer "${small[@]}" --backend roctracer
    run roctracer-env "${small[@]}" --backend roctracer --mode env
    run auto-4m --size 4194304 --iters 20
    run hook-2p28 --size 268435456 --iters 50
  } > "$OUT/runs.log" 2>&1
  "${TOOL[@]}" diff "$dir"/*-auto/auto.hatchet "$dir"/*-auto-4m/auto-4m.hatchet > "$OUT/diff.txt" 2>&1
  grep -h "^### \|^verdict" "$OUT/runs.log"
}

step_check() {
  local dir=$OUT/check
  mkdir -p "$dir"
  check() {
    local name=$1; shift
    echo "### proton-tui check $*"
    "${TOOL[@]}" check --output "$dir/$name" "$@"
    echo "### exit=$?"
  }
  {
    check text
    check json --json
    check subset --gpus 0 --no-profile
    check flag --min-fraction 1.0
    check fail --inject-bug 1
    check cpu --cpu --jobs 2
  } > "$OUT/check.log" 2> "$OUT/check-live.log"
  grep -h "^### \|^check:" "$OUT/check.log"
}

step_tui() {
  local backend
  for backend in "${BACKENDS[@]}"; do
    mkdir -p "$OUT/tui-$backend"
    # uses proton_tui.tui.app.ProtonApp (and, by attribute: the launch form's info/probe_error and #size/#iters/#backend
    # fields, the run screen's result/problem/status_text(), the ProfileTable widget's model: rows, header(), text())
    "$PY" - "$OUT/tui-$backend" "$backend" 1048576 20 > "$OUT/tui-$backend.log" 2>&1 <<'EOF'
import asyncio, sys
from pathlib import Path
from proton_tui.tui.app import ProtonApp

out, backend, size, iters = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

async def until(predicate, seconds):
    for _ in range(int(seconds * 10)):
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise TimeoutError("the TUI did not get there in time")

async def drive():
    app = ProtonApp(output=out / "runs")
    async with app.run_test(size=(140, 44)) as pilot:
        form = app.screen
        await until(lambda: form.info is not None or form.probe_error is not None, 180)
        form.query_one("#size").value = size
        form.query_one("#iters").value = iters
        for button in form.query("#backend RadioButton"):
            if button.name == backend:
                button.value = True
        await pilot.pause()
        app.save_screenshot(str(out / "form.svg"))
        await pilot.press("ctrl+r")
        runs = lambda: [s for s in app.screen_stack if type(s).__name__ == "RunScreen"]
        await until(lambda: bool(runs()), 30)
        run = runs()[0]
        await until(lambda: run.result is not None or run.problem is not None, 300)
        await pilot.pause(0.5)
        lines = [f"backend={backend}", run.status_text()]
        tables = app.screen.query("ProfileTable")
        if tables:
            app.save_screenshot(str(out / "table.svg"))
            table = tables.first()
            lines += [table.model.header(140)] + [table.model.text(row, 140) for row in range(len(table.model.rows))]
            await pilot.press("l")
            await pilot.pause()
        app.save_screenshot(str(out / "run.svg"))
        lines.append(run.result.verdict.message if run.result else run.problem)
    return "\n".join(lines) + "\n"

text = asyncio.run(drive())
(out / "tui.txt").write_text(text)
print(text)
EOF
    echo "drive exit=$?" >> "$OUT/tui-$backend.log"
    tail -n 3 "$OUT/tui-$backend.log"
  done
}

step_tui_check() {
  mkdir -p "$OUT/tui-check"
  # uses proton_tui.tui.app.ProtonApp (and, by attribute: the launch form's info/probe_error, F5, the check screen's
  # running, #check-status and #check-table)
  "$PY" - "$OUT/tui-check" > "$OUT/tui-check.log" 2>&1 <<'EOF'
import asyncio, sys
from pathlib import Path
from proton_tui.tui.app import ProtonApp

out = Path(sys.argv[1])

async def drive():
    app = ProtonApp(output=out / "runs")
    async with app.run_test(size=(150, 40)) as pilot:
        form = app.screen
        for _ in range(1800):
            if form.info is not None or form.probe_error is not None:
                break
            await asyncio.sleep(0.1)
        await pilot.press("f5")
        screen = app.screen
        for _ in range(3000):
            if not screen.running:
                break
            await asyncio.sleep(0.1)
        await pilot.pause(0.5)
        app.save_screenshot(str(out / "tui-check.svg"))
        table = screen.query_one("#check-table")
        rows = [" | ".join(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
        return "\n".join([str(screen.query_one("#check-status").render()), *rows]) + "\n"

text = asyncio.run(drive())
(out / "tui-check.txt").write_text(text)
print(text)
EOF
  echo "drive exit=$?" >> "$OUT/tui-check.log"
  cat "$OUT/tui-check.log"
}

step_bandwidth() {
  "$PY" benchmarks/bench_bandwidth.py --size 268435456 --json "$OUT/bandwidth.json" > "$OUT/bandwidth.log" 2>&1
  grep -h "gbps\|ratio" "$OUT/bandwidth.json"
}

step_overhead() {
  "$PY" benchmarks/bench_capture.py --size 16777216 --iters 200 --repeat "$REPEAT" --json "$OUT/capture_overhead.json" \
    > "$OUT/capture_overhead.log" 2>&1
  grep -h "ratio\|median" "$OUT/capture_overhead.json"
}

step_startup() {
  local run_args=(run --size 16777216 --iters 200)
  {
    echo "== $("$PY" -V); typer $("$PY" -c 'import typer; print(typer.__version__)')"
    env | grep -E '^PYTHON' | sort
    for _ in 1 2 3 4 5; do /usr/bin/time -f "python -c pass: %e s" "$PY" -c pass; done
    for _ in 1 2 3; do /usr/bin/time -f "proton-tui run --help: %e s" "${TOOL[@]}" run --help > /dev/null; done
  } > "$OUT/startup.log" 2>&1
  { time "${TOOL[@]}" "${run_args[@]}" --output "$OUT/first-run" --name first; } > "$OUT/first-run.log" 2>&1
  "$PY" -X importtime -m proton_tui "${run_args[@]}" --output "$OUT/importtime-run" > /dev/null 2> "$OUT/importtime.log"
  "$PY" -m cProfile -o "$OUT/run.prof" -m proton_tui "${run_args[@]}" --output "$OUT/profiled-run" > /dev/null 2>&1
  "$PY" -c "import pstats, sys; pstats.Stats(sys.argv[1], stream=sys.stdout).sort_stats('cumulative').print_stats(60)" \
    "$OUT/run.prof" > "$OUT/run-profile.txt" 2>&1
  cat "$OUT/startup.log"; tail -n 3 "$OUT/first-run.log"
  sort -t'|' -k2 -n "$OUT/importtime.log" | tail -n 8
}

echo "== machine"
step_machine
for what in ${WHAT[@]+"${WHAT[@]}"}; do
  echo "== $what"
  "step_${what//-/_}"
done
[ "$KEEP" = 1 ] || find "$OUT" -name "*.hatchet" -size +5M -delete
echo "raw outputs: $OUT"
