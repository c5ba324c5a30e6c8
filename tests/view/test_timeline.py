"""The timeline's geometry on real traces, without a terminal: bars where their events fall, to scale, never
narrower than a cell, events sharing a cell sharing a bar, gaps as empty cells; zoom and pan inside the trace."""

from __future__ import annotations

import math

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.view.timeline import TimelineLayout, panned, zoomed
from tests.helpers import FIXTURES

V39 = FIXTURES / "triton390_two_streams.chrome_trace"


def trace():
    return load_profile(V39).trace


@pytest.mark.parametrize("width", [10, 80, 200, 5000])
def test_every_event_is_in_exactly_one_bar_at_its_place(width):
    t = trace()
    layout = TimelineLayout(t, t.start, t.end, width)
    drawn = sorted(i for row in layout.rows for bar in row for i in bar.events)
    assert drawn == list(range(len(t.events)))
    for lane, row in enumerate(layout.rows):
        assert all(bar.lane == lane and bar.width >= 1 and 0 <= bar.x and bar.end <= width for bar in row)
        assert all(a.end <= b.x for a, b in zip(row, row[1:]))  # left to right, never overlapping
        for bar in row:
            first, last = t.events[bar.events[0]], max((t.events[i] for i in bar.events), key=lambda e: e.end)
            assert bar.x == max(0, math.floor((first.start - t.start) / layout.cell_ns))
            assert bar.end == min(width, max(bar.x + 1, math.ceil((last.end - t.start) / layout.cell_ns)))


def test_a_wide_enough_timeline_draws_each_kernel_alone_and_the_gaps_between():
    t = trace()
    layout = TimelineLayout(t, t.start, t.end, 200_000)  # 200 ns a cell
    gpu = layout.rows[1]
    assert all(len(bar.events) == 1 for bar in gpu) and len(gpu) == len(t.lane_events(1))
    busy, gaps = t.busy(1)
    empty = sum(b.x - a.end for a, b in zip(gpu, gpu[1:]))
    assert empty == pytest.approx(sum(end - start for start, end in gaps) / layout.cell_ns, abs=2 * len(gaps))


def test_events_in_one_cell_share_a_bar():
    t = trace()
    layout = TimelineLayout(t, t.start, t.end, 10)
    assert any(len(bar.events) > 1 for row in layout.rows for bar in row)


def test_zoom_and_pan_stay_inside_the_trace():
    bounds = (0.0, 1000.0)
    assert zoomed(0.0, 1000.0, 2.0, 500.0, bounds) == (250.0, 750.0)
    assert zoomed(0.0, 1000.0, 2.0, 0.0, bounds) == (0.0, 500.0)  # about the left edge
    assert zoomed(250.0, 750.0, 0.25, 500.0, bounds) == (0.0, 1000.0)  # never wider than the trace
    assert panned(0.0, 500.0, 0.25, bounds) == (125.0, 625.0)
    assert panned(400.0, 900.0, 1.0, bounds) == (500.0, 1000.0)  # stops at the end
    assert panned(100.0, 600.0, -1.0, bounds) == (0.0, 500.0)


def test_the_ruler_labels_times_from_the_windows_start():
    t = trace()
    layout = TimelineLayout(t, 1_000_000.0, 2_000_000.0, 100)
    assert layout.ruler(25) == [(0, "1.00 ms"), (25, "1.25 ms"), (50, "1.50 ms"), (75, "1.75 ms")]


# ---- the warp timeline of an instrumentation trace ----------------------------------------------------------------
def warp_timeline():
    from proton_tui.view.warps import warp_trace

    return warp_trace(load_profile(FIXTURES / "instr_scopes_trace.chrome_trace").trace)


