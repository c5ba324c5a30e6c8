"""One back and quit rule on every screen at 80x24: Escape and `q` go back from every pushed screen, `q` on the form
quits, `ctrl+q` quits anywhere and is always in the key bar, `?` and F1 open the help, `j` and `k` move the cursor
of tables, lists and timeline rows."""

from __future__ import annotations

import sys

import pytest
from textual.widgets import DataTable

from proton_tui.engine.history import stored_runs
from proton_tui.hatchet import load_profile
from proton_tui.output.diff import diff_profiles
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.dialogs.help import HelpScreen
from proton_tui.tui.messages import ShowDiff
from proton_tui.tui.screens.form import FormScreen
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.widgets.flame_view import FlameView
from proton_tui.tui.widgets.profile_table import ProfileTable
from proton_tui.tui.widgets.timeline import LaneTimeline
from proton_tui.view.names import Names
from tests.helpers import FIXTURES, H200_PYTHON, capture_path, wait_for
from tests.tui.screen_text import screen_lines

SIZE = (80, 24)


def stored_run():
    return next(entry for entry in stored_runs(FIXTURES / "runs") if entry.kind == "run").run_result()


def table_row(screen) -> int:
    return screen.query_one(DataTable).cursor_row


def table_top(screen) -> None:
    screen.query_one(DataTable).move_cursor(row=0)


def viewer_row(screen) -> int:
    return screen.query_one(ProfileTable).cursor


def viewer_top(screen) -> None:
    screen.query_one(ProfileTable).action_cursor_to(0)


async def push(app, screen) -> None:
    await app.push_screen(screen)


async def open_finished_run(app):
    from proton_tui.tui.screens.run import RunScreen

    await push(app, RunScreen(finished=stored_run()))


async def open_run_log(app):
    """The run's log, reached from the viewer of its capture with `l`."""
    await push(app, ProfileScreen(load_profile(capture_path("vecadd_hook")), run=stored_run()))
    await wait_for(lambda: app.screen.query(ProfileTable), what="the viewer")
    app.screen.query_one(ProfileTable).focus()
    await app.screen.run_action("log")


async def open_doctor(app):
    from proton_tui.engine.doctor import DoctorReport
    from proton_tui.records import read_doctor
    from proton_tui.tui.screens.doctor import DoctorScreen

    await push(app, DoctorScreen(finished=DoctorReport.from_record(read_doctor(FIXTURES / "doctor/h200_triton360.json"))))


async def open_runs(app):
    from proton_tui.tui.screens.runs import RunsScreen

    await push(app, RunsScreen([], FIXTURES / "runs"))


