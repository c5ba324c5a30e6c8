#!/usr/bin/env python3
"""Peak memory of `proton-tui view FILE --json` with any child process counted: RSS summed over the process
and its children, sampled every 20 ms (wait4's ru_maxrss, as bench_view.py reports, is the largest single process).

    .venv/bin/python benchmarks/rss_tree.py FILE [FILE ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from proton_tui.engine.runner import _proc_stat


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (the runner's reader of /proc/<pid>/stat: state, ppid, …)."""
    return [int(entry) for entry in os.listdir("/proc")
            if entry.isdigit() and (stat := _proc_stat(entry)) and int(stat[1]) == pid]


def main() -> int:
    for file in sys.argv[1:]:
        process = subprocess.Popen([sys.executable, "-m", "proton_tui", "view", file, "--json"],
                                   stdout=subprocess.DEVNULL)
        peak = 0
        while process.poll() is None:
            peak = max(peak, sum(rss_bytes(pid) for pid in [process.pid, *children(process.pid)]))
            time.sleep(0.02)
        print(f"{os.path.basename(file)}: peak RSS, process and children together: {peak / 2**20:,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
