"""A rank set in the viewer, driven through Textual's pilot on the two H200 ranks (and on two ranks of a real 3.9
trace, the second's clock base 2.5 ms later): the numbers are the text output's, each rank's capture opens in the
viewer, two ranks compare, and a set of traces opens on one timeline."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import orjson
import pytest
from textual.widgets import Input

from proton_tui.hatchet import open_capture, pending_capture
from proton_tui.output.ranks import open_rank_set, rank_files
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.opening import Opening
from proton_tui.tui.screens.diff import DiffScreen
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.screens.ranks import RankSetScreen
from proton_tui.tui.widgets.details_pane import DetailsPane
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.rank_tables import KernelAcrossTable, KernelRankTable, RankTable
from proton_tui.tui.widgets.summary import Summary
from proton_tui.tui.widgets.timeline import RanksTimeline
from tests.helpers import CLI, FIXTURES, REPO, wait_for
from tests.output.trace_format import merged_errors
from tests.tui.screen_text import screen_lines

H200_RANKS = FIXTURES / "ranks_h200"
SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


def copied_ranks(folder: Path, fixture: str, count: int) -> Path:
    """A new folder holding `count` copies of one fixture, one per rank (`job.rank<N>` and the fixture's suffix)."""
    folder.mkdir()
    suffix = fixture[fixture.index("."):]
    for rank in range(count):
        shutil.copy(FIXTURES / fixture, folder / f"job.rank{rank}{suffix}")
    return folder


def rank_set_app(folder) -> ProtonApp:
    return ProtonApp(opening=Opening.of_rank_set(rank_files([folder])))


async def opened(app, pilot) -> RankSetScreen:
    await wait_for(lambda: isinstance(app.screen, RankSetScreen) and app.screen.rank_set is not None,
                   what="the rank set read")
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen


def cells(table, row: int) -> list[str]:
    return [cell.plain.strip() if hasattr(cell, "plain") else str(cell).strip() for cell in table.get_row_at(row)]


def text_rows(folder) -> list[list[str]]:
    """`view DIR --plain`'s lines, split at its column gaps."""
    done = subprocess.run([CLI, "view", str(folder), "--plain"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [re.split(r" {2,}", line.strip()) for line in done.stdout.splitlines()]


@SIZES
async def test_the_rank_set_shows_the_text_outputs_numbers(size):
    text = text_rows(H200_RANKS)
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        summary = screen.query_one(Summary).text
        assert summary.startswith("2 ranks (ranks from the sidecar)  SLOW: rank 1 (1.89x the median)  median GPU time ")
        ranks = screen.query_one(RankTable)
        # the rank table: the text's rows (rank, GPU time, vs median, kernels, launches, host, GPU, SLOW)
        for row in (0, 1):
            shown = [cell for cell in cells(ranks, row)[1:] if cell]
            assert sorted(shown) == sorted(text[1 + row + 1]), (shown, text[1 + row + 1])
        kernels = screen.query_one(KernelRankTable)
        header = text[5]
        assert header[:2] == ["r0", "r1"] and kernels.rank_columns == (1 if size[0] == 80 else 2)
        for row in range(kernels.row_count):
            shown, line = cells(kernels, row), text[6 + row]
            numbers = line[:2][:kernels.rank_columns] + line[2:7]
            assert shown[:-1] == numbers
        assert kernels.selected.name.startswith("_Z") and "Kernel2" in kernels.selected.name
        assert "Kernel2" in " ".join(screen_lines(app)[5:9])
        assert [label for label, _ in app.screen.query_one(DetailsPane).rows][:3] == ["on ranks", "spread", "kernel"]
        by_skew = [kernel.name for kernel in kernels.kernels]
        assert by_skew == [kernel.name for kernel in open_rank_set([H200_RANKS]).kernels()]
        await pilot.press("s")  # the largest time first, then A to Z, then the spread again
        assert str(kernels.border_title) == "Kernels by max"
        assert [kernel.maximum for kernel in kernels.kernels] == sorted((k.maximum for k in kernels.kernels),
                                                                        reverse=True)
        await pilot.press("s")
        shown_names = [screen.names.sort_key(kernel.name) for kernel in kernels.kernels]
        assert str(kernels.border_title) == "Kernels by name" and shown_names == sorted(shown_names)
        await pilot.press("s")
        assert [kernel.name for kernel in kernels.kernels] == by_skew


@SIZES
async def test_enter_shows_the_kernel_on_every_rank_as_share_bars(size):
    rank_set = open_rank_set([H200_RANKS])
    worst = rank_set.kernels()[0]
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("enter")
        across = screen.query_one(KernelAcrossTable)
        assert across.display and across.kernel.name == worst.name
        rows = [cells(across, row) for row in range(across.row_count)]
        assert [row[0] for row in rows] == ["rank 0", "rank 1"]
        assert rows[1][1] == "18.02 ms" and rows[1][2] == "1.89x" and rows[1][3] == "99.8%"
        assert rows[1][4] == "████████" and rows[0][4].startswith("███████")
        assert "rank 1  18.02 ms      1.89x      99.8%  ████████" in " ".join(screen_lines(app))
        await pilot.press("escape")
        assert screen.query_one(KernelRankTable).display and not across.display


@pytest.mark.parametrize("kind", ["trees", "traces"])
async def test_a_rank_opened_from_a_kernel_on_every_rank_opens_on_that_kernel(tmp_path, kind):
    """On its row in the kernel summary, a trace's too (not on its timeline); from the rank table, as ever."""
    folder = H200_RANKS if kind == "trees" else trace_ranks(tmp_path)[0]
    worst = open_rank_set([folder]).kernels()[0]
    app = rank_set_app(folder)
    async with app.run_test(size=(160, 48)) as pilot:
        await opened(app, pilot)
        if kind == "traces":
            await pilot.press("t")  # from the merged timeline to the tables
        await pilot.press("enter", "down", "o")  # the kernel on every rank; rank 1's own capture
        await wait_for(lambda: isinstance(app.screen, ProfileScreen) and app.screen.profile is not None,
                       what="the viewer")
        viewer = app.screen
        assert viewer.profile.path == rank_files([folder])[1]
        table = viewer.query_one(ProfileTable)
        assert viewer.views.current == "table" and table.show_kernels
        assert table.model.kernel_at(table.cursor).name == worst.name
        assert worst.name in dict(viewer.query_one(DetailsPane).rows).values()  # the details follow the cursor
        await pilot.press("q", "escape", "tab", "down", "o")  # from the rank table: as a capture opens alone
        await wait_for(lambda: isinstance(app.screen, ProfileScreen) and app.screen.profile is not None,
                       what="the viewer again")
        table = app.screen.query_one(ProfileTable)
        assert not table.show_kernels and table.cursor == 0
        assert app.screen.views.current == ("table" if kind == "trees" else "timeline")


@SIZES
async def test_a_ranks_own_capture_opens_in_the_viewer_and_two_ranks_compare(size):
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("tab", "down")  # the rank table, rank 1
        await pilot.press("o")
        await wait_for(lambda: isinstance(app.screen, ProfileScreen) and app.screen.profile is not None,
                       what="the viewer")
        viewer = app.screen
        assert viewer.profile.path == screen.rank_set.ranks[1].capture.path == H200_RANKS / "ranks.rank1.hatchet"
        assert viewer.profile.total == open_capture(H200_RANKS / "ranks.rank1.hatchet").total
        await pilot.press("k")  # the viewer's own keys work there
        await pilot.press("q")
        assert app.screen is screen
        await pilot.press("m")  # the rank nearest the median (rank 0, first of two as near) against rank 1
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="compare")
        diff = app.screen.diff
        assert [diff.a.path, diff.b.path] == [rank.capture.path for rank in screen.rank_set.ranks]
        assert (diff.a.total, diff.b.total) == tuple(rank.capture.total for rank in screen.rank_set.ranks)
        await pilot.press("escape", "up", "space", "down", "m")  # rank 0 marked as A, again against rank 1
        await wait_for(lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not diff, what="compare")
        assert app.screen.diff.a.path == screen.rank_set.ranks[0].capture.path


async def test_a_rank_whose_file_changed_after_the_set_was_read_is_refused_not_shown(tmp_path):
    folder = tmp_path / "ranks"
    shutil.copytree(H200_RANKS, folder)
    app = rank_set_app(folder)
    notices: list[str] = []  # every notice, kept: a shown one expires, under load before the second comes
    notify = app.notify
    app.notify = lambda message, *args, **kwargs: (notices.append(str(message)), notify(message, *args, **kwargs))[1]
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        shutil.copy(FIXTURES / "gpt2_shadow.hatchet", folder / "ranks.rank1.hatchet")
        await pilot.press("tab", "down", "o")  # rank 1's own capture
        said = "ranks.rank1.hatchet: changed after the rank set was read: open the set again"
        await wait_for(lambda: app.screen is screen and any(said in notice for notice in notices), what="the refusal")
        await pilot.press("m")  # compared with rank 0: refused the same way
        await wait_for(lambda: sum(said in notice for notice in notices) == 2, what="the refusal")
        await pilot.pause()
        assert app.screen is screen and screen.comparing is None and screen.compare_read == []


async def test_a_compare_leaves_nothing_behind():
    """Once two ranks are compared the set holds neither capture, and the reads' settings are back as they were
    (the collector on, the interpreter's switch interval its own)."""
    import gc
    import weakref

    switch = sys.getswitchinterval()
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("tab", "down", "m", "m")  # a second compare at once: the first gives way to it
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="compare")
        diff = app.screen.diff
        compared = [weakref.ref(diff.a), weakref.ref(diff.b)]
        assert screen.comparing is None and screen.compare_read == [] and screen.compare_next == []
        await pilot.press("escape")
        del diff
        await pilot.pause()
        gc.collect()
        assert [ref() for ref in compared] == [None, None]
        assert gc.isenabled() and sys.getswitchinterval() == switch


async def test_a_merged_trace_of_a_trace_changed_after_the_set_was_read_is_refused_in_one_line(tmp_path,
                                                                                               monkeypatch):
    folder, _ = trace_ranks(tmp_path)
    monkeypatch.chdir(tmp_path)
    app = rank_set_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        changed = folder / "job.rank1.chrome_trace"
        changed.write_bytes(changed.read_bytes() + b"\n")
        await pilot.press("x")
        said = "job.rank1.chrome_trace: changed after the rank set was read: open the set again"
        await wait_for(lambda: any(said in note.message for note in app._notifications), what="the refusal")
        assert app.screen is screen and not list(tmp_path.glob("ranks-merged*"))
        await pilot.press("o")  # the selected event's rank: rank 0, unchanged, opens
        await wait_for(lambda: isinstance(app.screen, ProfileScreen) and app.screen.profile is not None,
                       what="rank 0's trace")


def trace_ranks(tmp_path, shifts_ns=(0, 2_500_000)):
    folder = tmp_path / "traces"
    folder.mkdir()
    original = orjson.loads((FIXTURES / "triton390_two_streams.chrome_trace").read_bytes())
    for number, shift in enumerate(shifts_ns):
        document = dict(original, baseTimeNanoseconds=original["baseTimeNanoseconds"] + shift)
        (folder / f"job.rank{number}.chrome_trace").write_bytes(orjson.dumps(document))
    return folder, original


@SIZES
async def test_traces_open_on_one_timeline_grouped_by_rank_their_launches_stepped_across_ranks(tmp_path, size,
                                                                                               monkeypatch):
    folder, original = trace_ranks(tmp_path)
    monkeypatch.chdir(tmp_path)
    app = rank_set_app(folder)
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        timeline = screen.query_one(RanksTimeline)
        assert timeline.display and screen.focused is timeline
        assert str(timeline.border_title).startswith("Ranks by clock base: ")
        assert "clocks aligned by the traces' clock base" in screen.query_one(Summary).text
        lines = screen_lines(app)
        headings = [number for number, line in enumerate(lines) if re.match(r"│rank [01] ", line)]
        assert len(headings) == 2 and lines[headings[0] + 1].startswith("│ CPU Thread 0")
        first = timeline.selected
        trace = timeline.trace
        assert trace.events[first].category == "kernel" and timeline.model.rank_of_lane[trace.events[first].lane] == 0
        await pilot.press("n")  # the same launch on rank 1: 2.5 ms later by its clock base
        there = timeline.selected
        assert trace.events[there].name == trace.events[first].name
        assert timeline.model.rank_of_lane[trace.events[there].lane] == 1
        assert trace.events[there].start - trace.events[first].start == pytest.approx(2_500_000)
        rows = dict(screen.query_one(DetailsPane).rows)
        assert rows["rank"] == "rank 1" and rows["vs ranks"] == "ended 2.50 ms later than rank 0, the earliest of 2 ranks"
        await pilot.press("n")  # the kernel's second launch, on rank 0 again
        assert timeline.model.rank_of_lane[trace.events[timeline.selected].lane] == 0
        assert dict(screen.query_one(DetailsPane).rows)["launch"].startswith("2 of ")
        await pilot.press("N", "N")
        assert timeline.selected == first
        await pilot.press("x")
        field = app.screen.query_one("#path", Input)
        suggested = field.value
        field.value = "ranks-merged.csv"
        await pilot.press("enter")  # a name that is not a Chrome trace's: refused in the dialog, nothing written
        assert "the merged trace is a Chrome trace in JSON" in str(app.screen.query_one("#path-error").render())
        assert not list(tmp_path.glob("ranks-merged*"))
        field.value = suggested
        await pilot.press("enter")  # the name suggested
        await wait_for(lambda: (tmp_path / "ranks-merged.json").exists(), what="the merged trace")
        merged = orjson.loads((tmp_path / "ranks-merged.json").read_bytes())
        inputs = {rank: (orjson.loads((folder / f"job.rank{rank}.chrome_trace").read_bytes()), f"rank {rank}")
                  for rank in (0, 1)}
        assert merged_errors(merged, inputs) == []  # as the format and the merge's rules have it
        await pilot.press("t")  # the tables
        assert screen.query_one(KernelRankTable).display and not timeline.display


def run_on_a_terminal(*args: str, keys: bytes = b"", wait_for_text: str = "",
                      command: tuple[str, ...] = (CLI,)) -> tuple[int, str]:
    """`proton-tui ARGS` (or `command` ARGS) on a terminal (100x30, its output and error streams; the TUI draws on
    the latter): once `wait_for_text` shows, `keys` are typed. Its exit status and all it wrote."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen([*command, *args], stdin=follower, stdout=follower, stderr=follower,
                               env={**os.environ, "TERM": "xterm-256color"})
    os.close(follower)
    shown, sent, deadline = b"", False, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the command has ended
                    break
                if not chunk:
                    break
                shown += chunk
            if keys and not sent and wait_for_text.encode() in shown:
                os.write(leader, keys)
                sent = True
        return process.wait(timeout=30), shown.decode(errors="replace")
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()


@SIZES
async def test_the_key_bar_keeps_help_and_quit_at_its_right_end_on_every_view_of_a_rank_set(tmp_path, size):
    folder, _ = trace_ranks(tmp_path)
    app = rank_set_app(folder)
    async with app.run_test(size=size) as pilot:
        await opened(app, pilot)
        for view in ("the timeline", "the tables"):
            bar = screen_lines(app)[-1]
            assert "f1 Help  ^q Quit" in bar, (view, bar)
            await pilot.press("t")
            await pilot.pause()


@pytest.mark.parametrize("given", ["folder", "files"])
def test_view_of_a_folder_or_files_on_a_terminal_opens_the_rank_set(given):
    paths = [str(H200_RANKS)] if given == "folder" else [str(H200_RANKS / f"ranks.rank{r}.hatchet") for r in (0, 1)]
    status, shown = run_on_a_terminal("view", *paths, keys=b"q", wait_for_text="Kernels by max/med")
    assert status == 0 and "ranks from the sidecar" in shown


def test_a_defect_that_ends_the_viewer_ends_the_command_with_a_failing_status():
    """A defect's traceback is printed as the viewer ends, and the command's status says it failed (scripts and CI
    must not take it for success). The defect: an action that raises, put in for this test."""
    crash = ("import sys\n"
             "from proton_tui.tui.screens.ranks import RankSetScreen\n"
             "def sort(screen):\n"
             "    raise RuntimeError('a defect in the sort')\n"
             "RankSetScreen.action_sort = sort\n"
             "sys.argv = ['proton-tui', *sys.argv[1:]]\n"
             "from proton_tui.entry import main\n"
             "main()\n")
    status, shown = run_on_a_terminal("view", str(H200_RANKS), keys=b"s", wait_for_text="Kernels by max/med",
                                      command=(sys.executable, "-c", crash))
    assert status == 1 and "a defect in the sort" in shown


def test_a_broken_rank_capture_on_a_terminal_is_one_line_and_exit_2(tmp_path):
    folder = tmp_path / "ranks"
    shutil.copytree(H200_RANKS, folder)
    (folder / "ranks.rank1.hatchet").write_text('{"frame": ')
    status, shown = run_on_a_terminal("view", str(folder))
    after = shown.rsplit("\x1b[?1049l", 1)[-1]  # what follows the TUI giving the terminal back
    last = re.sub(r"\x1b\[[0-9;?<>]*[A-Za-z]", "", after).replace("\r\n", "\n")
    assert status == 2 and last.startswith("proton-tui: error: ") and last.count("\n") == 1, shown[-500:]
    assert "ranks.rank1.hatchet" in last
    assert "Traceback" not in shown


@SIZES
async def test_as_many_rank_columns_as_the_width_holds(tmp_path, size):
    folder = tmp_path / "eight"
    folder.mkdir()
    for rank in range(8):
        fixture = "vecadd_fail.hatchet" if rank == 5 else "vecadd_hook.hatchet"
        shutil.copy(FIXTURES / fixture, folder / f"job.rank{rank}.hatchet")
    app = rank_set_app(folder)
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        kernels = screen.query_one(KernelRankTable)
        widths = kernels.column_widths
        assert sum(widths) <= size[0] and 0 < kernels.rank_columns < 8 if size[0] == 80 else kernels.rank_columns == 8
        header = " ".join(screen_lines(app)[kernels.region.y + 1].split())
        assert header.startswith(" ".join(f"r{rank}" for rank in range(kernels.rank_columns)) + " min median max")


async def test_traces_without_a_clock_base_are_aligned_by_their_first_events(tmp_path):
    app = rank_set_app(copied_ranks(tmp_path / "traces", "vecadd_trace.chrome_trace", 2))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        timeline = screen.query_one(RanksTimeline)
        assert str(timeline.border_title).startswith("Ranks by first events: ")
        assert "clocks aligned by each rank's first event" in screen.query_one(Summary).text
        await pilot.press("n")
        assert dict(screen.query_one(DetailsPane).rows)["vs ranks"].startswith("ended first of the 2 ranks")


async def test_j_and_k_move_in_both_tables_as_down_and_up_do():
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        for table in (screen.query_one(RankTable), screen.query_one(KernelRankTable)):  # 2 ranks, 7 kernels
            table.focus()
            await pilot.pause()
            await pilot.press("j")
            assert table.cursor_row == 1
            await pilot.press("k")
            assert table.cursor_row == 0


async def test_a_sort_keeps_the_cursor_on_its_kernel():
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await opened(app, pilot)
        kernels = screen.query_one(KernelRankTable)
        await pilot.press("down", "down")
        chosen = kernels.selected
        assert "distribution" in chosen.name
        for order in ("max", "name", "max/med"):
            await pilot.press("s")
            assert str(kernels.border_title) == f"Kernels by {order}"
            assert kernels.selected is chosen and kernels.kernels[kernels.cursor_row] is chosen
            assert "distribution" in dict(screen.query_one(DetailsPane).rows)["kernel"]
        assert kernels.cursor_row == 2


async def test_a_thousand_ranks_lay_out_only_the_rows_on_the_screen(tmp_path):
    app = rank_set_app(copied_ranks(tmp_path / "ranks", "vecadd_hook.hatchet", 1000))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        ranks = screen.query_one(RankTable)
        assert ranks.row_count == 1000 and ranks.rows_laid_out <= ranks.size.height
        await pilot.press("enter")
        across = screen.query_one(KernelAcrossTable)
        assert across.row_count == 1000 and 0 < across.rows_laid_out <= across.size.height
        await pilot.press("end")
        assert across.cursor_row == 999 and across.rows_laid_out <= 2 * across.size.height
        assert "rank 999" in " ".join(screen_lines(app))
        assert dict(screen.query_one(DetailsPane).rows)["rank"].startswith("rank 999")


async def test_a_click_on_a_kernel_moves_the_cursor_there_and_a_second_shows_it_on_every_rank():
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await opened(app, pilot)
        kernels = screen.query_one(KernelRankTable)
        third = (5, 4)  # under the table's top border and its header: the third kernel
        await pilot.click(KernelRankTable, offset=third)
        assert kernels.cursor_row == 2 and kernels.selected is kernels.kernels[2]
        await pilot.click(KernelRankTable, offset=third)
        across = screen.query_one(KernelAcrossTable)
        assert across.display and across.kernel is kernels.kernels[2]


NO_NUMPY_VIEWER = """
import asyncio, sys
sys.modules["numpy"] = None  # importing it fails: nothing below may need it
from pathlib import Path
from proton_tui.hatchet import pending_capture
from proton_tui.output.ranks import rank_files
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.opening import Opening
from proton_tui.tui.screens.diff import DiffScreen
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.screens.ranks import RankSetScreen
from tests.helpers import wait_for

async def main(tree, ranks):
    app = ProtonApp(opening=Opening.of(pending_capture(tree)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(lambda: getattr(app.screen, "profile", None) is not None, 60, "the tree")
        await pilot.press("k", "k", "g", "right", "enter", "g", "t", "slash", "g", "e", "m", "l", "enter")
        await pilot.pause()
    app = ProtonApp(opening=Opening.of_rank_set(rank_files([ranks])))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(lambda: isinstance(app.screen, RankSetScreen) and app.screen.rank_set is not None, 60,
                       "the rank set")
        await pilot.press("s", "enter", "escape", "t", "tab", "down", "o")
        await wait_for(lambda: isinstance(app.screen, ProfileScreen) and app.screen.profile is not None, 60,
                       "a rank's tree")
        await pilot.press("g", "q", "m")
        await wait_for(lambda: isinstance(app.screen, DiffScreen), 60, "compare")
    print("numpy" in sys.modules and sys.modules["numpy"] is not None)

asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))
"""


def test_the_viewer_of_trees_and_of_a_rank_set_of_trees_never_loads_numpy():
    """numpy (15 MiB of the viewer's memory) is for traces: a tree, its flame view and compare, and a rank set of
    trees with a rank's tree and two ranks compared work without it."""
    done = subprocess.run([sys.executable, "-c", NO_NUMPY_VIEWER, str(FIXTURES / "gpt2_shadow.hatchet"),
                           str(H200_RANKS)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "False", done.stderr[-3000:]


async def test_s_sorts_the_kernel_table_only_where_it_is_shown():
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("enter")  # a kernel on every rank: the kernel table is not shown
        assert screen.query_one("#kernel-views").current == "across"
        title = str(screen.query_one(KernelRankTable).border_title)
        await pilot.press("s")
        assert str(screen.query_one(KernelRankTable).border_title) == title
        assert "Sort" not in screen_lines(app)[-1]


def test_keys_typed_right_after_o_never_reach_the_set():
    """`o q` typed at once, in a real terminal: the rank's viewer opens and the set takes no key until it is shown
    (the `q` would have quit the whole app); `q` then goes back to the set and `q` quits."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen([CLI, "view", str(H200_RANKS)], stdin=follower, stdout=follower, stderr=follower,
                               env={**os.environ, "TERM": "xterm-256color"})
    os.close(follower)
    shown = b""

    def read_until(text: bytes, seconds: float = 60) -> bool:
        nonlocal shown
        deadline = time.monotonic() + seconds
        while text not in shown and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                shown += chunk
        return text in shown

    try:
        assert read_until(b"Kernels by max/med")
        shown = b""
        os.write(leader, b"\toq")  # Tab to the ranks, o, q: typed at once
        assert read_until(b"GPU time 1.06 ms"), shown.decode(errors="replace")[-2000:]  # rank 0's own viewer
        assert read_until(b"Back")  # its key bar: the viewer takes the keys
        time.sleep(0.5)
        assert process.poll() is None  # the q did not quit
        shown = b""
        os.write(leader, b"q")
        assert read_until(b"Kernels by max/med")
        time.sleep(0.2)
        os.write(leader, b"q")
        read_until(b"\0never written\0", 30)  # what it writes as it ends is read: a full terminal would block it
        assert process.wait(timeout=30) == 0
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()


async def test_i_gives_the_details_the_room_their_border_asks_for(tmp_path):
    folder, _ = trace_ranks(tmp_path)
    app = rank_set_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        pane = screen.query_one(DetailsPane)
        await wait_for(lambda: str(pane.border_subtitle).endswith("more lines: i"), what="lines left out")
        await pilot.press("i")
        await pilot.pause()
        assert pane.has_class("-tall") and pane.size.height > 7
        await pilot.press("i")
        await pilot.pause()
        assert not pane.display
        await pilot.press("i")
        await pilot.pause()
        assert pane.display and not pane.has_class("-tall")


async def test_the_details_follow_the_table_tab_goes_to():
    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert "on ranks" in dict(screen.detail_rows)
        await pilot.press("tab")  # the ranks
        await pilot.pause()
        assert dict(screen.detail_rows)["rank"].startswith("rank 0 ")
        await pilot.press("tab")  # the kernels again
        await pilot.pause()
        assert dict(screen.detail_rows)["on ranks"] == "2 of 2 (Enter: each rank)"


async def test_a_ranks_lanes_on_the_merged_timeline_are_drawn_as_on_its_own(tmp_path):
    """The same window, the same width: rank 0's lanes on the merged timeline have the bars its trace has alone."""
    from proton_tui.view.timeline import RowEvents, TimelineLayout

    folder, _ = trace_ranks(tmp_path, (0, 0))
    app = rank_set_app(folder)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await opened(app, pilot)
        merged = screen.query_one(RanksTimeline)
        alone = open_capture(folder / "job.rank0.chrome_trace").trace
        layout = merged.layout_
        for number, row in enumerate(merged.model.rows):
            if row.lane is None or merged.model.rank_of_lane[row.lane] != 0:
                continue
            lane = next(i for i, own in enumerate(alone.lanes) if own.name == row.label)
            offset = merged.trace.start - alone.start  # the merged clock against the trace's own
            own = TimelineLayout(alone, layout.start - offset, layout.end - offset, layout.width,
                                 [RowEvents.of_lane(alone, lane)])
            assert [(bar.x, bar.width, len(bar.events)) for bar in layout.rows[number]] == \
                [(bar.x, bar.width, len(bar.events)) for bar in own.rows[0]], row.label


async def test_new_capture_from_the_palette_over_a_rank_set_goes_back_to_it_with_escape():
    from proton_tui.tui.screens.form import FormScreen

    app = rank_set_app(H200_RANKS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        app.action_new_capture()
        await wait_for(lambda: isinstance(app.screen, FormScreen), what="the form")
        await pilot.pause()
        assert "Back" in screen_lines(app)[-1]
        await pilot.press("escape")
        await wait_for(lambda: app.screen is screen, what="the rank set again")


async def test_the_merged_trace_goes_where_a_path_from_home_says(tmp_path, monkeypatch):
    """`~/…` typed in the dialog is the home folder's, as a shell reads it."""
    folder, _ = trace_ranks(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    app = rank_set_app(folder)
    async with app.run_test(size=(120, 40)) as pilot:
        await opened(app, pilot)
        await pilot.press("x")
        await wait_for(lambda: app.screen.query("#path"), what="the dialog")
        app.screen.query_one("#path", Input).value = "~/merged.json"
        await pilot.press("enter")
        await wait_for(lambda: (home / "merged.json").exists(), what="the merged trace in the home folder")
        assert not (tmp_path / "~").exists()


@SIZES
async def test_a_merged_trace_opened_alone_names_every_lane_whole(tmp_path, size):
    """Opened on its own, the merged trace's lanes are named after their rank first: the name column widens to
    hold them, so `rank 0 · GPU Stream 7` and `rank 0 · GPU Stream 17` read apart."""
    from proton_tui.tui.widgets.timeline import LaneTimeline

    folder, _ = trace_ranks(tmp_path)
    merged = tmp_path / "merged.json"
    done = subprocess.run([CLI, "view", str(folder), "--export", str(merged)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    app = ProtonApp(opening=Opening.of(pending_capture(merged)))
    async with app.run_test(size=size) as pilot:
        await wait_for(lambda: isinstance(app.screen, ProfileScreen) and app.screen.profile is not None,
                       what="the merged trace")
        await pilot.pause()
        timeline = app.screen.query_one(LaneTimeline)
        names = [lane.name for lane in timeline.trace.lanes]
        assert "rank 0 · GPU Stream 17" in names and "rank 1 · GPU Stream 7" in names
        shown = screen_lines(app)
        for name in names[:size[1] - 8]:  # the lanes on the screen
            assert any(line.startswith(f"│{name} ") for line in shown), (name, shown)


async def test_kernels_that_would_cut_alike_read_apart_in_the_rank_sets_kernel_table(tmp_path):
    """GPT-2's cuBLAS and cutlass kernels on two ranks, at 80 columns: every row of the kernel table shows a name no
    other row shows (cut at their end they read alike)."""
    app = rank_set_app(copied_ranks(tmp_path / "gpt2", "gpt2_shadow.hatchet", 2))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        kernels = screen.query_one(KernelRankTable)
        start = kernels.region.x + sum(kernels.column_widths[:-1])
        lines = screen_lines(app)[kernels.region.y + 2:kernels.region.y + kernels.region.height]
        names = [line[start:start + kernels.column_widths[-1]].strip() for line in lines]
        names = [name for name in names if name]
        assert len(names) >= 8 and len(set(names)) == len(names), names
