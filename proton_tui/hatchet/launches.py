"""What a trace's events add up to, worked out for all of them at once with sorted-array operations on its columns:
each lane's busy time and idle gaps (`lane_summaries`), and an instrumentation trace's warp lanes and launches
(`warp_launches`, the rule described in `proton_tui.view.warps`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from proton_tui.hatchet.columns import merged, segment_bounds, time_order
from proton_tui.hatchet.lanes import LaneSummary, WarpLane, warp_lanes

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace


def lane_summaries(trace: Trace) -> list[LaneSummary]:
    """Every lane's kernels merged where they overlap: busy time (the merged intervals' lengths summed in time
    order), the gaps between them, the span from the first kernel's start to the latest end, and the lane's other
    events counted by category."""
    columns, count = trace.columns, len(trace.lanes)
    kernels = np.flatnonzero(columns.category_mask("kernel"))
    starts, ends, lanes = columns.start[kernels], columns.end[kernels], columns.lane[kernels]
    opens, reach = merged(starts, ends, lanes)
    group_starts, group_lanes = starts[opens], lanes[opens]
    lengths = (reach - group_starts).tolist()
    groups = segment_bounds(group_lanes, count).tolist()
    bounds = segment_bounds(lanes, count).tolist()
    ends_of = reach.tolist()
    starts_of = group_starts.tolist()
    # the latest end of each lane's kernels; its first kernel's start
    nonempty = np.flatnonzero(np.diff(bounds))
    latest = [0.0] * count
    if len(nonempty):
        for lane, end in zip(nonempty.tolist(), np.maximum.reduceat(ends, np.array(bounds)[nonempty]).tolist()):
            latest[lane] = end
    first_start = starts.tolist()
    others = np.flatnonzero(~columns.category_mask("kernel"))
    other_counts: list[dict[str, int]] = [{} for _ in range(count)]
    if len(others):
        span = len(columns.categories)
        pairs, counted = np.unique(columns.lane[others].astype(np.int64) * span + columns.category[others],
                                   return_counts=True)
        for pair, number in zip(pairs.tolist(), counted.tolist()):
            other_counts[pair // span][columns.categories[pair % span]] = number
    summaries = []
    shared = (starts_of, ends_of)
    for lane in range(count):
        low, high = groups[lane], groups[lane + 1]
        kernels_here = bounds[lane + 1] - bounds[lane]
        active = latest[lane] - first_start[bounds[lane]] if kernels_here else 0.0
        summaries.append(LaneSummary(kernels_here, sum(lengths[low:high], 0.0), active, other_counts[lane], shared,
                                     low, high))
    return summaries


def warp_launches(trace: Trace) -> tuple[Mapping[int, WarpLane], dict[str, list[np.ndarray]]]:
    """The warp lanes (lane → where it ran) and each instrumented kernel's events split into launches, the kernels
    in the order their first events come in the columns."""
    lanes = warp_lanes(trace.lanes)
    if not lanes:
        return lanes, {}
    kernels = lanes.kernels
    kernel_of_lane = lanes.kernel
    warp_of_lane = np.zeros(len(trace.lanes), dtype=np.int64)  # a CTA's warp (numbered from 0): once a launch
    numbers = lanes.numbers
    by = np.lexsort((lanes.warp[numbers], lanes.cta[numbers]))
    cta, warp = lanes.cta[numbers][by], lanes.warp[numbers][by]
    warp_of_lane[numbers[by]] = np.cumsum(np.r_[False, (np.diff(cta) != 0) | (np.diff(warp) != 0)])
    event_kernel = kernel_of_lane[trace.columns.lane]
    on_warps = np.flatnonzero(event_kernel >= 0)
    found, first = np.unique(event_kernel[on_warps], return_index=True)
    by_kernel = {}
    for kernel in found[np.argsort(first)].tolist():
        indices = on_warps[event_kernel[on_warps] == kernel] if len(found) > 1 else on_warps
        by_kernel[kernels[kernel]] = split_launches(trace, indices, warp_of_lane)
    return lanes, by_kernel


def split_launches(trace: Trace, indices: np.ndarray, warp_of_lane: np.ndarray) -> list[np.ndarray]:
    """One kernel's events (in column order) as launches: cut where an event starts after every earlier one has
    ended, each piece joining the launch before it unless one of its warps already ran there."""
    columns = trace.columns
    order = indices[time_order(columns.start[indices])]
    starts, ends = columns.start[order], columns.end[order]
    cuts = np.flatnonzero(starts[1:] > np.maximum.accumulate(ends)[:-1]) + 1
    bounds = [0, *cuts.tolist(), len(order)]
    warps = warp_of_lane[columns.lane[order]]
    ran = np.zeros(int(warps.max()) + 1 if len(warps) else 1, dtype=bool)  # the warps of the launch so far
    launches: list[tuple[int, int]] = []  # (the first piece's start, the last one's end)
    for low, high in zip(bounds[:-1], bounds[1:]):
        here = warps[low:high]
        if launches and not ran[here].any():
            launches[-1] = (launches[-1][0], high)
        else:
            if launches:
                ran[:] = False
            launches.append((low, high))
        ran[here] = True
    return [order[low:high] for low, high in launches]
