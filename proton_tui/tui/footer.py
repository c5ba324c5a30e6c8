"""Textual's Footer, rebuilt only when the keys it shows change."""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    """Textual's Footer rebuilds every key widget on each bindings update, and a screen sends several while it
    starts (focus, bars shown and hidden): ~0.25 s of CSS work per screen on a 2-core machine. This one rebuilds
    only when what it would show (keys, descriptions, enabled states) differs from what it shows."""

    shown: tuple = ()

    def bindings_changed(self, screen: Screen) -> None:
        wanted = tuple(
            (binding.key, binding.description, binding.action, enabled, tooltip)
            for _, binding, enabled, tooltip in screen.active_bindings.values()
            if binding.show
        )
        if wanted == self.shown:
            return
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached and screen is self.screen:  # the rebuild is queued
            self.shown = wanted
