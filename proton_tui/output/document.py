"""The JSON output (`--json`): the summary, kernels, tree, trace and warps as one versioned document."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, TextIO

import orjson

from proton_tui import JSON_SCHEMA
from proton_tui.console import path_text
from proton_tui.hatchet import Profile
from proton_tui.hatchet.cycles import scope_numbers
from proton_tui.hatchet.profile import NO_UNIT
from proton_tui.view.display import Display

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace
    from proton_tui.view.warps import ScopeStats, WarpTrace

STRAGGLERS_AT_ONCE = 4096  # stragglers made and written at a time: 88k of them in the 83 MB instrumentation trace


def json_text(document) -> str:
    """A JSON document as every command prints it: indented, one trailing newline. An integer past 64 bits (orjson
    holds none) is written whole by the standard library's encoder, in the same layout."""
    out = io.StringIO()
    write_json(document, out)
    return out.getvalue()


class Streamed:
    """A list of a document made and written one item at a time (`write_json`), never held whole; `batch`: its
    items (none of them streamed) are made and written that many at a time, for a long list of small ones."""

    def __init__(self, items: Callable[[], Iterable], batch: int = 1) -> None:
        self.items, self.batch = items, batch

    def __iter__(self) -> Iterator:
        return iter(self.items())


def write_json(document, out: TextIO) -> None:
    """`document` written to `out` as `json_text` lays it out, its `Streamed` lists item by item."""
    _write(document, out, 0)
    out.write("\n")


