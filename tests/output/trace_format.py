"""The Chrome trace-event format's rules (the "Trace Event Format" document, as Perfetto's JSON importer and
chrome://tracing read it) written as a checker, and the rules a rank set's merged trace adds on top: one process per
rank named ``rank R (host, GPU …)``, every event of every rank kept, flows paired inside their rank, the clocks
aligned. Each function returns the rules broken, one line each (an empty list: the trace keeps them all)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

# Every phase the format defines: duration B/E, complete X, instant i/I, counter C, async b/n/e and the legacy
# S/T/p/F, flow s/t/f, sample P, object N/O/D, metadata M, memory dump V/v, mark R, clock sync c, context ( ).
PHASES = frozenset("BEXiICbneSTpFstfPNODMVvRc()")
METADATA = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
            "thread_name": "name", "thread_sort_index": "sort_index"}  # each with the key its args must hold
DISPLAY_UNITS = ("ms", "ns")
FLOW_PHASES = ("s", "t", "f")
UINT32 = 2**32  # pid and tid: what Perfetto's importer keeps of them
MERGED_PROCESS = re.compile(r"^rank (\d+)\b")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def events_of(document) -> list:
    return document["traceEvents"] if isinstance(document, dict) else document


def format_errors(document) -> list[str]:
    """The format's own rules, for any trace."""
    if isinstance(document, dict):
        if not isinstance(document.get("traceEvents"), list):
            return ["the top level has no traceEvents list"]
        unit = document.get("displayTimeUnit", "ms")
        errors = [] if unit in DISPLAY_UNITS else [f"displayTimeUnit {unit!r} is not one of {DISPLAY_UNITS}"]
    elif isinstance(document, list):
        errors = []
    else:
        return ["the top level is neither an object with traceEvents nor an array of events"]
    slices: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    named: Counter = Counter()
    for at, event in enumerate(events_of(document)):
        if not isinstance(event, dict):
            errors.append(f"event {at} is not an object")
            continue
        phase = event.get("ph")
        if phase not in PHASES:
            errors.append(f"event {at}: unknown phase {phase!r}")
            continue
        for key in ("pid", "tid"):
            if not (_integer(event.get(key)) and 0 <= event[key] < UINT32):
                errors.append(f"event {at}: {key} {event.get(key)!r} is not an integer of 32 bits")
        if phase == "M":
            errors += _metadata_errors(at, event)
            if event.get("name") in ("process_name", "thread_name"):
                named[(event["name"], event.get("pid"), event.get("tid") if event["name"] == "thread_name" else 0)] += 1
            continue
        if not _number(event.get("ts")):
            errors.append(f"event {at}: ts {event.get('ts')!r} is not a number (microseconds)")
            continue
        if phase == "X":
            if not (_number(event.get("dur")) and event["dur"] >= 0):
                errors.append(f"event {at}: a complete event's dur {event.get('dur')!r} is not a number >= 0")
                continue
            slices[(event["pid"], event["tid"])].append((event["ts"], event["ts"] + event["dur"]))
    errors += [f"{kind} of pid {pid}{f' tid {tid}' if kind == 'thread_name' else ''} given {count} times"
               for (kind, pid, tid), count in named.items() if count > 1]
    return errors + _flow_errors(events_of(document), slices)


def _metadata_errors(at: int, event: dict) -> list[str]:
    name = event.get("name")
    if name not in METADATA:
        return [f"event {at}: unknown metadata {name!r}"]
    args = event.get("args")
    value = args.get(METADATA[name]) if isinstance(args, dict) else None
    wanted = _integer if METADATA[name] == "sort_index" else (
        lambda found: isinstance(found, list) if METADATA[name] == "labels" else isinstance(found, str))
    return [] if wanted(value) else [f"event {at}: {name} without args.{METADATA[name]}"]


def _flow_errors(events: list, slices: dict[tuple, list[tuple[float, float]]]) -> list[str]:
    """Flow events (s, t, f): an id (a number, or a string of hex digits); a flow is (cat, name, id), started by s,
    stepped by t, finished by f, in the order of the file, never started twice before it is finished; s and t bind
    to the slice that encloses them on their thread, f to the slice that starts at or after it (with bp "e": the
    one that encloses it)."""
    errors, open_flows = [], {}
    for at, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") not in FLOW_PHASES or not _number(event.get("ts")):
            continue
        phase, flow_id = event["ph"], event.get("id")
        if not (_integer(flow_id) or (isinstance(flow_id, str) and re.fullmatch(r"(0x)?[0-9a-fA-F]+", flow_id))):
            errors.append(f"event {at}: flow {phase} without a usable id ({flow_id!r})")
            continue
        key = (event.get("cat"), event.get("name"), flow_id)
        thread, ts = slices.get((event.get("pid"), event.get("tid")), []), event["ts"]
        enclosing = any(start <= ts <= end for start, end in thread)
        if phase == "f" and event.get("bp") != "e":
            enclosing = any(start >= ts for start, _ in thread)
        if not enclosing:
            errors.append(f"event {at}: flow {phase} of id {flow_id} binds to no slice on its thread")
        if phase == "s":
            if key in open_flows:
                errors.append(f"event {at}: flow id {flow_id} started again before it finished")
            open_flows[key] = ts
        elif key not in open_flows:
            errors.append(f"event {at}: flow {phase} of id {flow_id} without a start")
        elif ts < open_flows[key]:
            errors.append(f"event {at}: flow {phase} of id {flow_id} before its start")
        elif phase == "f":
            del open_flows[key]
    return errors + [f"flow id {key[2]} started, never finished" for key in open_flows]


