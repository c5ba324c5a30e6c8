"""The viewer driven through Textual's pilot on real captures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.color import Color
from textual.widgets import DataTable

from proton_tui.hatchet import CaptureError, load_profile
from proton_tui.output.diff import diff_profiles
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.dialogs.help import HelpScreen
from proton_tui.tui.messages import ShowDiff
from proton_tui.tui.opening import Opening
from proton_tui.tui.screens.diff import DiffScreen
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.table_rows import fit
from proton_tui.view.names import Names
from tests.helpers import FIXTURES, capture_path, kernel, run_folder, scope, wait_for

SIZE = (120, 36)


def visible_names(table: ProfileTable) -> list[str]:
    return [table.profile.names[node] for node in table.model.rows]


async def test_expand_collapse_and_all():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        assert visible_names(table) == ["ROOT", "step", "backward", "forward", "optimizer"]
        await pilot.press("down", "down", "enter")  # open "backward"
        assert len(table.model.rows) == 5 + len(table.profile.children[table.model.rows[2]]) == 5 + 26
        assert table.profile.names[table.model.rows[3]].startswith("sm80_xmma_gemm")  # largest child first
        await pilot.press("enter")
        assert len(table.model.rows) == 5
        await pilot.press("e")
        assert len(table.model.rows) == table.profile.node_count
        await pilot.press("c")  # everything closed but the top level
        assert visible_names(table) == ["ROOT", "step"]
        await pilot.press("right", "right")  # ROOT is open: move to step; step is closed: open it
        assert table.cursor == 1 and "backward" in visible_names(table)
        await pilot.press("left")  # close step
        assert visible_names(table) == ["ROOT", "step"]
        await pilot.press("left")  # on a closed node: go to the parent
        assert table.cursor == 0


async def test_summary_toggle_and_sort():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("K")
        assert table.show_kernels and len(table.model.rows) == len(table.profile.kernel_stats()) == 50
        values = [k.value for k in table.model.kernels]
        assert values == sorted(values, reverse=True)
        await pilot.press("s")  # by launches
        launches = [k.launches for k in table.model.kernels]
        assert table.display_spec.sort.key == "launches" and launches == sorted(launches, reverse=True)
        assert "▼launches" in table.model.header(120)
        await pilot.press("s", "s")  # avg, then name
        assert table.display_spec.sort.key == "name"
        await wait_for(lambda: table.display_spec.names.readable is not None)
        names = [table.display_spec.names.shown(k.name) for k in table.model.kernels]
        assert names == sorted(names) and names[0] != table.model.kernels[0].name  # the names shown, readable
        await pilot.press("K")
        assert not table.show_kernels and table.profile.names[table.model.rows[0]] == "ROOT"
        await pilot.press("e")
        step_children = [table.profile.names[n] for n in table.model.rows if table.profile.parents[n] == 1]
        assert step_children == ["backward", "forward", "optimizer"]  # sorted by name now


async def test_detail_shows_the_full_name_of_a_cut_row():
    app = ProtonApp(load_profile(capture_path("vecadd_auto")))
    async with app.run_test(size=(80, 20)) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("down", "down")  # the distribution kernel, 300+ characters
        node = table.model.rows[2]
        full = table.profile.names[node]
        assert len(full) > 200 and "…" in table.model.text(2, 80)
        detail = str(app.screen.query_one("#detail").render())
        assert "".join(full.split()) in "".join(detail.split()) and "8.74 µs" in detail
        lines = detail.split("\n")
        assert len(lines) > 10 and all(line[8:10] == "  " for line in lines)  # values in their column, under labels 8 wide


async def test_the_hottest_kernel_keeps_its_name_on_every_row_of_a_python_context_tree():
    profile = load_profile(capture_path("python_scopes"))
    hottest = max(profile.kernel_stats(), key=lambda stats: stats.value)
    app = ProtonApp(profile)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("e")
        await wait_for(lambda: table.display_spec.names.shorts is not None, what="short names")
        start = table.model.display.names.short(hottest.name)[:12]
        rows = [row for row, node in enumerate(table.model.rows) if profile.names[node] == hottest.name]
        width = table.scrollable_content_region.width
        assert rows and all(start in table.model.text(row, width) for row in rows)


async def test_deep_rows_compress_their_guide_lines_before_the_name_is_cut(write_capture):
    name = "kernel_named_20_long"
    tree = kernel(name, 100)
    for depth in range(12):
        tree = scope(f"s{depth}", tree)
    app = ProtonApp(load_profile(write_capture([scope("ROOT", tree), {}])))
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("e")
        row = next(row for row, node in enumerate(table.model.rows) if table.profile.names[node] == name)
        text = table.model.text(row, table.scrollable_content_region.width)
        assert "┊13┊└─ " in text and name in text


async def test_markup_name_shown_as_written(write_capture):
    name = "[bold red]x[/]"
    app = ProtonApp(load_profile(write_capture([scope("ROOT", kernel(name, 100)), {}])))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down")
        table = app.screen.query_one(ProfileTable)
        assert name in table.model.text(1, 120)
        assert name in "".join(seg.text for seg in table.render_line(2))
        assert name in str(app.screen.query_one("#detail").render())


async def test_empty_capture_says_no_kernels():
    app = ProtonApp(load_profile(capture_path("vecadd_instr")))
    async with app.run_test(size=SIZE):
        assert not app.screen.query(ProfileTable)
        assert "Proton recorded no kernels" in str(app.screen.query_one("#summary").render())


async def test_help_lists_the_keys_and_closes():
    app = ProtonApp(load_profile(capture_path("vecadd_auto")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        listed = dict((action, key) for key, action in app.screen.keys)
        for action in ("Expand all", "Collapse all", "Kernels/tree", "Sort", "Quit", "Help"):
            assert action in listed
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
    assert app.return_code == 0


def test_a_narrow_terminal_leaves_out_the_least_needed_columns_before_starving_the_name():
    """At 80 columns (78 inside the scrollbar) a capture with bandwidth keeps time, %, launches and GB/s and the name
    keeps at least 30 cells; avg, the share bars and % peak come back when there is room. Every number is whole or
    left out."""
    from proton_tui.tui.widgets.table_rows import TableRows
    from proton_tui.view.display import Display
    from proton_tui.view.names import Names

    model = TableRows(Display(load_profile(capture_path("vecadd_hook")), Names()))
    narrow = model.header(78).split()
    assert narrow[1:] == ["▼time", "%", "launches", "GB/s"] and len(model.header(78)) == 78
    assert model.header(78).index("▼time") - len("name") >= 30 - len("name")
    assert model.header(120).split()[1:] == ["▼time", "%", "share", "launches", "avg", "GB/s", "%", "peak"]
    assert model.text(1, 78).endswith("  50  4,400.4") and "  4,400.4   " in model.text(1, 120)  # GB/s kept whole


def test_a_very_narrow_terminal_still_shows_the_sorted_column_beside_a_shorter_name():
    """At 40 columns (38 inside) a name of 30 cells leaves no room for a number: the column the rows are sorted by is
    kept, whole, and the name narrows to 16 cells for it; the other columns still wait for a name of 30. Below
    16 + the column, the name alone."""
    from proton_tui.tui.widgets.table_rows import TableRows
    from proton_tui.view.display import Display
    from proton_tui.view.names import Names

    model = TableRows(Display(load_profile(capture_path("vecadd_hook")), Names()))
    for width in (38, 30):
        assert model.header(width).split()[1:] == ["▼time"] and len(model.header(width)) == width
        assert model.text(1, width).endswith(" 36.60 ms") and len(model.text(1, width)) == width
    assert model.header(27).split() == ["name"] and len(model.text(1, 27)) == 27
    assert model.header(58).split()[1:] == ["▼time", "%"]  # beside a name of 30 again
    model.load(model.display.replace(sort="name"))  # sorted by name: time is the first column kept
    assert model.header(38).split() == ["name", "▲", "time"]
    assert all(re.search(r"  \d+\.\d\d [µm]s$", model.text(row, 38)) for row in range(1, len(model.rows)))


@pytest.mark.parametrize("capture", ["gpt2_shadow", "timm_resnet18_steps"])
def test_kernels_that_would_cut_alike_read_apart_in_the_table_at_80_columns(capture):
    """GPT-2's cuBLAS and cutlass kernels differ in their middles; ResNet-18's cuDNN kernels differ in two places
    far apart (`wgrad…tilesize128x64x32…split_k`): at 80 columns every row of the kernel summary, and every kernel
    among its siblings in the tree, shows a name no other row there shows, in every name form."""
    from proton_tui.tui.widgets.table_rows import TableRows
    from proton_tui.view.display import Display
    from proton_tui.view.names import Names

    profile = load_profile(capture_path(capture) if capture == "gpt2_shadow" else FIXTURES / f"{capture}.hatchet")
    for form in ("short", "full", "raw"):
        names = Names.demangled(profile.names, form=form)
        model = TableRows(Display(profile, names))
        model.show_kernels = True
        model.rebuild()
        width = 78
        name_cells = width - sum(2 + cells for _, cells in model.visible_columns(width))
        cells = [model.text(row, width)[:name_cells] for row in range(len(model.rows))]
        assert len(set(cells)) == len(cells) == len(profile.kernel_stats()), \
            [cell for cell in cells if cells.count(cell) > 1]
        model.show_kernels = False
        model.expand_all()
        rows = [(profile.parents[node], model.text(row, width)[:name_cells]) for row, node in enumerate(model.rows)]
        assert len(set(rows)) == len(rows)


def test_fit_cuts_with_an_ellipsis_and_pads():
    assert fit("abcdef", 4) == "abc…" and fit("ab", 4) == "ab  "
    assert fit("x" * 5000, 60) == "x" * 59 + "…"
    assert fit("漢字漢字", 5) == "漢字…" and cell_len(fit("漢字漢字", 4)) == 4  # a wide character never overflows
    assert fit("abc", 0) == "" and fit("abc", 1) == "…"


async def test_footer_follows_the_focused_widget_keys():
    """The footer shows the keys that apply to what has focus, the palette's last, and a click presses one."""
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(KeyBar)

        def footer_keys() -> list[str]:
            return [description for _, _, description, _ in footer.keys]

        assert {"Expand all", "Kernels/tree", "Sort", "Help"} <= set(footer_keys())
        assert footer_keys()[-1] == "palette" and footer.render().plain.rstrip().endswith("^p palette")
        await pilot.press("f")  # the filter bar takes focus: the table's keys no longer apply
        await pilot.pause()
        assert "Expand all" not in footer_keys()
        await pilot.press("escape")
        await pilot.pause()
        assert "Expand all" in footer_keys()
        footer.render()
        (summary_key_at,) = [start for start, _, key, _ in footer.spans if key == "K"]
        await pilot.click(KeyBar, offset=(summary_key_at + 1, 0))
        await pilot.pause()
        assert app.screen.query_one(ProfileTable).show_kernels




