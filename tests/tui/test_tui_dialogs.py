"""The export and compare dialogs at 80x24 and larger: a Save button and what Enter does, the suggested name kept
whole by a first key, an old message cleared by an edit, Tab completing a path from the file system."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.dialogs.path import PathDialog
from proton_tui.tui.screens.profile import ProfileScreen
from tests.helpers import capture_path
from tests.tui.screen_text import shown_in, words

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


async def opened(pilot, key: str) -> PathDialog:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press(key)
    await pilot.pause()
    assert isinstance(pilot.app.screen, PathDialog)
    return pilot.app.screen


def message(pilot) -> str:
    label = pilot.app.screen.query_one("#path-error")
    return words(shown_in(pilot.app, label)) if label.display else ""


@SIZES
async def test_export_shows_a_save_button_and_says_enter_writes(size, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    async with ProtonApp(load_profile(capture_path("vecadd_auto"))).run_test(size=size) as pilot:
        dialog = await opened(pilot, "x")
        prompt = words(shown_in(pilot.app, dialog.query_one("#prompt")))
        assert prompt == ("Export the tree view (as shown) to .csv, .json or .md: Enter writes, Tab completes a path, "
                          "Escape cancels"), prompt
        assert "Save" in words(shown_in(pilot.app, dialog.query_one("#save", Button)))
        await pilot.click("#save")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ProfileScreen) and (tmp_path / "vecadd_auto-tree.csv").is_file()


async def test_a_first_backspace_edits_the_suggested_name_and_does_not_wipe_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    async with ProtonApp(load_profile(capture_path("vecadd_auto"))).run_test(size=(80, 24)) as pilot:
        await opened(pilot, "x")
        field = pilot.app.screen.query_one("#path", Input)
        assert field.value == "vecadd_auto-tree.csv" and pilot.app.screen.focused is field
        await pilot.press("backspace", "backspace", "backspace", *"md")
        assert field.value == "vecadd_auto-tree.md"


async def test_an_edit_clears_the_message_of_a_failed_enter(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vecadd_auto-tree.csv").write_text("taken")
    async with ProtonApp(load_profile(capture_path("vecadd_auto"))).run_test(size=(80, 24)) as pilot:
        await opened(pilot, "x")
        field = pilot.app.screen.query_one("#path", Input)
        field.value = "vecadd_auto-tree.csv"
        await pilot.press("enter")
        await pilot.pause()
        assert "already exists; not overwritten" in message(pilot)
        await pilot.press("backspace")
        await pilot.pause()
        assert message(pilot) == "" and isinstance(pilot.app.screen, PathDialog)


async def test_tab_completes_the_export_path_from_the_file_system(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "step-one.csv").write_text("")
    (tmp_path / "results" / "step-two.csv").write_text("")
    async with ProtonApp(load_profile(capture_path("vecadd_auto"))).run_test(size=(80, 24)) as pilot:
        await opened(pilot, "x")
        field = pilot.app.screen.query_one("#path", Input)
        field.value = "res"
        await pilot.press("tab")
        assert field.value == "results/" and pilot.app.screen.focused is field
        await pilot.press("tab")
        await pilot.pause()
        assert field.value == "results/step-" and message(pilot) == "matches: step-one.csv, step-two.csv"
        await pilot.press("t", "tab")
        await pilot.pause()
        assert field.value == "results/step-two.csv" and message(pilot) == ""
        await pilot.press("tab")  # nothing left to complete: Tab moves on
        assert pilot.app.screen.focused is not field


async def test_tab_completes_the_capture_to_compare_with(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "captures").mkdir()
    (tmp_path / "captures" / "after.hatchet").write_bytes(capture_path("vecadd_fail").read_bytes())
    async with ProtonApp(load_profile(capture_path("vecadd_auto"))).run_test(size=(80, 24)) as pilot:
        dialog = await opened(pilot, "m")
        field = dialog.query_one("#path", Input)
        field.focus()
        await pilot.pause()
        field.value = "capt"
        await pilot.press("tab")
        await pilot.press("tab")
        assert field.value == "captures/after.hatchet"
        field.value = "capt:step"  # FILE:SCOPE: the file is completed, the scope kept
        await pilot.press("tab")
        assert field.value == "captures/:step"
