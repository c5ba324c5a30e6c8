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
    assert {"down", "k", "enter", "s", "slash", "g", "t", "f1"} <= set(keys)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        viewer = app.screen
        assert isinstance(viewer, ProfileScreen) and viewer.profile is None
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            assert app.return_code is None and app.is_running, f"{key} ended the viewer while it read"
            while isinstance(app.screen, ModalScreen) or app.screen is not viewer:
                app.pop_screen()
                await pilot.pause()
        assert viewer.profile is None and str(viewer.query_one("#summary").render()) == f"Reading {path}…"
        assert any(note.message.startswith(f"Still reading {path.name}") for note in app._notifications)
        read.set()
        await wait_for(lambda: viewer.profile is not None, 30, "the capture read")
        await pilot.pause()
        table = viewer.query_one(ProfileTable)
        assert app.focused is table and table.display
        await pilot.press("down", "k")
        assert table.show_kernels
        (quit_key,) = [key for key, actions in viewer_bindings().items() if "quit" in actions and len(key) == 1]
        assert ENDING_ACTIONS & set(viewer_bindings()[quit_key])
        await pilot.press(quit_key)
    assert app.return_code == 0
