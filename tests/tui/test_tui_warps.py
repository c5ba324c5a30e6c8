"""The warp timeline of an instrumentation trace (the real H200 capture: 16 CTAs × 4 warps, 2 launches) driven by
its keys: it opens on the first launch with the slowest warp of the first scope selected and its lane open; n/N go
through the stragglers, ] and [ between launches, space, e and c open and close the SM → CTA → warp groups; the
details are the selected scope's statistics across warps."""

from __future__ import annotations

import asyncio
import threading

from proton_tui.hatchet import load_profile, pending_capture
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.launch import viewer_app
from proton_tui.tui.widgets.timeline import WarpTimeline
from proton_tui.view.warps import warp_trace
from tests.helpers import FIXTURES, wait_for

INSTR = FIXTURES / "instr_scopes_trace.chrome_trace"


def details(app) -> str:
    return str(app.screen.query_one("#detail").render())


def selected(timeline: WarpTimeline) -> tuple[str, str, str]:
    event = timeline.trace.events[timeline.selected]
    lane = timeline.trace.lanes[event.lane]
    return lane.pid, lane.tid, event.name


async def test_it_opens_on_the_first_launch_s_slowest_warp_with_its_statistics():
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        assert timeline.display and app.focused is timeline and timeline.launch_at == 0
        assert selected(timeline) == ("k_scoped Core4 CTA10", "warp 1 (line 0)", "kernel")
        row = timeline.warp_rows[timeline.row]
        assert row.kind == "warp" and row.warp.name == "CTA 10 warp 1 (SM 4)" and row.line == 0
        assert {("sm", 4), ("cta", 10)} == timeline.expanded  # only the selected warp's groups are open
        # the selected row is on screen, under the ruler
        assert 0 <= timeline.row - round(timeline.scroll_y) < timeline.scrollable_content_region.height - 1
        text = details(app)
        assert "kernel in launch 1 of 2 (k_scoped)" in text and "1,331 cyc: the slowest of 64 warps" in text
        assert "64: min 969  median 1,117  p99 1,331  max 1,331 cyc" in text
        assert "trace units" in str(timeline.border_title) and "µs" not in text


async def test_n_goes_through_the_stragglers_and_opens_their_lanes():
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        await pilot.press("n")
        assert selected(timeline)[:2] == ("k_scoped Core4 CTA10", "warp 3 (line 0)")
        await pilot.press("n")  # round again
        assert selected(timeline)[:2] == ("k_scoped Core4 CTA10", "warp 1 (line 0)")
        await pilot.press("N")
        assert selected(timeline)[:2] == ("k_scoped Core4 CTA10", "warp 3 (line 0)")
        # all closed: the next straggler of the warm launch opens its SM and CTA and shows its row
        await pilot.press("c", "right_square_bracket")
        assert timeline.launch_at == 1
        await pilot.press("c")
        assert all(row.kind == "sm" for row in timeline.warp_rows)
        await pilot.press("n")
        assert selected(timeline)[:2] == ("k_scoped Core127 CTA3", "warp 3 (line 0)")
        assert timeline.warp_rows[timeline.row].kind == "warp" and {("sm", 127), ("cta", 3)} <= timeline.expanded
        assert 0 <= timeline.row - round(timeline.scroll_y) < timeline.scrollable_content_region.height - 1
        assert "717 cyc: the slowest of 64 warps" in details(app)


async def test_launches_keep_the_warp_and_scope_and_their_own_statistics():
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        await pilot.press("down", "right")  # warp 1's nested line, its first scope, then the next
        assert selected(timeline) == ("k_scoped Core4 CTA10", "warp 1 (line 1)", "compute")
        first_window = timeline.window
        await pilot.press("right_square_bracket")
        assert timeline.launch_at == 1 and selected(timeline) == ("k_scoped Core4 CTA10", "warp 1 (line 1)", "compute")
        assert timeline.window[0] > first_window[1]  # the warm launch, on its own
        assert "compute in launch 2 of 2" in details(app) and "64: min 284  median 316  p99 361  max 361 cyc" in \
            details(app)
        await pilot.press("right_square_bracket")  # no third launch
        assert timeline.launch_at == 1
        await pilot.press("left_square_bracket")
        assert timeline.launch_at == 0 and "compute in launch 1 of 2" in details(app)


async def test_groups_open_and_close_and_a_closed_group_is_one_row():
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        assert len(timeline.warp_rows) == 16 + 1 + 8  # 16 SMs, CTA 10, its 4 warps × 2 lines
        await pilot.press("space")  # on a warp: closes its CTA, the CTA's row selected
        assert len(timeline.warp_rows) == 17 and timeline.warp_rows[timeline.row].label == "  ▸ CTA 10"
        assert selected(timeline)[:2] == ("k_scoped Core4 CTA10", "warp 1 (line 0)")
        await pilot.press("enter")  # Enter on a group opens it
        assert len(timeline.warp_rows) == 25
        await pilot.press("c")
        assert len(timeline.warp_rows) == 16 and timeline.warp_rows[timeline.row].label == "▸ SM 4 CTA 10"
        bar = timeline.layout_.bar_of(timeline.selected, timeline.row)
        assert bar is not None and timeline.selected in bar.events
        await pilot.press("e")
        assert len(timeline.warp_rows) == 16 * (1 + 1 + 8)
        assert selected(timeline)[:2] == ("k_scoped Core4 CTA10", "warp 1 (line 0)")


