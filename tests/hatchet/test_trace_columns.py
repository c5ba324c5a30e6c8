"""A trace's events held as columns: every view of a trace (its tree, its lanes' busy time and gaps, an
instrumentation trace's launches and per-scope statistics, the text and JSON outputs) reads the columns, never an
event as an object; the sorted-array helpers are exact where shifting values by an offset would round."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np

from proton_tui.hatchet import load_profile
from proton_tui.hatchet.columns import Columns, merged, order_by, segment_running_max, time_order
from proton_tui.hatchet.trace_tree import _by_warp_start_longest
from proton_tui.output.document import summary_json, write_json
from proton_tui.output.text import trace_lines
from proton_tui.view.display import Display
from proton_tui.view.warps import warp_trace
from tests.helpers import FIXTURES, REPO


def generated(tmp_path, script: str, *arguments: str):
    subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *arguments, "--out", str(tmp_path)],
                   check=True, capture_output=True, timeout=120)
    (path,) = tmp_path.glob("*.chrome_trace")
    return path


def test_every_view_of_a_trace_reads_its_columns(tmp_path, monkeypatch):
    made = []
    real = Columns.event
    monkeypatch.setattr(Columns, "event", lambda self, index: made.append(index) or real(self, index))
    paths = [generated(tmp_path / "warps", "make_instr_trace.py", "--ctas", "16", "--launches", "3"),
             generated(tmp_path / "kernels", "make_trace.py", "500"), FIXTURES / "triton390_two_streams.chrome_trace"]
    for path in paths:
        profile = load_profile(path)
        trace = profile.trace
        trace.tree()
        warps = warp_trace(trace, 1_980_000)
        assert trace_lines(trace, 1_980_000) and (warps is None or warps.launches)
        write_json(summary_json(Display(profile)), io.StringIO())
        assert len(trace.columns) > 10
    assert made == [], f"{len(made)} events made one at a time"
    assert trace.events[0].name == trace.columns.name_of(0)  # a pane still gets one


def test_a_running_maximum_per_lane_is_exact_where_an_offset_would_round():
    ends = np.array([1e16 + 2, 1e16 + 4, 3.0, 1e16 + 2, 5.0])  # 1e16 + 2 and 1e16 + 4: apart by one float step
    lanes = np.array([0, 0, 1, 1, 2])
    assert segment_running_max(ends, lanes).tolist() == [1e16 + 2, 1e16 + 4, 3.0, 1e16 + 2, 5.0]
    starts = np.array([0.0, 1e16 + 3, 0.0, 2.0, 4.0])
    opens, reach = merged(starts, ends, lanes)
    assert opens.tolist() == [True, True, True, False, True] and reach.tolist() == [1e16 + 2, 1e16 + 4, 1e16 + 2,
                                                                                    5.0]


def test_ordering_by_two_columns_is_lexsorts_order_ties_and_all():
    """One sort of complex numbers orders by group, then time, exactly as lexsort does: times that differ in their
    last bit, equal pairs in position order, signed zeros, groups large and small; the warps' order also puts the
    longest first among equal starts."""
    rng = np.random.default_rng(7)
    count = 50_000
    groups = rng.integers(0, 300, count).astype(np.int64)
    groups[::97] = 2**40  # a large group number, exact as a double
    starts = rng.integers(0, 40, count).astype(np.float64) * 0.1  # many equal starts
    starts[::13] = np.nextafter(starts[::13], np.inf)  # one bit above another
    starts[::17] = -0.0
    durations = rng.integers(1, 5, count).astype(np.float64)
    assert np.array_equal(order_by(groups, starts), np.lexsort((starts, groups)))
    assert np.array_equal(_by_warp_start_longest(groups, starts, durations),
                          np.lexsort((-durations, starts, groups)))
    assert np.array_equal(_by_warp_start_longest(groups, np.arange(count, dtype=np.float64), durations),
                          np.lexsort((-durations, np.arange(count), groups)))  # no two starts equal


def test_ordering_by_time_is_a_stable_sorts_order_ties_and_all():
    """Times sorted through their bits give exactly a stable sort's order: equal times in position order, times that
    differ in their last bit, signed zeros, the largest doubles, infinity; a negative time or a NaN, as floats."""
    rng = np.random.default_rng(11)
    count = 50_000
    times = rng.integers(0, 40, count).astype(np.float64) * 0.1  # many equal times
    times[::13] = np.nextafter(times[::13], np.inf)  # one bit above another
    times[::17] = -0.0
    times[::19] = 0.0
    times[::101] = np.finfo(np.float64).max
    times[::103] = np.inf
    for case in (times, np.r_[times, -1.5], np.r_[times, np.nan, 0.5], times[:1], times[:0]):
        assert np.array_equal(time_order(case), np.argsort(case, kind="stable"))
