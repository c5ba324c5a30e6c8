"""What a pilot's screen shows as text: the cells the terminal would print, read from Textual's compositor."""

from __future__ import annotations


def screen_lines(app) -> list[str]:
    """Every line of the screen as printed."""
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


def shown_in(app, widget) -> str:
    """The text printed inside `widget`'s visible region, its lines joined by a space and runs of spaces made one."""
    region = widget.region.intersection(app.screen.region)
    lines = screen_lines(app)[region.y:region.bottom]
    return " ".join(" ".join(line[region.x:region.right].split()) for line in lines).strip()


def words(text: str) -> str:
    return " ".join(text.split())
