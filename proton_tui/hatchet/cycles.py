"""What an instrumentation capture's cycle counts mean, said honestly.

Proton's instrumentation backend writes, per `proton.language` scope, `cycles` summed over every CTA, warp and
launch, and `normalized_cycles`: the same divided by CTAs × warps per CTA, still summed over launches, and divided
by every warp even when only some were recorded (warp sampling). A parent scope's children do not add up to it:
index math, masking and the waits between scopes belong to no child. The file records neither the launch count
nor which warps were sampled; a run knows both.

This module adds the uncovered part of each scope as a derived child, and derives per warp, per launch and time
at the device's clock for any scope, from the capture and what its run says (`CycleFacts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proton_tui.hatchet.facts import CycleFacts
from proton_tui.hatchet.profile import Profile
from proton_tui.hatchet.tree import add_children, is_number, with_inclusive

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace
    from proton_tui.records import RunRecord

UNATTRIBUTED = "(unattributed)"
NORMALIZED_KEY = "normalized_cycles"
LOAD_SCOPE = re.compile(r"(^|[^a-z])loads?([^a-z]|$)", re.IGNORECASE)
LOAD_CAUTION = ("if this scope only issues loads, it measures their issue: the wait for the data lands in the "
                "first scope that uses it")


@dataclass(frozen=True)
class ScopeNumbers:
    """One scope's cycles, and what they come to per warp, per launch and in time."""

    cycles: float  # summed over every CTA, warp and launch
    normalized: float | None  # Proton's normalized_cycles
    divisor: int | None  # what Proton divided by: CTAs × warps per CTA
    per_warp: float | None  # cycles per recorded warp, every launch summed (corrected for sampling when known)
    launches: int | None
    per_launch: float | None  # per warp per launch, when the launches are known
    clock_khz: float | None  # the device's SM clock as its device_info reports it (the maximum)
    time_ns: float | None  # per_launch (or per_warp) at that clock
    sampling: tuple[int, int] | None  # (warps recorded, warps) per CTA when the run sampled warps
    caution: str | None  # what the number may be mistaken for


def with_unattributed(profile: Profile) -> Profile:
    """The profile with an UNATTRIBUTED child under each scope whose child scopes cover fewer cycles than it (the
    children then add up to their parent); a profile without cycles is returned as it is."""
    if profile.unit != "cycles":
        return profile
    own, has_own, children = profile.own, profile.has_own, profile.children
    remainders: dict[int, float] = {}
    for node, kids in enumerate(children):
        if node and has_own[node]:
            timed = [kid for kid in kids if has_own[kid]]
            if timed and (left := own[node] - sum(own[kid] for kid in timed)) > 0:
                remainders[node] = left
    if not remainders:
        return profile
    order: list[int] = []  # original ids in the new pre-order; -(parent + 1) for a derived child
    open_nodes: list[int] = []
    depths = profile.depths
    for node in range(profile.node_count):
        while open_nodes and depths[open_nodes[-1]] >= depths[node]:
            closed = open_nodes.pop()
            if closed in remainders:
                order.append(-(closed + 1))
        order.append(node)
        open_nodes.append(node)
    for closed in reversed(open_nodes):
        if closed in remainders:
            order.append(-(closed + 1))
    new_id = {old: index for index, old in enumerate(order) if old >= 0}
    lists: dict[str, list] = {key: [] for key in ("names", "parents", "depths", "metrics", "own", "has_own",
                                                  "devices", "own_launches", "own_bytes", "derived")}
    for old in order:
        if old >= 0:
            parent = profile.parents[old]
            values = (profile.names[old], new_id[parent] if parent >= 0 else parent, depths[old],
                      profile.metrics[old], own[old], has_own[old], profile.devices[old], profile.own_launches[old],
                      profile.own_bytes[old], False)
        else:
            parent = -old - 1
            values = (UNATTRIBUTED, new_id[parent], depths[parent] + 1,
                      _derived_metrics(profile, parent, remainders[parent]), remainders[parent], True,
                      profile.devices[parent], 0, 0.0, True)
        for key, value in zip(lists, values):
            lists[key].append(value)
    new_children: list[list[int]] = []
    add_children(new_children, lists["parents"])
    return with_inclusive(Profile(
        path=profile.path, children=new_children, is_kernel=[], unit=profile.unit, device_info=profile.device_info,
        hidden_internal=profile.hidden_internal, device_note=profile.device_note, trace=profile.trace,
        reference_total=profile.reference_total, cycle_facts=profile.cycle_facts, **lists))


