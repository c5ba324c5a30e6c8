"""The sidecar of each process a workload run profiled (`<stem>.sidecar.json`, written by the start-up hook in that
process): what Proton does not record about it. run.json keeps them all, completed after the run."""

from __future__ import annotations

from pathlib import Path

import msgspec

from proton_tui.records.files import _read

SIDECAR_SUFFIX = ".sidecar.json"  # as engine/startup.py writes it


class RankRecord(msgspec.Struct):
    """One profiled process: its rank (None with one process), where it ran, the GPU it used as torch saw it,
    whether Proton started and was finalized; after the run, its capture and how it ended."""

    stem: str  # its files: <stem>.<capture suffix>, <stem>.log, <stem>.sidecar.json
    rank: int | None = None
    rank_variable: str | None = None  # the variable the rank came from (RANK, SLURM_PROCID, …)
    local_rank: int | None = None
    world_size: int | None = None
    host: str = ""
    pid: int = 0
    argv: list[str] = msgspec.field(default_factory=list)
    visible_devices: dict[str, str] = msgspec.field(default_factory=dict)
    python: str = ""
    python_version: str = ""
    started_ns: int | None = None  # wall clock (ns since the epoch) when the hook started
    ending_ns: int | None = None  # when it began to end: an uncaught exception, a signal, else its exit
    finished_ns: int | None = None  # when it finalized
    finalized: bool = False  # the hook ran its end (exit, SIGTERM, SIGINT or SIGHUP)
    profiling: bool = False  # Proton started
    proton_error: str | None = None
    triton_version: str | None = None
    torch_version: str | None = None
    gpu_index: int | None = None
    gpu_name: str | None = None
    gpu_uuid: str | None = None
    gpu_pci_bus_id: str | None = None
    # completed by proton-tui after the run
    capture: str | None = None
    log: str | None = None
    ended: str | None = None  # how the process ended where it did not finish: "killed by SIGKILL", "exit code 3"
    clock_base_ns: int | None = None  # the trace's own clock base (baseTimeNanoseconds), where it has one

    @property
    def label(self) -> str:
        return f"pid {self.pid}" if self.rank is None else f"rank {self.rank}"


def read_sidecar(path: Path) -> RankRecord:
    """Read a sidecar; RecordError naming the file when it is not one."""
    return _read(Path(path), RankRecord, "rank sidecar")
