"""The profile screen at 80x24 and larger: the filter's marker, its errors, the room the table gets, the sorted
column, a trace's header, the flame view drawn over a timeline, a zoomed ruler and the selected row kept in view."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.widgets import Input

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp, sample_capture
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.timeline import LaneTimeline
from tests.helpers import FIXTURES, capture_path, wait_for
from tests.tui.screen_text import screen_lines, shown_in, words

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


async def settled(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def filtered(pilot, field: str, value: str) -> None:
    """Type `value` into the filter bar's `field`, and wait until the filter has been applied (or refused)."""
    await pilot.press("f")
    before = pilot.app.screen.view_filter
    pilot.app.screen.query_one(f"#{field}", Input).value = value
    await wait_for(lambda: pilot.app.screen.view_filter is not before or pilot.app.screen.query_one(
        "#filter-error").display, seconds=10, what="the filter")
    await pilot.pause()


def summary(pilot) -> str:
    return words(shown_in(pilot.app, pilot.app.screen.query_one("#summary")))


@SIZES
async def test_the_filter_marker_shows_while_a_filter_is_on_even_after_escape(size):
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=size) as pilot:
        await settled(pilot)
        await filtered(pilot, "include", "forward")
        await pilot.press("escape")  # the bar closes; the filter stays on, and the header says so
        await pilot.pause()
        assert not pilot.app.screen.query_one("#filter-bar").display
        assert "filtered: 32.9% of the capture (F clears)" in summary(pilot), summary(pilot)
        await pilot.press("F")
        await pilot.pause()
        assert "filtered" not in summary(pilot) and "GPU time 31.10 ms" in summary(pilot), summary(pilot)


async def test_a_depth_filter_is_marked_too():
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await filtered(pilot, "depth", "1")
        assert "filtered: 59 rows hidden by min % or depth (F clears)" in summary(pilot), summary(pilot)


async def test_a_depth_filter_deeper_than_the_tree_says_it_hides_no_row():
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await filtered(pilot, "depth", "15")
        assert "filtered: min % and depth hide no row (F clears)" in summary(pilot), summary(pilot)


async def test_f_clears_a_filter_given_on_the_command_line():
    """`view FILE --include forward` opens filtered: the header says so, and F clears it with no bar opened."""
    from proton_tui.hatchet import pending_capture
    from proton_tui.tui.opening import Opening
    from proton_tui.view.filters import ViewFilter

    opening = Opening.of(pending_capture(capture_path("gpt2_shadow")), ViewFilter.parse(include="forward"))
    async with ProtonApp(opening=opening).run_test(size=(80, 24)) as pilot:
        await wait_for(lambda: pilot.app.screen.profile is not None, seconds=30, what="the capture")
        await settled(pilot)
        assert "filtered: 32.9% of the capture (F clears)" in summary(pilot), summary(pilot)
        await pilot.press("F")
        await pilot.pause()
        assert "filtered" not in summary(pilot) and "GPU time 31.10 ms" in summary(pilot), summary(pilot)


@SIZES
async def test_a_bad_regular_expression_is_shown_whole(size):
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=size) as pilot:
        await settled(pilot)
        await filtered(pilot, "include", "forward(")
        error = words(shown_in(pilot.app, pilot.app.screen.query_one("#filter-error")))
        assert error == ("include 'forward(' is not a valid regular expression: missing ), unterminated subpattern "
                         "at position 7"), error


async def test_the_table_gets_the_rows_at_80x24_and_i_makes_the_details_taller_then_hides_them():
    """The details take a third of a small terminal, say how many lines they leave out and which key shows them;
    `i` makes them taller (every line of the kernel's details), then hides them, then brings them back."""
    async with ProtonApp(load_profile(sample_capture())).run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await pilot.press("e", "down")  # add_kernel: ten lines of details
        await pilot.pause()
        screen = pilot.app.screen
        table, details = screen.query_one(ProfileTable), screen.query_one("#detail")
        assert details.region.height == 8 and table.region.height >= 13, (details.region, table.region)
        assert words(shown_in(pilot.app, details)).endswith("4 more lines: i ─╯")
        await pilot.press("i")
        await pilot.pause()
        shown = words(shown_in(pilot.app, details))
        assert "path add_kernel<n=268435456>" in shown and "more lines" not in shown, shown
        await pilot.press("i")
        await pilot.pause()
        assert not details.display and table.region.height >= 20
        await pilot.press("i")
        await pilot.pause()
        assert details.display and details.region.height == 8 and words(shown_in(pilot.app, details)).startswith(
            "╭─ Details")


async def test_the_details_keep_their_rows_on_a_large_terminal():
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        assert pilot.app.screen.query_one("#detail").region.height == 12


