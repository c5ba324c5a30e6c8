"""The Textual application."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from ..hatchet import Profile
from .screens import HelpScreen, ProfileScreen


class ProtonApp(App):
    """proton-tui: with a profile, the viewer; without, the capture launcher."""

    CSS_PATH = Path(__file__).with_name("proton_tui.tcss")
    TITLE = "proton-tui"

    def __init__(self, profile: Profile | None = None) -> None:
        super().__init__()
        self.profile = profile

    def on_mount(self) -> None:
        if self.profile is not None:
            self.push_screen(ProfileScreen(self.profile))

    def action_help(self) -> None:
        """Show every key of the current screen and its focused widget."""
        keys_by_action: dict[str, list[str]] = {}
        for active in self.screen.active_bindings.values():
            binding = active.binding
            keys = keys_by_action.setdefault(binding.description or binding.action, [])
            if (shown := self.get_key_display(binding)) not in keys:
                keys.append(shown)
        self.push_screen(HelpScreen([(" / ".join(keys), action) for action, keys in keys_by_action.items()]))
