"""What a pilot's screen shows as text: the cells the terminal would print, read from Textual's compositor."""

from __future__ import annotations


def screen_lines(app) -> list[str]:
    """Every line of the screen as printed."""
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


def shown_lines(app, widget, within=None) -> list[str]:
    """The lines printed inside `widget`'s region, clipped to the content of `within` (a scrolling container)."""
    region = widget.region.intersection((within.content_region if within is not None else app.screen.region))
    return [line[region.x:region.right] for line in screen_lines(app)[region.y:region.bottom]]


def shown_in(app, widget, within=None) -> str:
    """The text printed inside `widget`'s visible region, its lines joined by a space and runs of spaces made one."""
    lines = shown_lines(app, widget, within)
    return " ".join(" ".join(line.split()) for line in lines).strip()


def words(text: str) -> str:
    return " ".join(text.split())
