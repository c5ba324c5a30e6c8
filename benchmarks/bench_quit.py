"""Quitting while a large capture is read: `proton-tui view FILE` in a real terminal (tmux), `q` pressed at a
chosen moment of the load; measured from the keystroke to the end of the process, plus the time from the start of
the command to the reading line on the terminal. `--table-runs N`: also N runs that wait for the table, timed from
the start of the command until the table is on the terminal (screen polled every 5 ms).

    python benchmarks/bench_quit.py benchmarks/.captures/proton_1000000_seed0.hatchet --delays 0,0.5,1,2,3,4 --repeats 3

Writes benchmarks/.results/quit.json (git-ignored) and prints a table. After each try it checks that no process
is left that has the capture open.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tmux_pane import screen, tmux  # beside this script

HERE = Path(__file__).resolve().parent
SESSION = "proton-tui-bench-quit"


def holders(path: Path) -> list[int]:
    """The processes that have `path` open or mapped."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fds = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
            maps = (proc / "maps").read_text()
        except OSError:
            continue
        if str(path) in fds or str(path) in maps:
            found.append(int(proc.name))
    return found


def one_try(command: list[str], delay: float) -> dict:
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    start = time.perf_counter()
    tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "48", " ".join(command))
    tmux("set-option", "-t", SESSION, "remain-on-exit", "on")
    pid = int(tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").strip())
    watch = os.pidfd_open(pid)
    reading = None
    while reading is None and time.perf_counter() - start < 30:
        if "Reading" in screen(SESSION):
            reading = time.perf_counter() - start
        else:
            time.sleep(0.005)
    time.sleep(delay)
    table_shown = "GPU time" in screen(SESSION)
    pressed = time.perf_counter()
    tmux("send-keys", "-t", SESSION, "q")
    ended = select.select([watch], [], [], 30)[0]
    quit_s = time.perf_counter() - pressed if ended else None
    os.close(watch)
    left = holders(Path(command[-1]))
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return {"delay_s": delay, "reading_line_s": reading, "table_shown_before_q": table_shown, "quit_s": quit_s,
            "processes_left": len(left)}


def to_table(command: list[str]) -> float:
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    start = time.perf_counter()
    tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "48", " ".join(command))
    while "GPU time" not in screen(SESSION):
        if time.perf_counter() - start > 120:
            raise SystemExit("no table after 120 s")
        time.sleep(0.005)
    shown = time.perf_counter() - start
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("--delays", default="0,0.5,1,2,3,4", help="seconds after the reading line shows")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--table-runs", type=int, default=0)
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("proton-tui")))
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench_quit.py: needs tmux")
    command = [args.command, "view", str(args.capture.resolve())]
    tries = [one_try(command, float(delay)) for _ in range(args.repeats) for delay in args.delays.split(",") if delay]
    tables = [to_table(command) for _ in range(args.table_runs)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout
    record = {"capture": str(args.capture), "bytes": args.capture.stat().st_size, "commit": commit.strip(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor() or
              platform.machine(), "cores": os.cpu_count(), "tries": tries, "to_table_s": tables}
    out = HERE / ".results" / "quit.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.capture.name} ({record['bytes']:,} bytes), commit {record['commit']}, {record['date']}")
    print("| q pressed after the reading line | table already shown | keystroke → process ended (median, max) |")
    print("|---|---|---|")
    for delay in filter(None, args.delays.split(",")):
        rows = [t for t in tries if t["delay_s"] == float(delay)]
        times = [t["quit_s"] for t in rows if t["quit_s"] is not None]
        shown = sum(t["table_shown_before_q"] for t in rows)
        unended = len(rows) - len(times)
        text = f"{statistics.median(times) * 1000:.0f} ms, {max(times) * 1000:.0f} ms" if times else "—"
        print(f"| {delay} s | {shown} of {len(rows)} | {text}{f' ({unended} never ended)' if unended else ''} |")
    if tables:
        print(f"command started → table on the terminal ({len(tables)} runs): median "
              f"{statistics.median(tables) * 1000:.0f} ms, min {min(tables) * 1000:.0f} ms, max {max(tables) * 1000:.0f} ms")
    lines = [t["reading_line_s"] for t in tries if t["reading_line_s"] is not None]
    if not lines:
        return
    print(f"command started → reading line on the terminal: median {statistics.median(lines) * 1000:.0f} ms, "
          f"max {max(lines) * 1000:.0f} ms; processes left after quitting: {sum(t['processes_left'] for t in tries)}")


if __name__ == "__main__":
    main()