def _dumped(value, level: int) -> str:
    try:
        text = orjson.dumps(value, default=str, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        text = json.dumps(value, default=str, indent=2, ensure_ascii=False)
    return text.replace("\n", "\n" + "  " * level) if level else text


def _streams(value) -> bool:
    return isinstance(value, Streamed) or isinstance(value, dict) and any(map(_streams, value.values()))


def _write(value, out: TextIO, level: int) -> None:
    inner = "  " * (level + 1)
    if isinstance(value, dict) and value and _streams(value):
        out.write("{")
        for at, (key, item) in enumerate(value.items()):
            out.write(("," if at else "") + "\n" + inner + _dumped(str(key), 0) + ": ")
            _write(item, out, level + 1)
        out.write("\n" + "  " * level + "}")
    elif isinstance(value, Streamed) and value.batch > 1:
        written, items = False, iter(value)
        while batch := list(islice(items, value.batch)):
            text = _dumped(batch, level)  # "[", each item on a line of its own as one at a time has it, then "]"
            out.write(("," if written else "[") + text[1:text.rindex("\n")])
            written = True
        out.write("\n" + "  " * level + "]" if written else "[]")
    elif isinstance(value, Streamed):
        written = False
        for item in value:
            out.write(("," if written else "[") + "\n" + inner)
            _write(item, out, level + 1)
            written = True
        out.write("\n" + "  " * level + "]" if written else "[]")
    else:
        out.write(_dumped(value, level))


def kernel_records(display: Display) -> list[dict]:
    """The kernel summary in display order as plain records: `name` exact as the capture has it, `readable_name`
    as people read it, `short_name` and `full_name` its other forms; `value` and `avg` in the document's unit."""
    profile = display.profile
    return [
        {
            "name": kernel.name,
            "readable_name": display.names.readable_name(kernel.name),
            "short_name": display.names.short(kernel.name),
            "full_name": display.names.full(kernel.name),
            "value": kernel.value,
            "percent": profile.percent(kernel.value),
            "launches": None if profile.unit == "cycles" else kernel.launches,  # an instrumentation tree has none
            "avg": kernel.avg,
            "bytes": kernel.bytes or None,
            "gbps": kernel.gbps,
            "peak_percent": profile.kernel_peak_percent(kernel),
            "devices": list(kernel.devices),
        }
        for kernel in display.kernels()
    ]


def tree_records(display: Display) -> list[dict]:
    """The tree's shown rows in display order as plain records; `value` and `avg` in the document's unit."""
    profile = display.profile
    return [
        {
            "depth": profile.depths[node],
            "path": profile.path_of(node, display.names.exact),
            "path_names": path_names(profile, node),
            "name": profile.names[node],
            "readable_name": display.names.readable_name(profile.names[node]),
            "short_name": display.names.short(profile.names[node]),
            "full_name": display.names.full(profile.names[node]),
            "value": profile.inclusive[node],
            "percent": profile.percent(profile.inclusive[node]),
            "launches": None if profile.unit == "cycles" else profile.launches[node],
            "avg": profile.avg(node) if profile.launches[node] else None,
            "gbps": profile.gbps(node),
            "peak_percent": profile.peak_percent(node),
            "device": profile.devices[node] or None,
        }
        for node in display.walk()
    ]


def path_names(profile: Profile, node: int) -> list[str]:
    """The node's exact names from the top level down (ROOT: none): one list per node, where two nodes can share a
    `path` text (a frame named "a / b")."""
    return [profile.names[step] for step in profile.lineage(node)]


def json_unit(profile: Profile) -> str | None:
    """What every `value`/`avg` of a document is in: "ns", "cycles", or None when the capture has neither."""
    return None if profile.unit == NO_UNIT else profile.unit


def summary_json(display: Display) -> dict:
    """Metrics summary, totals and kernel summary in one document (a trace's lanes too; an instrumentation trace's
    warp statistics, with times at its SM clock when known: `Profile.run_clock_khz`)."""
    profile = display.profile
    return {
        "schema": JSON_SCHEMA,
        "file": path_text(profile.path),
        "unit": json_unit(profile),
        "empty": profile.is_empty,
        "total": profile.total,
        "kernel_launches": profile.recorded_launches,
        "distinct_kernels": profile.kernel_count,
        "devices": profile.device_names(),
        "device_totals": profile.device_totals(),
        "nodes": profile.node_count,
        "hidden_internal_nodes": profile.hidden_internal,
        "empty_nodes": profile.empty_count(),
        "metrics_summary": profile.metrics_summary(),
        "kernels": kernel_records(display),
        **({"trace": trace_record(profile.trace, profile.run_clock_khz)} if profile.trace is not None
           else {}),
        "instrumentation": instrumentation_record(display) if profile.unit == "cycles" else None,
    }


def instrumentation_record(display: Display) -> dict:
    """An instrumentation capture's derived numbers: what its run says, and each scope's cycles per warp and per
    launch, and time at the SM clock (null where unknown)."""
    profile = display.profile
    facts = profile.cycle_facts
    scopes = []
    sampled = None
    for node in display.walk():
        numbers = scope_numbers(profile, node)
        if numbers is None:
            continue
        sampled = sampled or numbers.sampling
        scopes.append({
            "path": profile.path_of(node, display.names.exact), "path_names": path_names(profile, node),
            "name": profile.names[node],
            "derived": profile.is_derived(node), "cycles": numbers.cycles, "normalized_cycles": numbers.normalized,
            "divisor": numbers.divisor, "per_warp": numbers.per_warp, "per_warp_per_launch": numbers.per_launch,
            "time_ns": numbers.time_ns, "clock_khz": numbers.clock_khz, "caution": numbers.caution,
        })
    return {
        "launches": facts.launches if facts else None,
        "source": facts.source if facts else None,
        "sampling_known": bool(facts and facts.sampling_known),
        "sampled_warps": list(sampled) if sampled else None,
        "scopes": scopes,
    }


def trace_record(trace: Trace, clock_khz: int | None = None) -> dict:
    """A trace's lanes for scripts: name, kind, busy time, idle gaps (start, end), kernels; times in ns from the
    trace's first event. An instrumentation trace adds `warps` (`warps_record`)."""
    from proton_tui.view.warps import warp_trace

    def lanes() -> Iterator[dict]:
        for lane, summary in zip(trace.lanes, trace.summaries()):
            gaps = summary.gaps
            yield {"name": lane.name, "kind": lane.kind, "kernels": summary.kernels, "busy": summary.busy,
                   "idle": sum(end - start for start, end in gaps), "gaps": [list(gap) for gap in gaps]}

    record = {"span": trace.end - trace.start, "base_ns": trace.base_ns, "flows": trace.flow_count,
              "lanes": Streamed(lanes)}
    if (warps := warp_trace(trace, clock_khz)) is not None:
        record["warps"] = warps_record(warps)
    return record


def warps_record(warps: WarpTrace) -> dict:
    """An instrumentation trace's launches and their scopes' statistics across warps, in cycles (`us`: the same at
    the SM clock, null when it is unknown); stragglers all named."""

    def scope_record(scope: ScopeStats) -> dict:
        numbers = {"min": scope.min, "median": scope.median, "p99": scope.p99, "max": scope.max}
        return {"name": scope.name, "count": scope.count, **numbers,
                "us": {key: warps.micros(value) for key, value in numbers.items()} if warps.clock_khz else None,
                "stragglers": Streamed(lambda: ({"name": sample.warp.name, "sm": sample.warp.sm, "cta": sample.warp.cta,
                                                 "warp": sample.warp.warp, "launch": sample.launch,
                                                 "cycles": sample.cycles} for sample in scope.stragglers),
                                       STRAGGLERS_AT_ONCE)}

    def scope_records(scopes: dict) -> Streamed:
        return Streamed(lambda: map(scope_record, scopes.values()))

    return {
        "clock_khz": warps.clock_khz,
        "p99": "nearest rank",
        "launches": Streamed(lambda: ({"number": launch.number, "kernel": launch.kernel, "ordinal": launch.ordinal,
                                       "start": launch.start, "end": launch.end, "sms": launch.counts[1],
                                       "ctas": launch.ctas, "warps": launch.counts[0],
                                       "scopes": scope_records(launch.scopes)}
                                      for launch in warps.launches)),
        "across_launches": {kernel: scope_records(scopes) for kernel, scopes in warps.across.items()},
    }