async def test_a_capture_being_opened_shows_reading_then_the_table():
    """`view` on a terminal: the first screen says the file is being read, then finishes the load and shows it."""
    path = capture_path("gpt2_shadow")
    seen_while_loading = []

    def finish():
        seen_while_loading.append(str(app.screen.query_one("#summary").render()))
        return load_profile(path)

    app = ProtonApp(opening=Opening(path, f"Reading {path}…", finish))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: getattr(app.screen, "profile", None) is not None, 60, "the capture read")
        await pilot.pause()
        assert seen_while_loading == [f"Reading {path}…"]
        table = app.screen.query_one(ProfileTable)
        assert visible_names(table) == ["ROOT", "step", "backward", "forward", "optimizer"] and app.focused is table
        assert "GPU time" in str(app.screen.query_one("#summary").render())
        await pilot.press("down", "K")
        assert table.show_kernels and app.load_error is None


async def test_an_empty_capture_being_opened_says_no_kernels():
    """The table mounted (hidden) while reading makes way for the explanation when Proton recorded nothing."""
    path = capture_path("vecadd_instr")
    hidden_while_loading = []

    def finish():
        hidden_while_loading.extend(widget.display for widget in app.screen.query("#table, #detail"))
        return load_profile(path)

    app = ProtonApp(opening=Opening(path, f"Reading {path}…", finish))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(lambda: getattr(app.screen, "profile", None) is not None, 60, "the capture read")
        await pilot.pause()
        assert hidden_while_loading == [False, False]
        assert not app.screen.query("#table, #detail") and app.screen.query_one("#empty").display
        assert "Proton recorded no kernels" in str(app.screen.query_one("#summary").render())


