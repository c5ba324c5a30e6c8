"""The key bar at the bottom of every screen, drawn by one widget."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

HELP = Binding("f1,question_mark", "help", "Help")  # the app's, on every screen
QUIT = Binding("ctrl+q", "quit", "Quit", priority=True)  # the app's, on every screen, modal ones too
QUIT_ACTIONS = {"quit", "app.quit"}
HELP_ACTIONS = {HELP.action, f"app.{HELP.action}"}  # help, bound by the app or by a screen for the app


class KeyBar(Widget, can_focus=False):
    """The screen's shown keys on one line, like Textual's Footer (same colours; a click presses the key) but one
    widget: Textual's builds a widget per key after a screen's first paint, CSS work that the first keypress waited
    for (`docs/measurements.md`, row 33)."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"footer--key", "footer--description"}
    DEFAULT_CSS = """
    KeyBar { dock: bottom; height: 1; color: $footer-foreground; background: $footer-background; }
    KeyBar > .footer--key { color: $footer-key-foreground; background: $footer-key-background; text-style: bold; }
    KeyBar > .footer--description { color: $footer-description-foreground; background: $footer-description-background; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.keys: tuple[tuple[str, str, str, bool], ...] = ()  # (key, key as displayed, description, enabled)
        self.spans: list[tuple[int, int, str, bool]] = []  # (first cell, end cell, key, enabled) as last drawn
        self.pinned = 0  # how many of the last keys stay at the right end (help, quit, the palette)

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        """Redraw when the keys to show (or whether they apply) changed; one key per action, as Textual's does, in
        the screen's KEY_BAR_ORDER (the most used first), then help, quit (`ctrl+q`, on every screen) and the
        command palette's key, which stay visible at the right end."""
        active = screen.active_bindings
        listed = [(binding, enabled) for _, binding, enabled, _ in active.values()
                  if binding.show and binding.action not in QUIT_ACTIONS]
        order = getattr(screen, "KEY_BAR_ORDER", ())
        listed.sort(key=lambda item: order.index(item[0].action) if item[0].action in order else len(order))
        listed.sort(key=lambda item: item[0].action in HELP_ACTIONS)  # stable: help last of the screen's keys
        listed.append((QUIT, True))
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.app.ENABLE_COMMAND_PALETTE else None
        if palette is not None:
            listed.append(palette[1:3])
        by_action: dict[str, tuple[str, str, str, bool]] = {}
        for binding, enabled in listed:
            action = HELP.action if binding.action in HELP_ACTIONS else binding.action
            by_action.setdefault(action, (binding.key, self.app.get_key_display(binding), binding.description,
                                          enabled))
        keys = tuple(by_action.values())
        self.pinned = sum(1 for action in by_action if action == HELP.action) + 1 + (palette is not None)
        if keys != self.keys:
            self.keys = keys
            self.refresh()

    def render(self) -> Text:
        styles = self.get_component_rich_style("footer--key"), self.get_component_rich_style("footer--description")
        split = len(self.keys) - self.pinned
        keys, pinned = self.keys[:split], self.keys[split:]  # help and the palette, kept at the right end
        right, right_spans = Text(end=""), []
        for key in pinned:
            start = right.cell_len
            _draw_key(right, key, styles)
            right_spans.append((start, right.cell_len, key[0], key[3]))
        right.rstrip()  # the last key's trailing space: the screen's edge is its margin
        room = max(self.size.width - right.cell_len, 0)
        line, self.spans = Text(end=""), []
        for key in keys:  # whole keys, the most used first: one that does not fit ends the list
            drawn = Text(end="")
            _draw_key(drawn, key, styles)
            if line.cell_len + drawn.cell_len > room:
                break
            self.spans.append((line.cell_len, line.cell_len + drawn.cell_len, key[0], key[3]))
            line.append_text(drawn)
        line.pad_right(room - line.cell_len)
        self.spans += [(room + start, room + end, key, enabled) for start, end, key, enabled in right_spans]
        return line + right

    def on_click(self, event: events.Click) -> None:
        """Press the key under the pointer (a bell for one that does not apply now)."""
        for start, end, key, enabled in self.spans:
            if start <= event.x < end:
                if enabled:
                    self.app.simulate_key(key)
                else:
                    self.app.bell()
                return


def _draw_key(line: Text, key: tuple[str, str, str, bool], styles: tuple[Style, Style]) -> None:
    """Append one key as Textual's footer draws it: the key on its colour, then its description."""
    _, display, description, enabled = key
    key_style, description_style = styles if enabled else (style + Style(dim=True) for style in styles)
    line.append(f" {display} ", key_style)
    line.append(f"{description} ", description_style)
