"""The viewer under rough use: every key while a capture is still read, fields of millions of characters, an empty
path in a dialog."""

from __future__ import annotations

import threading

from textual.screen import ModalScreen

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.opening import Opening
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.widgets.profile_table import ProfileTable
from tests.e2e.viewer_keys import ENDING_ACTIONS, keys_that_keep_it_open, viewer_bindings
from tests.helpers import capture_path, wait_for

SIZE = (120, 40)


async def test_every_key_while_the_capture_is_read_is_ignored_or_answered():
    """Each key of the viewer pressed while its capture is still being read: none ends or breaks it (a dialog it
    opens is closed again), one that does nothing yet is answered: still reading; once read, the capture is shown and the keys work; q then quits."""
    path = capture_path("gpt2_shadow")
    read = threading.Event()

    def finish():
        assert read.wait(60), "the test never let the read finish"
        return load_profile(path)

    app = ProtonApp(opening=Opening(path, f"Reading {path}…", finish))
    keys = keys_that_keep_it_open()
    assert {"down", "K", "enter", "s", "slash", "g", "t", "f1"} <= set(keys)
    said: list[str] = []  # every notice, kept: a shown one expires, under load before the key that is checked
    notify = app.notify
    app.notify = lambda message, *args, **kwargs: (said.append(str(message)), notify(message, *args, **kwargs))[1]
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        viewer = app.screen
        assert isinstance(viewer, ProfileScreen) and viewer.profile is None
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            assert app.return_code is None and app.is_running, f"{key} ended the viewer while it read"
            if key == "down":  # the table's key, which waits for the table
                assert any(message.startswith(f"Still reading {path.name}") for message in said)
            while isinstance(app.screen, ModalScreen) or app.screen is not viewer:
                app.pop_screen()
                await pilot.pause()
        assert viewer.profile is None and str(viewer.query_one("#summary").render()) == f"Reading {path}…"
        read.set()
        await wait_for(lambda: viewer.profile is not None, 30, "the capture read")
        await pilot.pause()
        table = viewer.query_one(ProfileTable)
        assert app.focused is table and table.display
        await pilot.press("down", "K")
        assert table.show_kernels
        (quit_key,) = [key for key, actions in viewer_bindings().items() if "quit" in actions and len(key) == 1]
        assert ENDING_ACTIONS & set(viewer_bindings()[quit_key])
        await pilot.press(quit_key)
    assert app.return_code == 0


async def test_every_key_while_a_trace_s_first_launch_is_shown_and_its_tree_built_is_safe():
    """Each key of the viewer pressed while an instrumentation trace's first launch is shown and its tree is still
    being built: none ends or breaks it, a table's key is answered (the table is being built); once built, the table
    takes its keys."""
    from proton_tui.hatchet import pending_capture
    from proton_tui.tui.launch import viewer_app
    from proton_tui.tui.widgets.timeline import WarpTimeline
    from tests.helpers import FIXTURES

    app = viewer_app(pending_capture(FIXTURES / "instr_scopes_trace.chrome_trace"))
    opening, building = app.opening, threading.Event()
    read = opening.finish

    def finish(first=None):
        def then_hold(trace):
            first(trace)
            assert building.wait(60), "the test never let the tree be built"
        return read(then_hold)

    opening.finish = finish
    keys = keys_that_keep_it_open()
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, *args, **kwargs: (said.append(str(message)), notify(message, *args, **kwargs))[1]
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(lambda: app.screen.query(WarpTimeline) and app.screen.query_one(WarpTimeline).display,
                       what="the first launch")
        viewer = app.screen
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            assert app.return_code is None and app.is_running, f"{key} ended the viewer while its tree was built"
            while isinstance(app.screen, ModalScreen) or app.screen is not viewer:
                app.pop_screen()
                await pilot.pause()
            assert viewer.profile is None and viewer.views.current == "warps", key
        assert any(message.startswith("Still building the kernel table of instr_scopes_trace") for message in said)
        building.set()
        await wait_for(lambda: viewer.profile is not None, 30, "the tree built")
        await pilot.pause()
        await pilot.press("t")
        table = viewer.query_one(ProfileTable)
        assert app.focused is table and table.display
        await pilot.press("K")
        assert table.show_kernels