async def test_a_capture_that_fails_to_load_in_the_viewer_exits_with_code_2():
    def finish():
        raise CaptureError("big.hatchet: truncated: the JSON ends early (line 9)")

    app = ProtonApp(opening=Opening(Path("big.hatchet"), "Reading big.hatchet…", finish))
    async with app.run_test(size=SIZE):
        await wait_for(lambda: app.return_code is not None, 60, "the app's end")
    assert app.return_code == 2 and app.load_error == "big.hatchet: truncated: the JSON ends early (line 9)"


async def test_scopes_without_kernels_are_shown_with_their_metrics(write_capture):
    tree = scope("ROOT", scope("step", scope("attention", bytes=4096, flops16=1e9)))
    app = ProtonApp(load_profile(write_capture([tree, {}])))
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert not app.screen.query("#empty")  # not the ROOT-only explanation
        table = app.screen.query_one("#table")
        assert [table.profile.names[node] for node in table.model.rows] == ["ROOT", "step", "attention"]
        await pilot.press("down", "down")
        assert "bytes=4096, flops16=1000000000.0" in str(app.screen.query_one("#detail").render())


async def test_a_defect_in_the_read_ends_the_app_as_a_crash():
    """An exception no capture should cause, raised while the capture is read off the UI thread, is not swallowed
    (a viewer saying "Reading…" forever): the app ends as for any crash, with the error."""

    def finish():
        raise RuntimeError("a defect in the reader")

    app = ProtonApp(opening=Opening(Path("big.hatchet"), "Reading big.hatchet…", finish))
    with pytest.raises(RuntimeError, match="a defect in the reader"):
        async with app.run_test(size=SIZE):
            await wait_for(lambda: app.return_code is not None, 60, "the app's end")
    assert app.return_code == 1