async def test_the_sm_clock_given_for_a_capture_without_warps_is_refused_in_the_viewer_too():
    app = viewer_app(pending_capture(FIXTURES / "vecadd_hook.hatchet", sm_clock=1_980_000))
    async with app.run_test(size=(80, 24)):
        await wait_for(lambda: app.return_code is not None, what="the viewer to exit")
    assert app.return_code == 2
    assert app.load_error == ("--sm-clock-khz: " + str(FIXTURES / "vecadd_hook.hatchet") + " is not an "
                              "instrumentation trace (its cycles are what the clock converts)")


async def test_the_sm_clock_given_shows_times_beside_the_cycles():
    app = viewer_app(pending_capture(INSTR, sm_clock=1_980_000))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(lambda: app.screen.query(WarpTimeline) and app.screen.query_one(WarpTimeline).display,
                       what="the timeline")
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        assert timeline.warps.clock_khz == 1_980_000
        assert "1,338 (" in str(timeline.border_title) and " ns" not in str(timeline.border_title)  # trace units
        assert "1,331 cyc (672 ns): the slowest of 64 warps" in details(app)
        assert "the reported max SM clock 1,980 MHz" in details(app)


async def test_the_first_launch_is_shown_and_takes_its_keys_while_the_tree_is_still_built():
    app = viewer_app(pending_capture(INSTR, sm_clock=1_980_000))
    opening, building = app.opening, threading.Event()
    read = opening.finish

    def finish(first=None):  # the tree is built once the test lets it
        def then_hold(trace):
            first(trace)
            building.wait(60)
        return read(then_hold)

    opening.finish = finish
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: app.screen.query(WarpTimeline) and app.screen.query_one(WarpTimeline).display,
                       what="the first launch")
        await pilot.pause()
        screen, timeline = app.screen, app.screen.query_one(WarpTimeline)
        assert screen.profile is None and app.focused is timeline and timeline.warps.clock_khz == 1_980_000
        assert "Launch 1 of 2:" in str(timeline.border_title) and "building the kernel table" in \
            str(screen.query_one("#summary").render())
        assert "1,331 cyc (672 ns): the slowest of 64 warps" in details(app)
        assert "2 launches being worked out…" in details(app)  # the first launch's drawing does not wait for them
        await pilot.press("right_square_bracket", "t", "escape", "g", "f")  # the table's keys wait for the tree
        assert timeline.display and timeline.launch_at == 1 and screen.profile is None
        await pilot.press("i")  # the details it shows take their key
        assert screen.query_one("#detail").has_class("-tall")
        event = timeline.selected
        building.set()
        await wait_for(lambda: screen.profile is not None, what="the tree")
        await pilot.pause()
        assert timeline.display and app.focused is timeline and (timeline.launch_at, timeline.selected) == (1, event)
        assert screen.profile.trace is timeline.trace
        # then every launch is worked out off the UI thread, and the details say the scope across them
        across = warp_trace(load_profile(INSTR).trace, 1_980_000).across["k_scoped"][timeline.trace.events[event].name]
        await wait_for(lambda: f"all launches  {across.count}: min {across.min:,} cyc" in details(app), 30,
                       "the statistics across all launches")
        assert "being worked out" not in details(app)
        await pilot.press("t")
        assert screen.views.current == "table" and screen.query_one("#table").model is not None


async def test_a_read_started_before_the_viewer_is_up_is_shown_once_its_screen_is():
    from proton_tui.view.reading import read_now

    pending = pending_capture(INSTR, sm_clock=1_980_000)
    reading = read_now(pending)  # as `view FILE` starts it, while Textual is imported
    await wait_for(lambda: reading._held, what="the first launch held for the viewer")
    app = viewer_app(pending, reading=reading)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(lambda: app.screen.profile is not None, what="the tree")
            await pilot.pause()
            timeline = app.screen.query_one(WarpTimeline)
            assert app.opening.reading is reading and timeline.display and app.focused is timeline
            assert timeline.launch_at == 0 and app.screen.profile.trace is timeline.trace
            assert "1,331 cyc (672 ns): the slowest of 64 warps" in details(app)
    finally:
        pending.close()


async def test_the_tree_is_built_only_once_the_first_launch_is_painted(monkeypatch):
    # the tree's build holds the interpreter: started before the launch's frame, it delays that frame by its length
    app = viewer_app(pending_capture(INSTR))
    painted: list[bool] = []  # at each paint of a launch: whether the read had been let go on to the tree
    drawn = WarpTimeline.render_line

    def render_line(self, y):
        if self.warps is not None and app.opening.reading is not None:
            painted.append(app.opening.reading.first_shown.is_set())
        return drawn(self, y)

    monkeypatch.setattr(WarpTimeline, "render_line", render_line)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: app.screen.profile is not None, what="the tree")
        await pilot.pause()
    assert painted and not painted[0]