@SIZES
async def test_sorting_by_a_column_left_out_shows_it_with_its_arrow(size):
    async with ProtonApp(load_profile(sample_capture())).run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.press("e", "s", "s")  # launches, then avg: the column left out first at 80 columns
        await pilot.pause()
        table = pilot.app.screen.query_one(ProfileTable)
        lines = screen_lines(pilot.app)[table.region.y:table.region.bottom]
        assert "▼avg" in lines[0], lines[0]
        assert "708.24 µs" in lines[1] and "732.27 µs" in lines[2], lines[:3]  # ROOT's avg, then the largest


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("trace", ["instr_scopes_trace.chrome_trace", "triton390_two_streams.chrome_trace"])
async def test_a_traces_header_leaves_nothing_out(size, trace):
    async with ProtonApp(load_profile(FIXTURES / trace)).run_test(size=size) as pilot:
        await settled(pilot)
        shown = summary(pilot)
        assert "…" not in shown and "devices: none in a trace" in shown, shown


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_flame_view_on_a_trace_draws_every_cell_of_its_lines(size):
    """Opened over the timeline, every line of the screen is drawn to the width: none of the timeline stays."""
    async with ProtonApp(load_profile(FIXTURES / "triton390_two_streams.chrome_trace")).run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.press("g")
        await pilot.pause()
        lines = screen_lines(pilot.app)
        assert any(line.startswith("╭─ Flame: ROOT") for line in lines[:4]), lines[:4]
        assert [cell_len(line) for line in lines] == [size[0]] * size[1], lines


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_zoomed_ruler_never_repeats_a_label(size):
    async with ProtonApp(load_profile(FIXTURES / "triton390_two_streams.chrome_trace")).run_test(size=size) as pilot:
        await settled(pilot)
        await pilot.press("up", "up", "right", "enter", *["plus"] * 12)  # a CPU event at 32 ms or more, zoomed in
        await pilot.pause()
        timeline = pilot.app.screen.query_one(LaneTimeline)
        labels = [label for _, label in timeline._ticks()]
        assert len(labels) >= 4 and len(set(labels)) == len(labels), labels
        assert labels[0].startswith("3") and labels[0].endswith(" ms"), labels
        assert len(labels[0].split()[0].split(".")[1]) >= 3, labels  # more decimals than a time elsewhere
        ruler = screen_lines(pilot.app)[timeline.region.y + 1]
        assert ruler.count("┆") == len(set(ruler.split("┆")[1:])), ruler  # as drawn, too
        start, end = str(timeline.border_title).split(": ", 1)[1].split(" (")[0].split(" – ")
        assert start != end, timeline.border_title


async def test_clearing_a_filter_keeps_the_selected_row_on_its_line():
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        await pilot.press("e")
        await filtered(pilot, "include", "forward")
        await pilot.press("escape", "end")
        await pilot.pause()
        table = pilot.app.screen.query_one(ProfileTable)
        await pilot.press(*["up"] * (table.scrollable_content_region.height - 3))  # a row of forward near the top
        await pilot.pause()
        assert round(table.scroll_y) > 0 and table.cursor - round(table.scroll_y) == 1
        node, line = table.profile.names[table.current_node], table.cursor - round(table.scroll_y)
        await pilot.press("F")
        await pilot.pause()
        assert table.profile.names[table.current_node] == node
        assert table.cursor - round(table.scroll_y) == line, (line, table.cursor, table.scroll_y)


async def test_a_shrinking_window_keeps_the_selected_row_in_view():
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=(80, 30)) as pilot:
        await settled(pilot)
        await pilot.press("e", *["down"] * 14)
        await pilot.resize_terminal(80, 20)
        await pilot.pause()
        await pilot.pause()
        table = pilot.app.screen.query_one(ProfileTable)
        top = round(table.scroll_y)
        assert top <= table.cursor < top + table.scrollable_content_region.height - 1, (table.cursor, top)


def test_header_parts_wrap_whole_onto_the_lines_given():
    from proton_tui.view.formatting import wrapped_parts

    parts = ["capture.hatchet", "GPU time 1.00 ms", "3 launches", "2 kernels"]
    assert wrapped_parts(parts, 200) == ["  ".join(parts)]
    assert wrapped_parts(parts, 34) == ["capture.hatchet  GPU time 1.00 ms", "3 launches  2 kernels"]
    assert wrapped_parts(parts, 20, lines=2) == ["capture.hatchet", "GPU time 1.00 ms  …"]
    assert wrapped_parts(["漢字漢字.hatchet", "x"], 6, lines=1) == ["漢字 …"]  # cells, not characters


@pytest.mark.parametrize("trace, name", [("triton390_two_streams.chrome_trace", ""),
                                         ("instr_scopes_trace.chrome_trace", " k_scoped")])
async def test_a_narrow_timeline_drops_its_titles_parts_whole_and_never_cuts_a_number(trace, name):
    """The title's numbers are shown whole or not at all as the window narrows; only the kernel's name after them
    may be cut by the border."""
    async with ProtonApp(load_profile(FIXTURES / trace)).run_test(size=(160, 24)) as pilot:
        await settled(pilot)
        timeline = next(view for view in pilot.app.screen.query(".timeline") if view.display)
        wide = str(timeline.border_title)
        assert "a cell" in wide and wide.endswith(name)
        for width in (60, 44, 40, 36):
            await pilot.resize_terminal(width, 12)
            await pilot.pause()
            await pilot.pause()
            numbers = str(timeline.border_title).removesuffix(name)
            parts, _ = timeline._title()
            whole = [" ".join(parts[:count]) for count in range(len(parts) + 1)]
            assert numbers in whole, (width, numbers, parts)  # whole parts, in order
            assert cell_len(numbers) <= timeline.size.width - 6, (width, numbers)
            if numbers != whole[-1]:  # a part left out would not have fit
                assert cell_len(whole[whole.index(numbers) + 1]) > timeline.size.width - 6, (width, numbers)
            border = screen_lines(pilot.app)[timeline.region.y]
            assert numbers in border and "…" not in numbers, (width, border)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_sort_arrow_keeps_every_title_whole_and_over_its_numbers(size):
    async with ProtonApp(load_profile(capture_path("gpt2_shadow"))).run_test(size=size) as pilot:
        await settled(pilot)
        for _ in range(4):  # each sort in turn
            await pilot.press("s")
            await pilot.pause()
            lines = screen_lines(pilot.app)
            header = next(line for line in lines if line.startswith("name") or line.startswith("kernel"))
            root = next(line for line in lines if "ROOT" in line)
            assert header.rstrip().endswith("avg"), header
            for title, number in (("launches", "1,439"), ("avg", "21.61 µs")):
                assert header.index(title) + len(title) == root.index(number) + len(number), (header, root)