async def test_enter_on_an_empty_path_asks_for_one():
    """Enter in compare's field left empty asks for a capture's path (not "`.`: is a directory"), the dialog kept;
    in export's field emptied, for a file's path."""
    from proton_tui.tui.dialogs.path import PathDialog

    app = ProtonApp(load_profile(capture_path("vecadd_auto")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, PathDialog) and app.screen.query_one("#path").value == ""
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PathDialog)
        assert str(app.screen.query_one("#path-error").render()) == "Enter the path of a capture to compare with"
        await pilot.press("escape", "x")
        await pilot.pause()
        app.screen.query_one("#path").value = "  "
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PathDialog)
        assert str(app.screen.query_one("#path-error").render()) == "Enter the path of a file to export to"


LONG = 1_000_000  # characters of the long names below


def test_a_long_field_is_cut_with_its_length_said():
    from proton_tui.console import FIELD_CHARS, cut_field

    assert cut_field("k" * FIELD_CHARS) == "k" * FIELD_CHARS
    assert cut_field("k" * LONG) == "k" * FIELD_CHARS + f"… ({LONG:,} characters)"


async def test_a_name_of_a_million_characters_is_cut_in_the_table_the_details_and_the_flame_view(write_capture):
    from tests.helpers import kernel, scope

    name = "k" * LONG
    app = ProtonApp(load_profile(write_capture([scope("ROOT", scope("step", kernel(name, 100.0), kernel("b", 1))), {}])))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("e")
        while table.current_node is None or table.profile.names[table.current_node] != name:
            await pilot.press("down")
        width = table.scrollable_content_region.width
        line = table.render_line(table.cursor + 1).text
        assert len(line) == width and "kkkk…" in line
        detail = str(app.screen.query_one("#detail").render())
        assert f"… ({LONG:,} characters)" in detail and len(detail) < 4 * LONG // 100
        await pilot.press("g")
        flame = app.screen.query_one("#flame")
        drawn = "\n".join(flame.render_line(y).text for y in range(4))
        assert "kkk" in drawn and all(len(row) <= flame.size.width for row in drawn.splitlines())
        assert f"… ({LONG:,} characters)" in str(app.screen.query_one("#detail").render())


async def test_a_trace_event_of_a_million_characters_is_cut_in_the_timelines_details(tmp_path):
    import json

    from tests.helpers import FIXTURES

    trace = json.loads((FIXTURES / "vecadd_trace.chrome_trace").read_text())
    for event in trace["traceEvents"]:
        if event.get("name", "").startswith("add_kernel"):
            event["name"] = event["args"]["call_stack"][-1] = "k" * LONG
    path = tmp_path / "long.chrome_trace"
    path.write_text(json.dumps(trace))
    app = ProtonApp(load_profile(path))
    async with app.run_test(size=SIZE) as pilot:
        timeline = app.screen.query_one("#timeline")
        await wait_for(lambda: timeline.display, 30, "the timeline")
        timeline.select(next(i for i, event in enumerate(timeline.trace.events) if event.name == "k" * LONG))
        await pilot.pause()
        detail = str(app.screen.query_one("#detail").render())
        assert f"… ({LONG:,} characters)" in detail and len(detail) < 4 * LONG // 100


def test_a_failed_read_is_settled_before_the_app_hears_of_it(tmp_path):
    """The reader posts LoadFailed while its thread still runs: an app that ends on that message must not take the
    read as abandoned (it would end the process before the one-line error is printed)."""
    from proton_tui.hatchet import pending_capture
    from proton_tui.tui.messages import LoadFailed

    broken = tmp_path / "broken.hatchet"
    broken.write_text('[{"frame": {"name": "ROOT", "type": "function"}, "metrics": {}, "children": ['
                      '{"frame": {"name": "k", "type": "function"}, "children": [],'
                      ' "metrics": {"time (ns)": -5, "count": 1, "device_id": "0", "device_type": "CUDA"}}]}, {}]')
    opening = Opening.of(pending_capture(broken), owned=True)
    heard: list[tuple[object, bool]] = []
    posted = threading.Event()

    def post(message) -> None:
        heard.append((message, opening.loading()))
        posted.set()

    opening.start(post)
    assert posted.wait(30)
    ((message, loading),) = heard
    assert isinstance(message, LoadFailed) and "negative time" in message.reason
    assert not loading, "the read still counted as under way when its failure was posted"
