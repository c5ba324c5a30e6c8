"""The processes of a workload run that the start-up hook acted in: their output followed live from their logs
(prefixed by the rank), what their launcher said of the ones that died, and their sidecars completed after the run
with their captures and how they ended."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import Callable
from pathlib import Path

import msgspec

from proton_tui.engine.runner import LineSplitter
from proton_tui.records import RankRecord, RecordError, read_sidecar
from proton_tui.records.ranks import SIDECAR_SUFFIX

LOG_SUFFIX = ".log"  # as engine/startup.py writes it
TAIL_POLL_S = 0.05  # how often the ranks' logs are read while the run goes on
# What launchers print of a process that died. torchrun's failure summary (torch.distributed.elastic):
#   rank      : 1 (local_rank: 1)
#   exitcode  : -9 (pid: 4242)
TORCHRUN_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)\b")
TORCHRUN_EXIT = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)\b")
# srun: "srun: error: node7: task 1: Killed", "srun: error: node7: task 1: Exited with exit code 3"
SRUN_TASK = re.compile(r"^srun: error: \S+: tasks? (\d+)(?:-\d+)?: (Killed|Exited with exit code (\d+))")
# mpirun: "… process rank 1 with PID 4242 on node n7 exited on signal 9 (Killed)."
MPIRUN_RANK = re.compile(r"process rank (\d+) with PID \d+ on node \S+ exited on signal (\d+)")
TORCHRUN_ROOT_CAUSE = "Root Cause (first observed failure)"
RANK_PREFIX = re.compile(r"^\[rank\d+\]: ?")  # torch's own prefix of a rank's error output


def ended_text(exit_code: int) -> str:
    """An exit status as words: "killed by SIGKILL" for a signal (negative, or 128 + the signal), else the code."""
    number = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code < 160 else None
    if number is not None:
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exited with code {exit_code}"


class LauncherReport:
    """Feed it the launcher's lines; `ended` holds how each rank it reported as failed ended."""

    def __init__(self) -> None:
        self.ended: dict[int, str] = {}
        self.first: int | None = None  # the rank the launcher says failed first
        self._rank: int | None = None
        self._root_cause = False

    def feed(self, lines: list[str]) -> None:
        for line in lines:
            if TORCHRUN_ROOT_CAUSE in line:
                self._root_cause = True
            elif found := TORCHRUN_RANK.match(line):
                self._rank = int(found[1])
                if self._root_cause:
                    self.first, self._root_cause = self._rank, False
            elif (found := TORCHRUN_EXIT.match(line)) and self._rank is not None:
                self.ended[self._rank] = ended_text(int(found[1]))
                self._rank = None
            elif found := SRUN_TASK.match(line):
                self.ended[int(found[1])] = ("killed by SIGKILL" if found[2] == "Killed"
                                             else ended_text(int(found[3])))
            elif found := MPIRUN_RANK.search(line):
                self.ended[int(found[1])] = ended_text(-int(found[2]))


class LogTail:
    """The ranks' logs in a run folder, read as they grow: each line delivered as ``[rank R] line``, and kept per
    rank (`lines`) for what the verdict says of a rank that raised."""

    def __init__(self, folder: Path, deliver: Callable[[list[str]], None],
                 on_rank_lines: Callable[[str, list[str]], None] | None = None) -> None:
        self.folder, self.deliver, self.on_rank_lines = folder, deliver, on_rank_lines
        self._open: dict[Path, tuple[object, LineSplitter, str]] = {}


    def read(self, final: bool = False) -> None:
        for log in sorted(self.folder.glob(f"*.rank*{LOG_SUFFIX}"), key=_rank_order):
            if log not in self._open:
                try:
                    number = _rank_of(log)
                    label = f"rank {number}" if number is not None else log.name.removesuffix(LOG_SUFFIX)
                    self._open[log] = (open(log, "rb"), LineSplitter(), label)  # noqa: SIM115
                except OSError:
                    continue
            stream, splitter, label = self._open[log]
            lines = splitter.feed(stream.read())
            if final:
                lines += splitter.flush()
            if lines:
                if self.on_rank_lines:
                    self.on_rank_lines(label, [RANK_PREFIX.sub("", line) for line in lines])
                self.deliver([f"[{label}] {line}" for line in lines])

    async def follow(self, done: asyncio.Event) -> None:
        """Read until `done`, then once more to the end."""
        try:
            while not done.is_set():
                self.read()
                try:
                    await asyncio.wait_for(done.wait(), TAIL_POLL_S)
                except asyncio.TimeoutError:
                    pass
            self.read(final=True)
        finally:
            for stream, _, _ in self._open.values():
                stream.close()


def _rank_of(path: Path) -> int | None:
    """The rank in a file name the start-up hook wrote (`<name>.rank<R>.<suffix>`)."""
    found = re.search(r"\.rank(\d+)\.[^.]+$", path.name)
    return int(found[1]) if found else None


def _rank_order(path: Path) -> tuple[int, str]:
    number = _rank_of(path)
    return (-1 if number is None else number, path.name)


def collect_ranks(folder: Path, suffix: str | None, launcher: LauncherReport) -> list[RankRecord]:
    """Every sidecar in the run folder, completed: its capture (where profiling planned one), its log, how it ended
    where its launcher said it failed; ordered by rank. A sidecar that cannot be read is left out."""
    ranks = []
    for path in folder.glob(f"*{SIDECAR_SUFFIX}"):
        try:
            record = read_sidecar(path)
        except RecordError:
            continue
        stem = folder / record.stem
        log = stem.with_name(record.stem + LOG_SUFFIX)
        ranks.append(msgspec.structs.replace(
            record, capture=str(stem.with_name(record.stem + suffix)) if suffix else None,
            log=str(log) if log.exists() else None,
            ended=launcher.ended.get(record.rank) if record.rank is not None else None))
    return sorted(ranks, key=lambda rank: (rank.rank is None, rank.rank or 0, rank.pid))


def expected_ranks(ranks: list[RankRecord], launcher: LauncherReport) -> list[int]:
    """The ranks the run should have had: up to the world size the ranks saw, and every rank any report names."""
    seen = {rank.rank for rank in ranks if rank.rank is not None} | set(launcher.ended)
    world = max([rank.world_size or 0 for rank in ranks] + [max(seen) + 1 if seen else 0])
    return list(range(world))
