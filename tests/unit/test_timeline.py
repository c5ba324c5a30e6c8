"""The timeline's geometry on real traces, without a terminal: bars where their events fall, to scale, never
narrower than a cell, events sharing a cell sharing a bar, gaps as empty cells; zoom and pan inside the trace."""

from __future__ import annotations

import math

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.timeline import TimelineLayout, panned, zoomed
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