async def test_empty_frames_are_hidden_and_h_shows_them():
    """The viewer hides the frames that recorded nothing, says so in its header, and `h` shows them (and hides them
    again), the cursor's node kept."""
    app = ProtonApp(load_profile(capture_path("python_scopes")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("e")
        assert not any("scope.py" in name for name in visible_names(table)) and len(table.model.rows) == 5
        summary = str(app.screen.query_one("#summary").render())
        assert "6 empty frames hidden (h shows)" in summary
        await pilot.press("h", "e")
        assert sum("scope.py:56" in name for name in visible_names(table)) == 2 and len(table.model.rows) == 11
        assert "empty frames hidden" not in str(app.screen.query_one("#summary").render())
        await pilot.press("h")
        assert len(table.model.rows) == 5


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_share_bars_in_the_table_take_the_themes_accent(theme):
    """Tree and kernel summary carry a share bar beside each %, in the theme's accent colour (never a fixed one)."""
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=(140, 36)) as pilot:
        app.theme = theme
        await pilot.pause()
        table = app.screen.query_one(ProfileTable)
        accent = Color.parse(app.current_theme.accent)
        for summary in (False, True):
            if summary:
                await pilot.press("K")
            strip = table.render_line(2)  # the second row: not the cursor's
            bars = [segment for segment in strip if set("▏▎▍▌▋▊▉█") & set(segment.text)]
            assert len(bars) == 1, (theme, summary, strip)
            drawn = bars[0].style.color.triplet
            assert max(abs(a - b) for a, b in zip(drawn, accent.rgb)) <= 2, (theme, drawn, accent)  # colour rounding


@pytest.mark.parametrize("how", ["loaded", "opened"])
async def test_flame_view_navigates_zooms_and_shares_the_selection_with_the_table(how):
    """g opens the flame view on the table's node; arrows move, the detail pane follows; Enter zooms, Escape zooms
    out, then goes back to the table on the frame last selected. The same for a capture read as `view FILE` reads
    it (the screen first up without it)."""
    from proton_tui.tui.widgets.flame_view import FlameView

    path = capture_path("gpt2_shadow")
    app = ProtonApp(load_profile(path)) if how == "loaded" else \
        ProtonApp(opening=Opening(path, f"Reading {path}…", lambda: load_profile(path)))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(lambda: getattr(app.screen, "profile", None) is not None, 60, "the capture read")
        await pilot.pause()
        table = app.screen.query_one(ProfileTable)
        assert not app.screen.query_one(FlameView).display
        await pilot.press("down", "down")  # the table on "backward"
        assert table.profile.names[table.current_node] == "backward"
        await pilot.press("g")
        flame = app.screen.query_one(FlameView)
        assert flame.display and not table.display and app.focused is flame
        assert table.profile.names[flame.selected.node] == "backward"

        def detail() -> str:
            return str(app.screen.query_one("#detail").render())

        assert "name  backward" in detail()
        await pilot.press("right")
        assert table.profile.names[flame.selected.node] == "forward" and "name  forward" in detail()
        await pilot.press("enter")
        assert flame.top == flame.selected.node and "Flame: ROOT ▸ step ▸ forward" in flame.border_title
        assert flame.layout_.rows[0][0].width == flame.scrollable_content_region.width
        await pilot.press("down")
        kernel = flame.selected.node
        assert table.profile.parents[kernel] == flame.top and table.profile.is_kernel[kernel]
        await pilot.press("escape")  # zoom out: the whole capture again, the kernel still selected
        assert table.profile.names[flame.top] == "step" and flame.selected.node == kernel
        await pilot.press("escape", "escape")
        assert flame.top == 0 and not flame.display and table.display and app.focused is table
        assert table.current_node == kernel  # the table follows the flame view


async def test_flame_view_follows_a_filter():
    from proton_tui.tui.widgets.flame_view import FlameView

    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("g")
        flame = app.screen.query_one(FlameView)
        app.screen.show_filtered(app.screen.view_filter.replace(exclude=__import__("re").compile("backward")))
        await pilot.pause()
        names = {flame.display_spec.profile.names[f.node] for row in flame.layout_.rows for f in row if f.node}
        assert "backward" not in names and "forward" in names


@pytest.mark.parametrize("width", [80, 160])
async def test_the_header_wraps_whole_parts_and_leaves_none_out(width):
    """The viewer's header is one line where it fits, else whole parts go on the next line: none is cut or left
    out; the notes of a multi-device capture are in ROOT's details, where the cursor starts."""
    app = ProtonApp(load_profile(capture_path("multigpu")))
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        summary = app.screen.query_one("#summary")
        lines = str(summary.render()).split("\n")
        assert summary.region.height == len(lines) == (2 if width == 80 else 1)
        assert all(len(line) <= summary.content_region.width for line in lines)
        assert lines[0].startswith("multigpu.hatchet  GPU time 1.38 ms") and "…" not in "".join(lines)
        assert "  ".join(lines).endswith("devices: CUDA:0, CUDA:1  3 notes in ROOT's details")
        assert "per device" in dict(app.screen.detail_rows)


def test_one_line_keeps_the_first_part_and_whole_parts_in_order():
    from proton_tui.view.formatting import one_line

    parts = ["capture.hatchet", "GPU time 1.00 ms", "3 launches", "a long part that will not fit"]
    assert one_line(parts, 200) == "  ".join(parts)
    assert one_line(parts, 40) == "capture.hatchet  GPU time 1.00 ms  …"
    assert one_line(parts, 10) == "capture.h…"
    assert one_line(parts[:1], 15) == "capture.hatchet" and one_line([], 10) == ""
    assert one_line(["漢字漢字.hatchet", "x"], 6) == "漢字 …"  # cells, not characters


def test_a_narrow_table_keeps_a_narrower_share_bar():
    """Where the full bar does not fit beside the numbers, the bar narrows (down to 4 cells) rather than go."""
    from proton_tui.tui.widgets.table_rows import MIN_BAR_WIDTH, TableRows
    from proton_tui.view.display import Display

    model = TableRows(Display(load_profile(capture_path("gpt2_shadow"))))
    assert "100.0%  ████  " in model.text(1, 78)  # step: the whole of 4 cells
    start, end = model.bar_span(78)
    assert end - start == MIN_BAR_WIDTH and model.text(2, 78)[start:end] == "██▍ "  # backward: 60.8 % of 4 cells
    assert "share" not in model.header(78) and "share" in model.header(98)
    start, end = model.bar_span(98)
    assert end - start == 8 and model.text(2, 98)[start:end] == "████▉   "


async def test_flame_view_colours_kernels_by_kind_or_by_percent_of_peak():
    """p switches the flame view's colours from kind (kernel, scope, python frame) to % of the DRAM peak: the
    sample's add_kernel (91.4 %) good, torch's kernels (no bytes declared) without a figure."""
    from proton_tui.tui.app import sample_capture
    from proton_tui.tui.widgets.flame_view import FlameView

    app = ProtonApp(load_profile(sample_capture()))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("g")
        flame = app.screen.query_one(FlameView)
        frames = {flame.display_spec.profile.names[f.node]: f for f in flame.layout_.rows[1] if f.node is not None}
        add = frames["add_kernel<n=268435456>"]
        other = next(frame for name, frame in frames.items() if name != "add_kernel<n=268435456>")
        assert flame.style_of(add) == flame.style_of(other) == "flame-view--kernel"
        await pilot.press("p")
        assert flame.style_of(add) == "flame-view--peak-good" and flame.style_of(other) == "flame-view--peak-none"
        assert flame.style_of(flame.layout_.rows[0][0]) == "flame-view--peak-none"  # ROOT: no figure of its own


async def test_a_trace_opens_as_its_tree_and_t_shows_its_timeline():
    """A Chrome trace opens on its timeline (t goes between it and the tree of its kernels): the details follow
    the selected event, arrows move along a lane and between lanes, n jumps to the next launch of the same kernel,
    + and - zoom about it, 0 shows the whole trace, t goes back to the table. A capture without a trace has no t."""
    from proton_tui.tui.widgets.timeline import LaneTimeline

    app = ProtonApp(load_profile(capture_path("triton390_two_streams").with_suffix(".chrome_trace")))
    async with app.run_test(size=(140, 36)) as pilot:
        table = app.screen.query_one(ProfileTable)
        assert "main_stream" in visible_names(table)
        await pilot.pause()
        timeline = app.screen.query_one(LaneTimeline)
        trace = timeline.trace
        assert timeline.display and not table.display and app.focused is timeline
        first = timeline.selected
        assert trace.events[first].category == "kernel" and dict(app.screen.detail_rows)["kind"] == "kernel"
        await pilot.press("right")
        assert timeline.selected != first and trace.events[timeline.selected].lane == trace.events[first].lane
        add = next(i for i, event in enumerate(trace.events) if event.name == "add_kernel<n=4194304>")
        timeline.select(add)
        await pilot.press("n")
        assert trace.events[timeline.selected].name == "add_kernel<n=4194304>" and timeline.selected == \
            trace.next_launch(add)
        assert dict(app.screen.detail_rows)["name"] == "add_kernel<n=4194304>"
        whole = timeline.window
        await pilot.press("plus", "plus")
        start, end = timeline.window
        assert end - start == pytest.approx((whole[1] - whole[0]) / 4)
        assert start <= trace.events[timeline.selected].start <= end
        await pilot.press("0")
        assert timeline.window == whole
        await pilot.press("down")
        assert trace.lanes[trace.events[timeline.selected].lane].name == "GPU Stream 17"
        await pilot.press("t")
        assert table.display and not timeline.display
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.press("t")
        assert not app.screen.query(LaneTimeline)  # a tree has no timeline
        assert "Timeline/table" not in [key[2] for key in app.screen.query_one("KeyBar").keys]


async def test_the_mouse_selects_and_zooms_the_timeline():
    """A click selects the bar under it; the wheel zooms about the time under the pointer; shift+wheel pans."""
    from textual.events import MouseScrollDown, MouseScrollUp

    from proton_tui.tui.widgets.timeline import LaneTimeline

    app = ProtonApp(load_profile(capture_path("triton390_two_streams").with_suffix(".chrome_trace")))
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(LaneTimeline)
        whole = timeline.window
        bar = timeline.layout_.rows[2][0]  # GPU Stream 17's first bar
        # the widget's content starts inside its border: one cell right and down
        await pilot.click(LaneTimeline, offset=(1 + timeline.name_width + 1 + bar.x, 1 + 1 + 2))
        assert timeline.selected in bar.events
        pointer = timeline.layout_.start + (bar.x + 0.5) * timeline.layout_.cell_ns
        await pilot._post_mouse_events([MouseScrollUp], LaneTimeline, offset=(1 + timeline.name_width + 1 + bar.x, 3))
        start, end = timeline.window
        assert end - start == pytest.approx((whole[1] - whole[0]) / 2) and start <= pointer <= end
        await pilot._post_mouse_events([MouseScrollDown], LaneTimeline, offset=(1 + timeline.name_width + 1 + bar.x, 3))
        assert timeline.window == pytest.approx(whole)


async def test_a_click_in_the_flame_view_selects_then_zooms():
    from proton_tui.tui.widgets.flame_view import FlameView

    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("g")
        flame = app.screen.query_one(FlameView)
        forward = next(f for f in flame.layout_.rows[2] if f.node and flame.display_spec.name(f.node) == "forward")
        offset = (1 + forward.x + 1, 1 + forward.row)  # inside the view's border
        await pilot.click(FlameView, offset=offset)
        assert flame.selected == forward
        await pilot.click(FlameView, offset=offset)
        assert flame.top == forward.node


async def test_the_timeline_keeps_working_after_panning_away_and_escape_goes_to_the_table():
    """Arrows after the selection was panned out of view bring it back and move on; the timeline shows names as the
    table does once they are readable; Escape goes back to the table (never out of the viewer)."""
    from proton_tui.tui.widgets.timeline import LaneTimeline

    app = ProtonApp(load_profile(capture_path("triton390_two_streams").with_suffix(".chrome_trace")))
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(LaneTimeline)
        first = timeline.selected
        await pilot.press(*["plus"] * 6, *["l"] * 6)
        assert timeline.layout_.bar_of(first) is None  # panned away from it
        await pilot.press("right")
        assert timeline.selected != first and timeline.layout_.bar_of(timeline.selected) is not None
        await wait_for(lambda: app.screen.query_one(ProfileTable).display_spec.names.readable is not None)
        await pilot.pause()
        assert timeline.names.readable is not None
        await pilot.press("escape")
        assert not timeline.display and app.screen.query_one(ProfileTable).display


async def test_a_filter_over_the_timeline_gives_the_keys_back_to_it_and_a_search_shows_the_tables_match():
    """f (Enter or Escape) over a timeline leaves the timeline on screen with the focus, its keys working; / shows
    the table on the first match, as from the flame view."""
    from proton_tui.tui.widgets.flame_view import FlameView
    from proton_tui.tui.widgets.timeline import LaneTimeline

    app = ProtonApp(load_profile(capture_path("triton390_two_streams").with_suffix(".chrome_trace")))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline, table = app.screen.query_one(LaneTimeline), app.screen.query_one(ProfileTable)
        for closing in ("enter", "escape"):
            await pilot.press("f")
            await pilot.press(*"add", closing)
            await pilot.pause()
            assert timeline.display and app.focused is timeline, closing
            before = timeline.selected
            await pilot.press("right")
            assert timeline.selected != before, closing
        await pilot.press("slash", *"no such kernel", "enter")  # no match: the timeline stays, with the keys
        await pilot.pause()
        assert timeline.display and app.focused is timeline
        await pilot.press("F", "slash", *"add_kernel", "enter")
        await pilot.pause()
        assert table.display and app.focused is table and not timeline.display
        assert "add_kernel" in table.profile.names[table.current_node]
        await pilot.press("g", "slash", *"main", "enter")
        await pilot.pause()
        assert table.display and app.focused is table and not app.screen.query_one(FlameView).display
        assert "main" in table.profile.names[table.current_node]


async def test_zooming_in_stops_at_a_trace_unit_a_cell_and_the_title_never_rounds_to_zero_or_to_equal_ends():
    """+ pressed past the trace's resolution: the window stops at one ns a cell (one trace unit on the warp
    timeline), the title's ends read apart and its cell is never 0; a timeline widened after the zoom (a resize)
    widens its window too."""
    from proton_tui.tui.widgets.timeline import LaneTimeline, WarpTimeline

    app = ProtonApp(load_profile(capture_path("triton390_two_streams").with_suffix(".chrome_trace")))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(LaneTimeline)
        await pilot.press(*["plus"] * 40)
        assert timeline.layout_.cell_ns >= 1.0
        parts = str(timeline.border_title)
        window = parts.split("Timeline: ")[1].split(" (")[0]
        start, end = window.split(" – ")
        assert start != end and "(0 ns a cell)" not in parts, parts
        labels = [text for _, text in timeline._ticks()]
        assert len(set(labels)) == len(labels), labels
        await pilot.resize_terminal(160, 40)
        await pilot.pause()
        assert timeline.layout_.cell_ns >= 1.0
    app = ProtonApp(load_profile(FIXTURES / "instr_scopes_trace.chrome_trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        warps = app.screen.query_one(WarpTimeline)
        await wait_for(lambda: warps.layout_ is not None)
        await pilot.press(*["plus"] * 40)
        assert warps.layout_.cell_ns >= 1.0 and "(0 a cell" not in str(warps.border_title), str(warps.border_title)
    from proton_tui.tui.widgets.timeline.warps import _units

    assert [_units(cell) for cell in (0.04, 0.5, 1.0, 23.5, 1234.0)] == ["0.04", "0.5", "1", "23.5", "1,234"]


def test_a_zero_length_event_at_the_traces_end_is_drawn_and_a_bad_later_event_is_named():
    from proton_tui.hatchet.chrome_trace import TraceError, read_trace
    from proton_tui.view.timeline import TimelineLayout

    events = [{"ph": "X", "name": name, "cat": "kernel", "ts": ts, "dur": dur, "pid": 0, "tid": 7}
              for name, ts, dur in (("a", 0, 100), ("b", 110, 20), ("c", 150, 10), ("d", 200, 0))]
    trace = read_trace({"traceEvents": events})
    layout = TimelineLayout(trace, trace.start, trace.end, 10)
    assert sorted(i for bar in layout.rows[0] for i in bar.events) == [0, 1, 2, 3]
    with pytest.raises(TraceError, match="event 1: 'ts'/'dur' are not times"):
        read_trace({"traceEvents": [events[0], {**events[1], "ts": "x"}]})


async def test_an_instrumentation_tree_shows_per_warp_numbers_and_their_notes(tmp_path):
    """A sampled run's capture, opened from its folder: per warp·launch and the time at the device's clock as
    columns; the kernel scope's details say what was corrected; ROOT's say what the numbers are."""
    from proton_tui.hatchet import open_capture

    capture = run_folder(tmp_path, "instr_vecadd_warps02_3.6.0", warps=[0, 2])
    app = ProtonApp(open_capture(capture))
    async with app.run_test(size=(160, 48)) as pilot:
        table = app.screen.query_one(ProfileTable)
        titles = [column.title for column in table.model.columns]
        assert "per warp·launch" in titles and "at 1,980 MHz" in titles and "launches" not in titles
        root = str(app.screen.query_one("#detail").render())
        assert "2 of 4 warps recorded" in root and "21 launches" in root
        await pilot.press("e", "down", "down")
        assert table.profile.names[table.current_node] == "kernel"
        detail = " ".join(str(app.screen.query_one("#detail").render()).split())
        assert "corrected: 2 of 4 warps recorded in each CTA" in detail and "per warp·launch" in detail
        await pilot.press("down", "down")
        names = [table.profile.names[node] for node in table.model.rows]
        assert "(unattributed)" in names


async def test_the_compare_screen_shows_each_kernels_short_name_first_at_80_columns():
    a, b = load_profile(capture_path("gpt2_shadow")), load_profile(capture_path("python_scopes"))
    names = Names.demangled({*a.names, *b.names})
    diff = diff_profiles(a, b)
    app = ProtonApp(a)
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(ShowDiff(diff, names))
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="the compare screen")
        await pilot.pause()
        table = app.screen.query_one("#diff", DataTable)
        assert [column.label.plain for column in table.ordered_columns][:2] == ["kernel", "time A"]
        assert table.virtual_size.width <= table.scrollable_content_region.width  # every number in view, none cut
        name_width = table.ordered_columns[0].width
        for row, kernel in enumerate(diff.kernels, start=1):
            short = names.short(kernel.name)
            if kernel.name.startswith("_Z"):  # a C++ name: its short form, whole
                assert table.get_row_at(row)[0].plain.replace("\n", "") == short  # whole, cut onto the row's lines
                assert table.ordered_rows[row].height * name_width >= len(short)


async def test_the_flame_view_keeps_its_frame_through_a_filter_and_shows_root_when_nothing_matches():
    """A filter renumbers the nodes: the flame view's selected frame is found again by its path, and a filter that
    leaves nothing (ROOT alone) shows ROOT instead of a frame that no longer exists."""
    import re

    from proton_tui.tui.widgets.flame_view import FlameView

    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("g", "down", "down")
        flame = app.screen.query_one(FlameView)
        before = flame.display_spec.profile
        path = [before.names[node] for node in [*reversed(before.ancestors(flame.selected.node)),
                                                 flame.selected.node]]
        assert flame.selected.node not in (None, 0)
        other = next(before.names[kid] for kid in before.children[1] if before.names[kid] not in path)
        app.screen.show_filtered(app.screen.view_filter.replace(exclude=re.compile(f"^{re.escape(other)}$")))
        await pilot.pause()
        after = flame.display_spec.profile
        assert after is not before
        assert [after.names[node] for node in [*reversed(after.ancestors(flame.selected.node)),
                                               flame.selected.node]] == path
        app.screen.show_filtered(app.screen.view_filter.replace(include=re.compile("no frame has this name")))
        await pilot.pause()
        assert flame.display_spec.profile.node_count == 1 and flame.selected.node == 0


async def test_the_rulers_labels_are_whole_however_wide_they_are(tmp_path):
    """Labels wider than the space between ticks (times of a million seconds) are never cut by the next one: a
    label that would run into the last is left out whole, every label shown keeps its last digit and its unit."""
    from proton_tui.tui.widgets.timeline import LaneTimeline

    events = [{"ph": "X", "name": name, "cat": "kernel", "pid": 1, "tid": 0, "ts": ts, "dur": 3}
              for name, ts in (("early", -5e14), ("late", 9.9e17))]
    path = tmp_path / "far_apart.chrome_trace"
    path.write_text(json.dumps({"traceEvents": events}))
    app = ProtonApp(load_profile(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        timeline = app.screen.query_one(LaneTimeline)
        ruler = timeline.render_line(0).text
        labels = [label.strip() for label in ruler.split("┆")[1:]]
        assert len(labels) >= 2 and all(re.fullmatch(r"[\d,]+(\.\d+)? (ns|µs|ms|s)", label) for label in labels), \
            ruler
