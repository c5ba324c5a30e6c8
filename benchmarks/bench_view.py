#!/usr/bin/env python3
"""Benchmark `proton-tui view` on Proton-shaped captures of 10k, 100k and 1M nodes.

    .venv/bin/python benchmarks/bench_view.py [--sizes 10000,100000,1000000] [--repeats 3] [--update-readme]

Per size, each measurement in a fresh process (interpreter start-up and imports count), repeated, median and
min-max reported:
  * TUI time to interactive: spawn of `python benchmarks/tui_child.py FILE` until it prints INTERACTIVE, i.e. the
    viewer (Textual `run_test(size=(120, 40))`, headless) has painted its first screen with the table and handled
    and repainted one `down` keypress; plus the child's own phase times (import, load_profile, first paint, `down`,
    `enter`, `e` expand-all, `k` summary) and its peak RSS (ru_maxrss).
  * `proton-tui view FILE --json > /dev/null`: wall time and peak RSS.
  * `proton-tui view FILE --plain > /dev/null`: wall time and peak RSS.
and, on the smallest size, Triton's `proton-viewer -m time/ms FILE` from llnl-hatchet installed in
benchmarks/.venv-viewer (created on first use; `--no-viewer` skips it), with a timeout.

Writes raw results to benchmarks/.results/results.json (git-ignored) and prints a Markdown table; --update-readme puts that table into
benchmarks/README.md between the results markers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import make_capture  # noqa: E402

PYTHON = sys.executable
PROTON_TUI = str(Path(PYTHON).parent / "proton-tui")
VIEWER_VENV = HERE / ".venv-viewer"
VIEWER_PACKAGES = ["llnl-hatchet", "pandas<3", "numpy", "triton==3.6.0"]
TARGETS = {100_000: 1.0, 1_000_000: 10.0}  # seconds to interactive
MEMORY_TARGET = (1_000_000, 1.5)  # at this size, peak memory at most this many times the file
README_START, README_END = "<!-- results:start -->", "<!-- results:end -->"


def byte_compile() -> None:
    """Byte-compile proton_tui as `pip install` leaves a package: where PYTHONDONTWRITEBYTECODE is set (this machine
    sets it) modules edited since their last compile are compiled from source on every run (~0.06 s of each start)."""
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(REPO / "proton_tui")], check=True, stdout=subprocess.DEVNULL)


# ---- running one measured process ---------------------------------------------------------------------------------
def run_measured(cmd: list[str], *, timeout: float, marker: str | None = None, env: dict | None = None) -> dict:
    """Run cmd in its own session; return wall time, peak RSS (wait4), exit code, and the time its stdout
    printed `marker` (when given; stdout is discarded otherwise)."""
    stderr = tempfile.TemporaryFile()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE if marker else subprocess.DEVNULL,
        stderr=stderr,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=REPO,
        env=env,
    )
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    marker_at, lines = None, []
    if marker:
        for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if marker_at is None and line == marker:
                marker_at = time.perf_counter() - start
            else:
                lines.append(line)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr.seek(0)
    err = stderr.read().decode(errors="replace")
    return {
        "wall_s": wall,
        "marker_s": marker_at,
        "maxrss_bytes": usage.ru_maxrss * 1024,
        "user_s": usage.ru_utime,
        "sys_s": usage.ru_stime,
        "rc": proc.returncode,
        "timed_out": timed_out.is_set(),
        "stdout_tail": lines[-3:],
        "stderr_tail": err[-2000:],
    }


def stats(values: list[float | None]) -> dict | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


# ---- the measurements ------------------------------------------------------------------------------------------
def bench_tui(path: Path, repeats: int, timeout: float) -> dict:
    runs = []
    for _ in range(repeats):
        load = os.getloadavg()[0]
        result = run_measured([PYTHON, str(HERE / "tui_child.py"), str(path)], timeout=timeout, marker="INTERACTIVE")
        result["loadavg_1min_before"] = load
        phases = {}
        for line in reversed(result.pop("stdout_tail")):
            if line.startswith("{"):
                phases = json.loads(line)
                break
        result["phases"] = phases
        if phases.get("error_after_interactive"):
            print(f"    TUI error after interactive: {phases['error_after_interactive'][:200]}", flush=True)
        if result["rc"] != 0 or result["marker_s"] is None:
            print(f"    TUI run failed (rc {result['rc']}): {result['stderr_tail'][-500:]}", flush=True)
        runs.append(result)
        print(
            f"    tui: interactive {fmt_s(result['marker_s'])}  (cpu {fmt_s(phases.get('cpu_interactive'))})  "
            f"rss {fmt_mb(result['maxrss_bytes'])}  load {load:.1f}",
            flush=True,
        )

    def phase(name: str) -> list:
        return [r["phases"].get(name) for r in runs]

    summary = {
        "time_to_interactive_s": stats([r["marker_s"] for r in runs]),
        "maxrss_bytes": stats([r["maxrss_bytes"] for r in runs]),
        "cpu_to_interactive_s": stats(phase("cpu_interactive")),
        "import_s": stats(phase("import")),
        "tui_imported_s": stats(
            [(r["phases"]["tui_imported"] - r["phases"]["import"]) if r["phases"] else None for r in runs]
        ),
        "loaded_s": stats(
            [(r["phases"]["loaded"] - r["phases"]["tui_imported"]) if r["phases"] else None for r in runs]
        ),
        "table_drawn_s": stats(
            [
                (r["phases"]["table_first_render_line"] - r["phases"]["loaded"])
                if r["phases"] and r["phases"].get("table_first_render_line") is not None
                else None
                for r in runs
            ]
        ),
        "first_paint_s": stats(
            [(r["phases"]["first_paint"] - r["phases"]["loaded"]) if r["phases"] else None for r in runs]
        ),
        "key_down_s": stats(phase("key_down")),
        "key_enter_s": stats(phase("key_enter")),
        "key_expand_all_s": stats(phase("key_expand_all")),
        "key_summary_s": stats(phase("key_summary")),
    }
    return {"runs": runs, "summary": summary}


def bench_cli(path: Path, flag: str, repeats: int, timeout: float) -> dict:
    runs = []
    for _ in range(repeats):
        load = os.getloadavg()[0]
        result = run_measured([PROTON_TUI, "view", str(path), flag], timeout=timeout)
        result["loadavg_1min_before"] = load
        result.pop("stdout_tail")
        runs.append(result)
        if result["timed_out"]:
            print(f"    {flag}: > {timeout:.0f} s (killed at the timeout; not repeated)", flush=True)
            break
        if result["rc"] != 0:
            print(f"    {flag} failed (rc {result['rc']}): {result['stderr_tail'][-500:]}", flush=True)
        print(f"    {flag}: {fmt_s(result['wall_s'])}  rss {fmt_mb(result['maxrss_bytes'])}", flush=True)
    ok = [r for r in runs if r["rc"] == 0 and not r["timed_out"]]
    return {
        "runs": runs,
        "summary": {
            "wall_s": stats([r["wall_s"] for r in ok]),
            "maxrss_bytes": stats([r["maxrss_bytes"] for r in ok]),
            "timed_out_after_s": timeout if any(r["timed_out"] for r in runs) else None,
        },
    }


def ensure_viewer(install_timeout: float) -> dict:
    """Create benchmarks/.venv-viewer with llnl-hatchet and Triton's proton-viewer; report what installed."""
    viewer = VIEWER_VENV / "bin" / "proton-viewer"
    info: dict = {"venv": str(VIEWER_VENV), "requested": VIEWER_PACKAGES}
    if not viewer.exists():
        print(f"  installing {' '.join(VIEWER_PACKAGES)} into {VIEWER_VENV} ...", flush=True)
        steps = [
            ["python3", "-m", "venv", str(VIEWER_VENV)],
            [str(VIEWER_VENV / "bin" / "pip"), "install", "-q", *VIEWER_PACKAGES],
        ]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=install_timeout)
            except subprocess.TimeoutExpired:
                info["error"] = f"{' '.join(step)}: timed out after {install_timeout:.0f} s"
                return info
            if done.returncode != 0:
                info["error"] = f"{' '.join(step)}: exit {done.returncode}: {(done.stderr or done.stdout)[-1500:]}"
                return info
    if not viewer.exists():
        info["error"] = "installed, but there is no proton-viewer script in the venv"
        return info
    listing = subprocess.run(
        [str(VIEWER_VENV / "bin" / "python"), "-m", "pip", "list", "--format=json"], capture_output=True, text=True
    )
    try:
        wanted = {"llnl-hatchet", "pandas", "numpy", "triton"}
        info["installed"] = {p["name"]: p["version"] for p in json.loads(listing.stdout) if p["name"].lower() in wanted}
    except ValueError:
        pass
    info["viewer"] = str(viewer)
    return info