def merged_errors(merged, inputs: dict[int, tuple[dict | list, str]]) -> list[str]:
    """The rules of a rank set's merged trace, past the format's: `inputs` holds each rank's own trace and the name
    its process must have (``rank R (host, GPU …)``)."""
    errors = format_errors(merged)
    if errors:
        return errors
    events = events_of(merged)
    rank_of: dict[int, int] = {}
    names: dict[int, list[str]] = defaultdict(list)
    for event in events:
        if event["ph"] == "M" and event["name"] == "process_name":
            found = MERGED_PROCESS.match(event["args"]["name"])
            if found is None:
                errors.append(f"process {event['pid']} is named {event['args']['name']!r}, not by its rank")
                continue
            rank_of[event["pid"]] = int(found[1])
            names[int(found[1])].append(event["args"]["name"])
    for rank, (_, heading) in inputs.items():
        if not names[rank] or names[rank][0] != heading or any(
                not name.startswith(f"{heading} process ") for name in names[rank][1:]):
            errors.append(f"rank {rank}'s processes are named {names[rank]}, not {heading!r} (one per rank)")
    if set(names) - set(inputs):
        errors.append(f"processes of ranks that are not in the set: {sorted(set(names) - set(inputs))}")
    unnamed = {event["pid"] for event in events} - set(rank_of)
    if unnamed:
        errors.append(f"events of processes no rank names: {sorted(unnamed)}")
        return errors
    by_rank: dict[int, list[dict]] = defaultdict(list)
    flow_ranks: dict[object, set[int]] = defaultdict(set)
    for event in events:
        by_rank[rank_of[event["pid"]]].append(event)
        if event["ph"] in FLOW_PHASES:
            flow_ranks[event["id"]].add(rank_of[event["pid"]])
    errors += [f"flow id {flow_id} is shared by ranks {sorted(ranks)}" for flow_id, ranks in flow_ranks.items()
               if len(ranks) > 1]
    bases = {rank: document.get("baseTimeNanoseconds") if isinstance(document, dict) else None
             for rank, (document, _) in inputs.items()}
    aligned = all(_integer(base) for base in bases.values())
    origin = min(bases.values()) if aligned else None
    if (merged.get("baseTimeNanoseconds") if isinstance(merged, dict) else None) != origin:
        errors.append(f"the merged clock base is {merged.get('baseTimeNanoseconds')}, not the earliest rank's "
                      f"({origin})")
    for rank, (document, _) in inputs.items():
        errors += _rank_errors(rank, events_of(document), by_rank[rank],
                               (bases[rank] - origin) / 1000 if aligned else None)
    return errors


def _rank_errors(rank: int, own: list[dict], mine: list[dict], shift: float | None) -> list[str]:
    """One rank's events in the merged trace against its own trace: as many of each phase and metadata kind (and
    one process_name and process_sort_index per process added where its trace named none), the same events in the
    same order but for pid, flow id and ts, and ts moved by `shift` µs (the clock bases' difference; None: by its
    first event, to 0)."""
    errors = []

    def kinds(events: list[dict]) -> Counter:
        return Counter((event.get("ph"), event.get("name") if event.get("ph") == "M" else None) for event in events)

    added = {("M", "process_name"): len({e["pid"] for e in mine}), ("M", "process_sort_index"): len({e["pid"] for e in mine})}
    wanted = kinds(own)
    for kind, count in added.items():
        wanted[kind] = count
    if kinds(mine) != wanted:
        errors.append(f"rank {rank}: events {dict(kinds(mine))}, its trace has {dict(kinds(own))}")
    data_own = [event for event in own if event.get("ph") != "M" or event.get("name") not in METADATA
                or event["name"].startswith("thread")]
    data_mine = [event for event in mine if event["ph"] != "M" or event["name"].startswith("thread")]
    if len(data_own) != len(data_mine):
        return errors
    if shift is None:
        shift = -min((event["ts"] for event in own if _number(event.get("ts"))), default=0.0)
    for at, (before, after) in enumerate(zip(data_own, data_mine)):
        if {key: value for key, value in before.items() if key not in ("pid", "ts", "id")} != {
                key: value for key, value in after.items() if key not in ("pid", "ts", "id")}:
            errors.append(f"rank {rank}: event {at} changed: {after} from {before}")
        elif _number(before.get("ts")) and not math.isclose(after["ts"], before["ts"] + shift, rel_tol=0,
                                                             abs_tol=1e-6):
            errors.append(f"rank {rank}: event {at} at {after['ts']} µs, not {before['ts'] + shift} (its clock "
                          f"moved by {shift} µs)")
    return errors
