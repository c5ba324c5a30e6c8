"""Where a doctor's seconds go: the workload interpreter's start-up and imports, alone and 16 at once, and the
doctor's own cells run two ways: each a fresh process (as ``proton-tui doctor`` runs them), and each forked from
one interpreter that has imported torch and Triton already.

    python benchmarks/gpu/doctor_cost.py [--python PY] [--out DIR]

Prints one line per measurement; the cells' logs and captures go under DIR (default a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from proton_tui.engine.command import build_command
from proton_tui.engine.doctor import plan_doctor
from proton_tui.engine.payload import payload_path

# Run by the workload interpreter: import what every cell imports, then fork one child per command (argv, env,
# log path on stdin as JSON) and run it as `python -m …` / `python script …` would; prints each child's seconds.
FORKING = r"""
import json, os, runpy, sys, time
started = time.monotonic()
import torch, triton, triton.profiler.proton  # noqa
imported = time.monotonic() - started


class Stamped:
    def __init__(self, stream, start):
        self.stream, self.start, self.fresh = stream, start, True
    def write(self, text):
        for part in text.splitlines(keepends=True):
            if self.fresh:
                self.stream.write(f"[{time.monotonic() - self.start:7.3f}] ")
            self.stream.write(part)
            self.fresh = part.endswith("\n")
        return len(text)
    def flush(self):
        self.stream.flush()
    def __getattr__(self, name):
        return getattr(self.stream, name)


def run(argv):
    if argv[1] == "-m":
        sys.argv = [argv[2], *argv[3:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv[1:]
        sys.path.insert(0, os.path.dirname(argv[1]))
        runpy.run_path(argv[1], run_name="__main__")


request = json.load(sys.stdin)
jobs, limit = request["jobs"], request["limit"]
children, took = {}, {}
begin = time.monotonic()


def reap():
    pid, status = os.wait()
    index, start = children.pop(pid)
    took[index] = (round(time.monotonic() - start, 2), os.waitstatus_to_exitcode(status))


for index, job in enumerate(jobs):
    while len(children) >= limit:
        reap()
    forked_at = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        fd = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1); os.dup2(fd, 2)
        sys.stdout = Stamped(sys.stdout, forked_at)
        try:
            run(job["argv"])
        finally:
            print("(the child ends)", flush=True)
        sys.exit(0)
    children[pid] = (index, forked_at)
while children:
    reap()
print(json.dumps({"imported_s": round(imported, 2), "all_s": round(time.monotonic() - begin, 2), "cells": took}))
"""


def timed(argv: list[str], **kwargs) -> float:
    start = time.monotonic()
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return time.monotonic() - start


def parallel(commands: list[tuple[list[str], dict, Path]], jobs: int) -> tuple[float, list[float]]:
    start, running, took = time.monotonic(), [], []
    pending = list(commands)
    while pending or running:
        while pending and len(running) < jobs:
            argv, env, log = pending.pop(0)
            running.append((subprocess.Popen(argv, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT),
                            time.monotonic()))
        for proc, began in list(running):
            if proc.poll() is not None:
                running.remove((proc, began))
                took.append(time.monotonic() - began)
        time.sleep(0.02)
    return time.monotonic() - start, took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", default=None)
    parser.add_argument("--forked", type=int, nargs="*", default=[1, 4, 8, 24], help="children at once")
    parser.add_argument("--fresh", action="store_true", help="also the fresh-process passes and the imports")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="doctor-cost-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    py = args.python
    for what in () if not args.fresh else ("pass", "import torch", "import torch, triton, triton.profiler.proton"):
        runs = [timed([py, "-c", what]) for _ in range(3)]
        print(f"{what!r}: {', '.join(f'{s:.2f}' for s in runs)} s")
    sixteen = [] if not args.fresh else [([py, "-c", "import torch, triton"], dict(os.environ), out / f"imp{i}.log") for i in range(16)]
    if sixteen:
        wall, each = parallel(sixteen, 16)
        print(f"16 x 'import torch, triton' at once: {wall:.2f} s in all, each {min(each):.2f}-{max(each):.2f} s")

    plan = plan_doctor(py)
    cells = [c for c in plan.cells if c.expected == "works"]
    print(f"{len(cells)} cells")

    def commands(tag: str) -> list[tuple[list[str], dict, Path]]:
        made = []
        for cell in cells:
            run_dir = out / tag / cell.params.name
            run_dir.mkdir(parents=True, exist_ok=True)
            command = build_command(replace(cell.params, output=out / tag), plan.info, payload_path(), run_dir)
            made.append((list(command.argv), command.env, run_dir / "stdout.log"))
        return made

    for tag, jobs in (("fresh1", 1), ("fresh16", 16), ("fresh-all", len(cells))) if args.fresh else ():
        made = commands(tag)[:3] if jobs == 1 else commands(tag)
        wall, each = parallel(made, jobs)
        written = sum(1 for _, _, log in made if any(p.suffix in (".hatchet", ".chrome_trace", ".hatchet_msgpack")
                                                    for p in log.parent.iterdir()))
        print(f"{tag}: {wall:.2f} s in all, each {min(each):.2f}-{max(each):.2f} s, {written}/{len(made)} captures")
    for limit in args.forked:
        made = commands(f"forked{limit}")
        envs = {json.dumps(sorted(env.items())) for _, env, _ in made}
        start = time.monotonic()
        request = {"limit": limit, "jobs": [{"argv": a, "log": str(log)} for a, _, log in made]}
        answer = subprocess.run([py, "-c", FORKING], input=json.dumps(request), capture_output=True, text=True,
                                env=made[0][1], check=False)
        wall = time.monotonic() - start
        written = sum(1 for _, _, log in made if any(p.suffix in (".hatchet", ".chrome_trace", ".hatchet_msgpack")
                                                    for p in log.parent.iterdir()))
        print(f"forked, {limit} at once ({len(envs)} environment): {wall:.2f} s in all (imports included), "
              f"{written}/{len(made)} captures: {answer.stdout.strip()} {answer.stderr[-400:]}")


if __name__ == "__main__":
    main()