def bench_viewer(path: Path, repeats: int, timeout: float, install_timeout: float) -> dict:
    info = ensure_viewer(install_timeout)
    if "error" in info:
        print(f"  proton-viewer unavailable: {info['error'][:300]}", flush=True)
        return {"setup": info, "runs": [], "summary": None}
    runs = []
    for attempt in range(repeats):
        load = os.getloadavg()[0]
        result = run_measured([info["viewer"], "-m", "time/ms", str(path)], timeout=timeout)
        result["loadavg_1min_before"] = load
        result.pop("stdout_tail")
        runs.append(result)
        shown = f"> {timeout:.0f} s (killed)" if result["timed_out"] else fmt_s(result["wall_s"])
        rss = fmt_mb(result["maxrss_bytes"])
        print(f"    proton-viewer -m time/ms: {shown}  rss {rss}  rc {result['rc']}", flush=True)
        if result["timed_out"] or result["rc"] != 0 or (attempt == 0 and result["wall_s"] > 120):
            break  # one slow (or failed) run says enough; don't spend the budget repeating it
    ok = [r for r in runs if r["rc"] == 0 and not r["timed_out"]]
    summary = {
        "wall_s": stats([r["wall_s"] for r in ok]),
        "maxrss_bytes": stats([r["maxrss_bytes"] for r in ok]),
        "timed_out_after_s": timeout if any(r["timed_out"] for r in runs) else None,
        "failed_rc": next((r["rc"] for r in runs if r["rc"] != 0 and not r["timed_out"]), None),
    }
    return {"setup": info, "runs": runs, "summary": summary}


