"""A name cut to a width without losing what tells it apart: the middle of its template arguments goes first, so the
base name before them and their last part (often what differs between two kernels) stay; a name without template
arguments loses its middle."""

from __future__ import annotations

from rich.cells import cell_len

CUT = "…"
MIN_ARGUMENTS = 12  # cells of template arguments worth keeping; with less room the whole name loses its middle


def cut_name(name: str, width: int) -> str:
    """`name` in at most `width` cells: whole when it fits, else with the middle of its template arguments (the
    whole name's middle where the base name and what follows the arguments leave under MIN_ARGUMENTS cells)
    written as `…`."""
    if width <= 0:
        return ""
    if cell_len(name) <= width:
        return name
    opening = name.find("<")
    closing = name.rfind(">")
    if 0 < opening < closing:
        head, middle, tail = name[:opening + 1], name[opening + 1:closing], name[closing:]
        room = width - cell_len(head) - cell_len(tail) - cell_len(CUT)
        if room >= MIN_ARGUMENTS:
            return head + _middle_cut(middle, room) + tail
    return _middle_cut(name, width - cell_len(CUT))


def _middle_cut(text: str, room: int) -> str:
    """`text` with its middle written as `…`, its start and end in `room` cells (the start gets the odd cell)."""
    if room <= 0:
        return CUT if room == 0 else ""
    start = _leading(text, (room + 1) // 2)
    end = _leading(text[::-1], room - cell_len(start))[::-1]
    return start + CUT + end


def _leading(text: str, cells: int) -> str:
    """The longest start of `text` in at most `cells` cells."""
    used = 0
    for index, char in enumerate(text):
        used += cell_len(char)
        if used > cells:
            return text[:index]
    return text
