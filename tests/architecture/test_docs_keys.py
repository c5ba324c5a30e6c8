"""docs/keys.md is what docs/make_keys.py writes from the app's bindings now: a key added, renamed or dropped in the
code without the page written again fails here."""

from __future__ import annotations

import importlib.util

from tests.helpers import REPO


def make_keys():
    spec = importlib.util.spec_from_file_location("make_keys", REPO / "docs" / "make_keys.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_keys_page_is_the_bindings_of_the_code():
    module = make_keys()
    assert (REPO / "docs" / "keys.md").read_text() == module.render(), "run: python docs/make_keys.py"


def test_every_screen_with_keys_is_on_the_page():
    from proton_tui.tui.app import ProtonApp
    from proton_tui.tui.screens.form import FormScreen
    from proton_tui.tui.screens.profile import ProfileScreen

    found = make_keys().classes_with_bindings()
    assert {ProtonApp, FormScreen, ProfileScreen} <= set(found)
    assert found == sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))  # the page's order