# ---- machine and reporting -----------------------------------------------------------------------------------------
def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass

    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "proton_tui"], cwd=REPO, capture_output=True, text=True
    )
    digest = hashlib.sha256()
    for source in sorted((REPO / "proton_tui").rglob("*.py")):
        digest.update(source.relative_to(REPO).as_posix().encode() + b"\0" + source.read_bytes())
    return {
        "proton_tui_sources_sha256": digest.hexdigest()[:12],
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "ram_bytes": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "textual": version("textual"),
        "orjson": version("orjson"),
        "typer": version("typer"),
        "proton_tui_commit": commit.stdout.strip() + (" (proton_tui/ modified)" if dirty.stdout.strip() else ""),
    }


def fmt_s(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def fmt_mb(value: float | None) -> str:
    return "–" if value is None else f"{value / 2**20:,.0f} MiB"


def med(summary: dict | None, key: str, fmt=fmt_s) -> str:
    item = summary.get(key) if summary else None
    return fmt(item["median"]) if item else "–"


def spread(summary: dict | None, key: str) -> str:
    item = summary.get(key) if summary else None
    if not item and summary and summary.get("timed_out_after_s"):
        return f"> {summary['timed_out_after_s']:.0f} s (timeout)"
    if not item:
        return "–"
    return f"{fmt_s(item['median'])} ({fmt_s(item['min'])}–{fmt_s(item['max'])})"


def load_range(results: dict) -> str:
    loads = [
        run.get("loadavg_1min_before")
        for entry in results["by_size"].values()
        for kind in ("tui", "json", "plain")
        for run in entry[kind]["runs"]
    ]
    loads = [x for x in loads if x is not None]
    return f"{min(loads):.1f}–{max(loads):.1f}" if loads else "not recorded"


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['ram_bytes'] / 2**30:.1f} GiB RAM, "
        f"{m['os']}; Python {m['python']}, textual {m['textual']}, orjson {m['orjson']}; proton-tui "
        f"{m['proton_tui_commit']}, sources {m['proton_tui_sources_sha256']}; {m['date']}; "
        f"{results['repeats']} runs each, median (min–max); warm page cache; "
        f"{results.get('hooked_share', 0.2):.0%} of kernels with bytes/flops32.",
        "",
        "| nodes (loaded) | file | TUI time to interactive | CPU to interactive² | import | TUI imported³ | loaded³ | "
        "table first drawn¹ | screen settled¹ | `down` | "
        "`enter` | `e` expand-all | `k` summary | TUI peak RSS | `--json` wall | `--json` RSS | `--plain` wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in results["sizes"]:
        entry = results["by_size"][str(size)]
        tui, js, plain = entry["tui"]["summary"], entry["json"]["summary"], entry["plain"]["summary"]
        loaded = next((r["phases"].get("nodes_loaded") for r in entry["tui"]["runs"] if r["phases"]), None)
        lines.append(
            f"| {size:,} ({loaded:,}) | {entry['file_bytes'] / 1e6:,.0f} MB | {spread(tui, 'time_to_interactive_s')} | "
            f"{med(tui, 'cpu_to_interactive_s')} | {med(tui, 'import_s')} | {med(tui, 'tui_imported_s')} | "
            f"{med(tui, 'loaded_s')} | "
            f"{med(tui, 'table_drawn_s')} | {med(tui, 'first_paint_s')} | "
            f"{med(tui, 'key_down_s')} | {med(tui, 'key_enter_s')} | {med(tui, 'key_expand_all_s')} | "
            f"{med(tui, 'key_summary_s')} | {med(tui, 'maxrss_bytes', fmt_mb)} | {spread(js, 'wall_s')} | "
            f"{med(js, 'maxrss_bytes', fmt_mb)} | {spread(plain, 'wall_s')} |"
        )
    lines += [
        "",
        "¹ since the capture was loaded: until the table's first `render_line` (its mount, layout, first render), "
        "and until every message queued in the app and its screen had been handled and the screen painted; `down` "
        "is posted after that and timed until its action has run, what it posted has been handled and the screen is "
        "repainted (no harness sleeps: `tui_child.py`). Loaded nodes exclude the hidden `__proton_launch_metadata` "
        "leaves. ³ each since the previous column, as `view` runs them: the file checked and mapped and the TUI "
        "imported; then the viewer's first screen (\"Reading …\") drawn and the capture read (from 128 MB in "
        "pieces). ² the TUI child's user+sys CPU time at the moment it was interactive: less sensitive than wall "
        "time to other load on the machine. Peak RSS is the process's (wait4): the viewer runs in one process. "
        f"1-minute load average before the runs: {load_range(results)}.",
        "",
    ]
    viewer = results.get("viewer")
    if viewer:
        size = viewer["size"]
        summary = viewer["summary"]
        if summary is None:
            verdict = f"not run: {viewer['setup'].get('error', '?')[:300]}"
        elif summary["timed_out_after_s"]:
            verdict = f"> {summary['timed_out_after_s']:.0f} s (killed at the timeout)"
        elif summary["failed_rc"] is not None:
            verdict = f"failed with exit code {summary['failed_rc']}"
        else:
            verdict = f"{spread(summary, 'wall_s')}, peak RSS {med(summary, 'maxrss_bytes', fmt_mb)}"
        versions = ", ".join(f"{k} {v}" for k, v in viewer["setup"].get("installed", {}).items())
        plain = results["by_size"][str(size)]["plain"]["summary"]
        lines.append(
            f"Triton `proton-viewer -m time/ms` on the {size:,}-node capture ({versions}): **{verdict}**; "
            f"`proton-tui view --plain` on the same file: {spread(plain, 'wall_s')}."
        )
        lines.append("")
    for size, limit in TARGETS.items():
        entry = results["by_size"].get(str(size))
        if not entry:
            continue
        tti = entry["tui"]["summary"]["time_to_interactive_s"]
        if tti is None:
            lines.append(f"- Target {size:,} nodes interactive ≤ {limit:g} s: **not measured (the run failed)**.")
            continue
        met = tti["median"] <= limit
        lines.append(
            f"- Target {size:,} nodes interactive ≤ {limit:g} s: **{'met' if met else 'MISSED'}** "
            f"(median {fmt_s(tti['median'])}, worst {fmt_s(tti['max'])})."
        )
    size, times = MEMORY_TARGET
    entry = results["by_size"].get(str(size))
    if entry and entry["tui"]["summary"].get("maxrss_bytes"):
        worst = entry["tui"]["summary"]["maxrss_bytes"]["max"] / entry["file_bytes"]
        lines.append(f"- Target {size:,} nodes peak memory ≤ {times:g}× the file: **{'met' if worst <= times else 'MISSED'}** "
                     f"(TUI, worst {worst:.2f}×; the viewer runs in one process).")
    return "\n".join(lines) + "\n"