async def test_the_timeline_says_when_its_launch_has_been_painted():
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline, painted, told = app.screen.query_one(WarpTimeline), [], []
        drawn = timeline.render_line
        timeline.render_line = lambda y: (painted.append(y), drawn(y))[1]
        timeline.when_drawn(lambda: told.append(len(painted)))
        await asyncio.sleep(0.2)
        assert not told  # nothing painted since
        timeline.refresh()
        await wait_for(lambda: told, 5, "the call after the paint")
        await asyncio.sleep(0.2)
        assert told[0] > 0 and len(told) == 1  # after a paint, once


async def test_a_scroll_bar_that_comes_with_the_rows_lays_the_launch_out_again_at_the_width_left(monkeypatch):
    # the widget's size stays the same, so no resize says so: laid out for the width before, its last bars were hidden.
    # The warps worked out in the background (as a large trace's are), the timeline waiting meanwhile without rows
    from proton_tui.tui.widgets import profile_views

    monkeypatch.setattr(profile_views, "WARPS_IN_BACKGROUND", 0)
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        timeline = app.screen.query_one(WarpTimeline)
        await wait_for(lambda: timeline.warps is not None, what="the warps")
        await pilot.pause()
        assert timeline.show_vertical_scrollbar and not timeline.show_horizontal_scrollbar
        assert timeline.layout_.width == timeline.bars_width == timeline.scrollable_content_region.width - \
            timeline.name_width - 1


async def test_the_table_and_back_keep_a_closed_group_s_row():
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        await pilot.press("c", "down")
        row, event = timeline.row, timeline.selected
        assert timeline.warp_rows[row].label == "▸ SM 6 CTA 11"
        await pilot.press("t", "t")
        assert timeline.display and (timeline.row, timeline.selected) == (row, event)
        assert timeline.expanded == set()


def warps_held_back(monkeypatch) -> threading.Event:
    """The real capture's 512 events read as a large trace's (off the UI thread), and its warps held back until the
    event returned is set."""
    from proton_tui.tui.widgets import profile_views
    from proton_tui.view import warps

    monkeypatch.setattr(profile_views, "WARPS_IN_BACKGROUND", 100)
    release, real = threading.Event(), warps.warp_trace

    def held(trace, clock_khz):
        release.wait(30)
        return real(trace, clock_khz)

    monkeypatch.setattr(warps, "warp_trace", held)
    return release


async def test_a_large_trace_s_warps_are_read_off_the_ui_thread(monkeypatch):
    """Above WARPS_IN_BACKGROUND events the timeline first says it is reading the warps, the keys still answer,
    and the first launch appears when the worker is done."""
    release = warps_held_back(monkeypatch)
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        assert "reading the warps of 512 events" in str(timeline.border_title)
        await pilot.press("f1")  # the UI answers while the warps are read
        await wait_for(lambda: app.screen.__class__.__name__ == "HelpScreen", 10, "the help screen")
        await pilot.press("escape")
        release.set()
        await wait_for(lambda: timeline.warps is not None, 30, "the warps")
        assert timeline.launch_at == 0 and selected(timeline)[2] == "kernel"
        # the details follow the selected warp as they do when the warps are read at once
        await wait_for(lambda: "kernel in launch 1 of 2 (k_scoped)" in details(app), 10, "the warp's details")
        assert "1,331 cyc: the slowest of 64 warps" in details(app)


async def test_warps_landing_after_going_back_to_the_table_leave_its_details(monkeypatch):
    release = warps_held_back(monkeypatch)
    app = ProtonApp(load_profile(INSTR))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        await pilot.press("t")  # back to the table before the warps are read
        await pilot.pause()
        before = details(app)
        release.set()
        await wait_for(lambda: timeline.warps is not None, 30, "the warps")
        await pilot.pause()
        assert details(app) == before and "ROOT" in before


async def test_it_opens_with_the_selected_warp_in_view_however_far_down_its_row_is(tmp_path):
    """A launch of 256 CTAs: the slowest warp's SM is far down the rows, opened for it and scrolled to."""
    import subprocess
    import sys

    from tests.helpers import REPO

    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_instr_trace.py"), "--ctas", "256", "--launches",
                    "5", "--out", str(tmp_path)], check=True, capture_output=True, timeout=120)
    (path,) = tmp_path.glob("*.chrome_trace")
    app = ProtonApp(load_profile(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: app.screen.query(WarpTimeline) and app.screen.query_one(WarpTimeline).warps
                       is not None, what="the warps")
        await pilot.pause()
        timeline = app.screen.query_one(WarpTimeline)
        assert timeline.warp_rows[timeline.row].kind == "warp" and timeline.row > 20
        top = round(timeline.scroll_y)
        assert top <= timeline.row < top + timeline.scrollable_content_region.height - 1, (timeline.row, top)