async def open_check(app):
    from proton_tui.tui.screens.check import CheckScreen

    (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    await push(app, CheckScreen(finished=report))


async def open_diff(app):
    a, b = load_profile(capture_path("gpt2_shadow")), load_profile(capture_path("python_scopes"))
    app.post_message(ShowDiff(diff_profiles(a, b), Names.demangled({*a.names, *b.names})))


async def open_viewer(app):
    await push(app, ProfileScreen(load_profile(capture_path("gpt2_shadow"))))


TABLE, VIEWER = (table_row, table_top), (viewer_row, viewer_top)
# (screen, how it is opened, the class shown, its Back key in the key bar, its rows: what `j` moves and how the
# cursor is put on the first; None where the screen has no rows)
SCREENS = {
    "finished run": (open_finished_run, "RunScreen", "esc", None),
    "run log": (open_run_log, "RunScreen", "esc", None),
    "doctor": (open_doctor, "DoctorScreen", "esc", TABLE),
    "runs list": (open_runs, "RunsScreen", "esc", TABLE),
    "box check": (open_check, "CheckScreen", "esc", TABLE),
    "compare": (open_diff, "DiffScreen", "esc", TABLE),
    "viewer": (open_viewer, "ProfileScreen", "q", VIEWER),
}


def key_bar(app) -> str:
    return screen_lines(app)[-1]


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def help_opens_and_closes(pilot, screen) -> None:
    """`?` and F1 open the help; Escape, `q`, `?` and F1 close it; `j`/`k` scroll it; its key bar shows ctrl+q."""
    for opener, closer in (("question_mark", "escape"), ("f1", "q"), ("question_mark", "question_mark"),
                           ("f1", "f1")):
        await pilot.press(opener)
        await pilot.pause()
        assert isinstance(pilot.app.screen, HelpScreen), (screen, opener)
        assert "^q Quit" in key_bar(pilot.app), key_bar(pilot.app)
        scroll = pilot.app.screen.query_one("#help")
        if scroll.max_scroll_y:
            await pilot.press("j")
            assert scroll.scroll_y == 1
            await pilot.press("k")
            assert scroll.scroll_y == 0
        await pilot.press(closer)
        await pilot.pause()
        assert type(pilot.app.screen).__name__ == screen, (screen, closer)


@pytest.mark.parametrize("name", list(SCREENS))
async def test_every_pushed_screen_goes_back_with_escape_and_q_and_quits_with_ctrl_q(name):
    open_screen, shown, back_key, rows = SCREENS[name]
    app = ProtonApp(python=H200_PYTHON)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        below = app.screen
        assert isinstance(below, FormScreen)
        for back in ("escape", "q", "ctrl+q"):
            await open_screen(app)
            await wait_for(lambda: type(app.screen).__name__ == shown, what=name)
            await settle(pilot)
            bar = key_bar(app)
            assert f" {back_key} Back " in bar and bar.rstrip().endswith("f1 Help  ^q Quit  ^p palette"), (name, bar)
            if back == "escape":
                await help_opens_and_closes(pilot, shown)
                if rows is not None:
                    row, to_top = rows
                    to_top(app.screen)
                    await pilot.press("j")
                    assert row(app.screen) == 1, name
                    await pilot.press("k")
                    assert row(app.screen) == 0, name
            await pilot.press(back)
            await pilot.pause()
            if back == "ctrl+q":
                assert not app.is_running and app.return_code == 0
            else:
                while app.screen is not below:  # the run's log goes back to its viewer, the viewer to the form
                    assert type(app.screen).__name__ in (shown, "ProfileScreen"), (name, back, app.screen)
                    await pilot.press(back)
                    await pilot.pause()


async def test_the_form_quits_with_q_and_opens_the_help_with_question_mark_outside_its_text_fields():
    app = ProtonApp(python=H200_PYTHON)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "^q Quit" in key_bar(app) and "f1 Help" in key_bar(app), key_bar(app)
        app.screen.set_focus(None)
        await help_opens_and_closes(pilot, "FormScreen")
        app.screen.query_one("#python").focus()  # a text field: the letters are typed
        await pilot.press("q", "question_mark")
        assert app.is_running and isinstance(app.screen, FormScreen)
        app.screen.set_focus(None)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running and app.return_code == 0


async def test_j_and_k_move_the_viewers_rows_its_timeline_lanes_and_flame_frames():
    """`K` is the kernel summary; `j`/`k` move the table's cursor, a timeline's lane and the flame view's frame."""
    app = ProtonApp(load_profile(FIXTURES / "triton390_two_streams.chrome_trace"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        timeline = app.screen.query_one(LaneTimeline)  # a trace opens on its timeline
        assert app.screen.focused is timeline
        lane = timeline._bar().lane
        await pilot.press("j")
        assert timeline._bar().lane == lane + 1
        await pilot.press("k")
        assert timeline._bar().lane == lane
        await pilot.press("t")
        await pilot.pause()
        table = app.screen.query_one(ProfileTable)
        assert app.screen.focused is table
        await pilot.press("j")
        assert table.cursor == 1
        await pilot.press("k")
        assert table.cursor == 0
        await pilot.press("K")
        assert table.show_kernels
        await pilot.press("K")
        await pilot.press("g")
        await pilot.pause()
        flame = app.screen.query_one(FlameView)
        top = flame.selected
        await pilot.press("j")
        assert flame.selected is not top
        await pilot.press("k")
        assert flame.selected == top
        await pilot.press("escape", "g")  # back on the table: its bar offers the quit key
        assert "^q Quit" in key_bar(app), key_bar(app)
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_the_key_bar_of_a_narrow_viewer_keeps_back_help_and_quit():
    app = ProtonApp(python=H200_PYTHON)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_viewer(app)
        await settle(pilot)
        bar = key_bar(app)
        assert bar.startswith(" q Back") and "f1 Help  ^q Quit" in bar, bar
        await pilot.press("f1")
        await pilot.pause()
        assert "K  Kernels/tree" in str(app.screen.query_one("#help Static").render())


async def test_an_empty_runs_list_takes_every_key():
    """No run or check in the folder: the arrows, Enter, Home and End on the empty list do nothing."""
    from proton_tui.tui.screens.runs import RunsScreen

    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=(100, 30)) as pilot:
        await push(app, RunsScreen([], FIXTURES / "no runs here"))
        await pilot.pause()
        await pilot.press("up", "down", "enter", "home", "end", "pageup", "pagedown", "down", "up")
        await pilot.pause()
        assert type(app.screen).__name__ == "RunsScreen" and "No run or check" in "\n".join(screen_lines(app))