def update_readme(table: str) -> None:
    readme = HERE / "README.md"
    text = readme.read_text() if readme.exists() else f"# Benchmarks\n\n{README_START}\n{README_END}\n"
    if README_START not in text or README_END not in text:
        text += f"\n{README_START}\n{README_END}\n"
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    readme.write_text(f"{head}{README_START}\n{table}{README_END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated node counts")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--hooked-share", type=float, default=0.2,
        help="share of Triton kernels with bytes/flops32 in the captures (0: a capture made without -k triton)",
    )
    parser.add_argument("--captures", type=Path, default=make_capture.DEFAULT_OUT, help="where captures are kept")
    parser.add_argument("--timeout", type=float, default=300, help="per proton-tui run, seconds")
    parser.add_argument("--plain-timeout", type=float, default=120, help="per --plain run, seconds")
    parser.add_argument("--no-viewer", action="store_true", help="skip Triton's proton-viewer comparison")
    parser.add_argument("--viewer-timeout", type=float, default=300)
    parser.add_argument("--viewer-repeats", type=int, default=None, help="default: --repeats (one if it's slow)")
    parser.add_argument("--install-timeout", type=float, default=900)
    parser.add_argument("--results", type=Path, default=HERE / ".results" / "results.json")
    parser.add_argument("--update-readme", action="store_true", help="write the table into benchmarks/README.md")
    args = parser.parse_args(argv)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    results: dict = {
        "machine": machine(),
        "sizes": sizes,
        "repeats": args.repeats,
        "seed": args.seed,
        "hooked_share": args.hooked_share,
        "by_size": {},
    }
    print(json.dumps(results["machine"]), flush=True)
    byte_compile()
    started = time.perf_counter()
    for size in sizes:
        t = time.perf_counter()
        existed = make_capture.capture_path(args.captures, size, args.seed, args.hooked_share).exists()
        path = make_capture.make(size, args.captures, args.seed, hooked_share=args.hooked_share)
        made_s = None if existed else time.perf_counter() - t
        entry = {"file": str(path), "file_bytes": path.stat().st_size, "generate_s": made_s}
        print(f"{size:,} nodes: {path} ({entry['file_bytes'] / 1e6:,.1f} MB)", flush=True)
        entry["tui"] = bench_tui(path, args.repeats, args.timeout)
        entry["json"] = bench_cli(path, "--json", args.repeats, args.timeout)
        entry["plain"] = bench_cli(path, "--plain", args.repeats, args.plain_timeout)
        results["by_size"][str(size)] = entry
        if size == min(sizes) and not args.no_viewer:
            results["viewer"] = {"size": size, **bench_viewer(
                path, args.viewer_repeats or args.repeats, args.viewer_timeout, args.install_timeout
            )}
        args.results.write_text(json.dumps(results, indent=2) + "\n")  # keep partial results
    results["total_s"] = time.perf_counter() - started
    args.results.write_text(json.dumps(results, indent=2) + "\n")
    table = markdown(results)
    print("\n" + table)
    if args.update_readme:
        update_readme(table)
    print(f"raw results: {args.results}  ({results['total_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