def _derived_metrics(profile: Profile, parent: int, cycles: float) -> dict:
    """The remainder's cycles, and its normalized_cycles where the parent and every timed child have one."""
    metrics = {"cycles": cycles}
    values = [_normalized(profile, node) for node in [parent, *profile.children[parent]]
              if node == parent or profile.has_own[node]]
    if all(value is not None for value in values):
        metrics[NORMALIZED_KEY] = values[0] - sum(values[1:])
    return metrics


def _normalized(profile: Profile, node: int) -> float | None:
    metrics = profile.metrics[node]
    value = metrics.get(NORMALIZED_KEY) if isinstance(metrics, dict) else None
    return float(value) if is_number(value) else None


def scope_numbers(profile: Profile, node: int) -> ScopeNumbers | None:
    """A scope's cycles per warp, per launch and in time; None for a node without cycles of its own."""
    if profile.unit != "cycles" or not profile.has_own[node]:
        return None
    return numbers_of(profile, profile.own[node], _normalized(profile, node), profile.devices[node],
                      profile.names[node])


def numbers_of(profile: Profile, cycles: float, normalized: float | None, device: str, name: str) -> ScopeNumbers:
    """ScopeNumbers from a scope's (or a sum of scopes') cycles and normalized_cycles, on `device`."""
    facts = profile.cycle_facts or CycleFacts()
    divisor = round(cycles / normalized) if normalized else None
    per_warp, sampling = normalized, None
    if facts.sampled_warps and facts.ctas and divisor and divisor % facts.ctas == 0:
        warps = divisor // facts.ctas
        if facts.sampled_warps < warps:
            per_warp, sampling = cycles / (facts.ctas * facts.sampled_warps), (facts.sampled_warps, warps)
    launches = facts.launches
    per_launch = per_warp / launches if per_warp is not None and launches else None
    clock = profile.sm_clock_khz(device)
    shown = per_launch if per_launch is not None else per_warp
    time_ns = shown * 1e6 / clock if shown is not None and clock else None
    caution = LOAD_CAUTION if name != UNATTRIBUTED and LOAD_SCOPE.search(name) else None
    return ScopeNumbers(cycles, normalized, divisor, per_warp, launches, per_launch, clock, time_ns, sampling,
                        caution)


def kernel_numbers(profile: Profile, name: str) -> ScopeNumbers | None:
    """ScopeNumbers of a kernel-summary row: the outermost scopes of that name, summed (their normalized_cycles
    too, where every one has it)."""
    nodes = [node for node in range(profile.node_count) if profile.is_kernel[node] and profile.names[node] == name]
    if profile.unit != "cycles" or not nodes:
        return None
    normalized = [_normalized(profile, node) for node in nodes]
    devices = {profile.devices[node] for node in nodes}
    return numbers_of(profile, sum(profile.own[node] for node in nodes),
                      None if None in normalized else sum(normalized), devices.pop() if len(devices) == 1 else "",
                      name)


def facts_from_record(record: RunRecord, source: str = "the run") -> CycleFacts | None:
    """What a run record (run.json) says about its instrumentation capture: the launches and CTAs its run knew, the
    warps it recorded and the SM clock the run reported. None for a run not under the instrumentation backend."""
    params = record.params
    if params.backend != "instrumentation" or not params.profile:
        return None
    clock = record.sm_clock_khz
    clock = clock if is_number(clock) and clock > 0 else None  # kHz, as the run wrote it
    return CycleFacts(launches=record.launches or None, ctas=record.ctas or None,
                      sampled_warps=len(params.warps) if params.warps else None, sampling_known=True, source=source,
                      clock_khz=clock)


def facts_from_trace(trace: Trace) -> CycleFacts | None:
    """An instrumentation trace holds only the warps it recorded, and its launches as the warp timeline splits them
    (`Trace.warp_launches`): the count is known when the trace holds one instrumented kernel."""
    lanes, by_kernel = trace.warp_launches()
    if not lanes:
        return None
    counts = {len(launches) for launches in by_kernel.values()}
    return CycleFacts(launches=counts.pop() if len(by_kernel) == 1 else None, sampling_known=True,
                      source="the trace")

