"""The Chrome traces of a rank set merged into one trace for Perfetto's UI (or chrome://tracing): every event of every
rank kept, one process per rank named ``rank R (host, GPU)``, lanes and flow ids made unique per rank (Proton numbers
both from 0 in every process, so a naive merge cross-links launches to another rank's kernels), and the ranks'
clocks aligned by the traces' own clock base (``baseTimeNanoseconds``, Triton >= 3.9) where every trace has one,
else by each rank's first event."""

from __future__ import annotations

from dataclasses import dataclass

PID_STRIDE = 1000  # a rank's processes are numbered rank × PID_STRIDE + their order in its trace
FLOW_PHASES = ("s", "t", "f")
PROCESS_METADATA = ("process_name", "process_sort_index")
BY_CLOCK_BASE, BY_FIRST_EVENT = "the traces' clock base (baseTimeNanoseconds)", "each rank's first event"


@dataclass(frozen=True)
class RankTrace:
    """One rank's Chrome trace as decoded JSON (a list of events, or an object with ``traceEvents``)."""

    rank: int
    name: str  # what its process is called: "rank 1 (node7, GPU 0)"
    document: dict | list

    @property
    def events(self) -> list[dict]:
        document = self.document
        return document.get("traceEvents", []) if isinstance(document, dict) else document

    @property
    def base_ns(self) -> int | None:
        base = self.document.get("baseTimeNanoseconds") if isinstance(self.document, dict) else None
        return base if isinstance(base, int) and not isinstance(base, bool) else None

    def first_ts(self) -> float:
        return min((event["ts"] for event in self.events if _number(event.get("ts"))), default=0.0)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def merge_traces(traces: list[RankTrace]) -> tuple[dict, str]:
    """The merged trace, and how its clocks were aligned (said in the header of what shows it)."""
    bases = [trace.base_ns for trace in traces]
    aligned = bool(traces) and all(base is not None for base in bases)
    origin = min(bases) if aligned else None  # type: ignore[type-var]
    merged: list[dict] = []
    flow_offset = 0
    for trace in traces:
        shift = (trace.base_ns - origin) / 1000 if aligned else -trace.first_ts()  # µs, as ts is
        pids: dict[object, int] = {}
        described: set[tuple[int, str]] = set()
        largest_flow = -1
        for event in trace.events:
            pid = pids.setdefault(event.get("pid", 0), trace.rank * PID_STRIDE + len(pids))
            copy = {**event, "pid": pid}
            if _number(event.get("ts")):
                copy["ts"] = event["ts"] + shift
            if event.get("ph") in FLOW_PHASES and isinstance(event.get("id"), int):
                copy["id"] = event["id"] + flow_offset
                largest_flow = max(largest_flow, event["id"])
            if event.get("ph") == "M" and event.get("name") in PROCESS_METADATA:
                copy["args"] = {**(event.get("args") or {}), **_process_args(trace, pid, event["name"])}
                described.add((pid, event["name"]))
            merged.append(copy)
        for pid in pids.values():  # what Proton did not say of a process (Triton <= 3.7 names none)
            merged += [{"ph": "M", "name": name, "pid": pid, "tid": 0, "args": _process_args(trace, pid, name)}
                       for name in PROCESS_METADATA if (pid, name) not in described]
        flow_offset += largest_flow + 1
    document: dict = {"traceEvents": merged, "displayTimeUnit": "ns"}
    if aligned:
        document["baseTimeNanoseconds"] = origin
    return document, BY_CLOCK_BASE if aligned else BY_FIRST_EVENT


def _process_args(trace: RankTrace, pid: int, metadata: str) -> dict:
    """A rank's process as the merged trace names and orders it (by rank)."""
    if metadata == "process_sort_index":
        return {"sort_index": pid}
    order = pid - trace.rank * PID_STRIDE
    return {"name": trace.name if order == 0 else f"{trace.name} process {order}"}
