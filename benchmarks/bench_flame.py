"""The flame view in a real terminal (tmux, 160×48): `proton-tui view FILE`, once the table is drawn `g` is pressed
and the time measured until the flame view is on the terminal; then how fast it answers: `right` (the next frame:
the detail pane shows its name), `enter` (zoom in: the title says so), `escape` (zoom out), each keystroke timed
until the screen shows its effect (screen polled every 5 ms; the poll itself takes ~3 ms).

    python benchmarks/bench_flame.py benchmarks/.captures/proton_100000_seed0.hatchet --runs 5

Writes benchmarks/.results/flame.json (git-ignored) and prints medians and maxima.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import tmux_pane  # beside this script
from tmux_pane import screen, tmux

HERE = Path(__file__).resolve().parent
SESSION = "proton-tui-bench-flame"


def until(test, seconds: float, what: str) -> float:
    return tmux_pane.until(SESSION, test, seconds, f"bench_flame.py: {what}")


def press(key: str, test, what: str) -> float:
    start = time.perf_counter()
    tmux("send-keys", "-t", SESSION, key)
    until(test, 30, what)
    return time.perf_counter() - start


def detail_name(text: str) -> str | None:
    """The detail pane's name line (inside its frame)."""
    for line in text.splitlines():
        inside = line.strip().strip("│").strip()
        if inside.startswith("name  "):
            return inside
    return None


def title(text: str) -> str:
    return next((line for line in text.splitlines() if "Flame: ROOT" in line), "")


def one_run(command: list[str]) -> dict:
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    tmux("new-session", "-d", "-s", SESSION, "-x", "160", "-y", "48", " ".join(command))
    tmux("set-option", "-s", "escape-time", "0")  # tmux would hold an Escape 500 ms to see if a sequence follows
    until(lambda s: "▼time" in s and "ROOT" in s, 120, "the table")
    time.sleep(0.5)  # the readable names land after the first paint: let that repaint pass
    result = {"flame_s": press("g", lambda s: "Flame: ROOT" in s, "the flame view")}
    before = detail_name(screen(SESSION))
    moves = []
    for _ in range(5):
        moves.append(press("down", lambda s, b=before: detail_name(s) != b, "a move down"))
        before = detail_name(screen(SESSION))
    result["move_s"] = moves
    zoomed = {}
    result["zoom_in_s"] = press("Enter", lambda s: "(zoomed" in s and zoomed.setdefault("title", title(s)), "zoom in")
    result["zoom_out_s"] = press("Escape", lambda s: title(s) != zoomed["title"], "zoom out")
    result["back_to_table_s"] = press("g", lambda s: "▼time" in s, "the table again")
    subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("proton-tui")))
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench_flame.py: needs tmux")
    command = [args.command, "view", str(args.capture.resolve())]
    runs = [one_run(command) for _ in range(args.runs)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout
    record = {"capture": str(args.capture), "bytes": args.capture.stat().st_size, "commit": commit.strip(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor() or
              platform.machine(), "cores": os.cpu_count(), "runs": runs}
    out = HERE / ".results" / "flame.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"{args.capture.name} ({record['bytes']:,} bytes), commit {record['commit']}, {record['date']}, "
          f"{args.runs} runs")
    for key, label in (("flame_s", "g → flame view drawn"), ("move_s", "arrow → next frame's details drawn"),
                       ("zoom_in_s", "Enter → zoomed view drawn"), ("zoom_out_s", "Escape → zoomed out"),
                       ("back_to_table_s", "g → table drawn again")):
        values = [v for run in runs for v in (run[key] if isinstance(run[key], list) else [run[key]])]
        print(f"{label}: median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms "
              f"({len(values)} keystrokes)")


if __name__ == "__main__":
    main()