def test_warp_rows_group_sm_cta_warp_and_collapsed_groups_draw_one_summary_row():
    from proton_tui.view.timeline import warp_rows

    warps = warp_timeline()
    first = warps.launches[0]
    rows = warp_rows(warps, first, expanded=set())
    assert [row.label for row in rows][:3] == ["▸ SM 0 CTA 8", "▸ SM 2 CTA 9", "▸ SM 4 CTA 10"]
    assert len(rows) == 16 and all(row.kind == "sm" for row in rows)
    # a collapsed SM stands for its warps' outermost scopes
    sm4 = rows[2]
    assert sorted(sm4.source.members) == sorted(i for w, lines in first.warps.items() if w.sm == 4 for i in lines[0])
    rows = warp_rows(warps, first, expanded={("sm", 4), ("cta", 10)})
    labels = [row.label for row in rows]
    at = labels.index("▾ SM 4 CTA 10")
    assert labels[at + 1:at + 10] == ["  ▾ CTA 10", "    warp 0 line 0", "    warp 0 line 1", "    warp 1 line 0",
                                      "    warp 1 line 1", "    warp 2 line 0", "    warp 2 line 1",
                                      "    warp 3 line 0", "    warp 3 line 1"]
    warp1 = rows[at + 5]
    assert [warps.trace.events[i].name for i in warp1.source.members] == ["load", "compute", "store"]
    assert warp1.warp.name == "CTA 10 warp 1 (SM 4)" and warp1.line == 1


def test_warp_rows_are_laid_out_to_scale_in_their_launch():
    from proton_tui.view.timeline import warp_rows

    warps = warp_timeline()
    second = warps.launches[1]
    rows = warp_rows(warps, second, expanded={("sm", 124), ("cta", 0)})
    start = min(warps.trace.events[i].start for i in second.events)
    end = max(warps.trace.events[i].end for i in second.events)
    layout = TimelineLayout(warps.trace, start, end, 80, rows=[row.source for row in rows], snap=True)
    for number, row in enumerate(rows):
        drawn = sorted(i for bar in layout.rows[number] for i in bar.events)
        assert drawn == sorted(row.source.members)  # every event of the row, once
        assert all(a.end <= b.x for a, b in zip(layout.rows[number], layout.rows[number][1:]))
        for bar in layout.rows[number]:
            first = warps.trace.events[bar.events[0]]
            # snapped: from the cell boundary nearest its start
            assert bar.x == round((first.start - start) / layout.cell_ns) or len(bar.events) > 1
            assert layout.bar_of(bar.events[0], number) == bar
    cta0 = next(number for number, row in enumerate(rows) if row.label == "    warp 0 line 0")
    kernel = layout.rows[cta0][0]
    event = warps.trace.events[kernel.events[0]]
    assert len(kernel.events) == 1 and kernel.width == round(event.end / layout.cell_ns - start / layout.cell_ns) \
        - kernel.x
    # scopes that follow one another without a gap stay bars of their own
    nested = layout.rows[cta0 + 1]
    assert [[warps.trace.events[i].name for i in bar.events] for bar in nested] == [["load"], ["compute"], ["store"]]


def test_ruler_labels_carry_the_decimals_their_step_needs():
    from proton_tui.view.formatting import format_tick

    assert format_tick(0, 1e6) == "0 ns" and format_tick(38.13e6, 6.45e6) == "38.13 ms"  # as format_value writes
    assert [format_tick(38.13e6 + i * 6450, 6450) for i in range(3)] == ["38.130 ms", "38.136 ms", "38.143 ms"]
    assert format_tick(38_130_012.3, 2.7) == "38.130012 ms" and format_tick(500.26, 0.4) == "500.3 ns"
    assert format_tick(1.5e9, 2e8) == "1.50 s" and format_tick(1_234.5e9, 1e6) == "1,234.500 s"


def test_a_zoomed_layouts_ruler_never_repeats_a_label():
    t = trace()
    start = t.start + 38.13e6
    labels = [label for _, label in TimelineLayout(t, start, start + 40_000, 120).ruler(origin=t.start)]
    assert len(labels) == 8 and len(set(labels)) == 8, labels
