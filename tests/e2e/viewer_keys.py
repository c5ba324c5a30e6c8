"""Every key of the viewer, collected from the bindings of its app, its screen and the widgets it shows, as Textual
names them and as tmux sends them."""

from __future__ import annotations

# Textual's key names that tmux's send-keys spells otherwise (single characters are sent as they are).
TMUX_KEYS = {
    "up": "Up", "down": "Down", "left": "Left", "right": "Right", "home": "Home", "end": "End",
    "pageup": "PPage", "pagedown": "NPage", "enter": "Enter", "space": "Space", "escape": "Escape", "tab": "Tab",
    "shift+tab": "BTab", "slash": "/", "question_mark": "?", "plus": "+", "minus": "-", "equals_sign": "=",
    "left_square_bracket": "[", "right_square_bracket": "]",
}
ENDING_ACTIONS = {"quit", "app.quit"}  # what ends the viewer opened on its own (`proton-tui view FILE`)


def viewer_bindings() -> dict[str, list[str]]:
    """Every key of the viewer and the actions bound to it, from the bindings of the app, the profile screen, its
    views and bars (the table, the flame view, the two timelines)."""
    from proton_tui.tui.app import ProtonApp
    from proton_tui.tui.screens.profile import ProfileScreen
    from proton_tui.tui.widgets.filter_bar import FilterBar, SearchBar
    from proton_tui.tui.widgets.flame_view import FlameView
    from proton_tui.tui.widgets.profile_table import ProfileTable
    from proton_tui.tui.widgets.profile_views import ProfileViews
    from proton_tui.tui.widgets.timeline import LaneTimeline, WarpTimeline

    keys: dict[str, list[str]] = {}
    for owner in (ProtonApp, ProfileScreen, ProfileViews, ProfileTable, FlameView, LaneTimeline, WarpTimeline,
                  FilterBar, SearchBar):
        for key, bindings in owner._merged_bindings.key_to_bindings.items():
            keys.setdefault(key, []).extend(binding.action for binding in bindings)
    return keys


def keys_that_keep_it_open() -> list[str]:
    """The viewer's keys but those that end it (pressed last, on their own)."""
    return [key for key, actions in viewer_bindings().items() if not ENDING_ACTIONS & set(actions)]


def tmux_key(key: str) -> str:
    """A Textual key name as tmux's send-keys takes it."""
    if key in TMUX_KEYS:
        return TMUX_KEYS[key]
    if key.startswith("ctrl+"):
        return "C-" + tmux_key(key.removeprefix("ctrl+"))
    if key.startswith("super+"):
        return ""  # no terminal sends it
    if key.startswith("f") and key[1:].isdigit():
        return key.upper()
    return key
