"""A name cut to a width without losing what tells it apart: the middle of its template arguments goes first, so the
base name before them and their last part (often what differs between two kernels) stay; a name without template
arguments loses its middle. A short name over SHORT_LIMIT cells loses its middle too, where it still tells the
capture's kernels apart."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable

from rich.cells import cell_len

CUT = "…"
MIN_ARGUMENTS = 12  # cells of template arguments worth keeping; with less room the whole name loses its middle
WORD = re.compile(r"[A-Za-z0-9]+")  # what a cut is moved to the end of, where there is room
SHORT_LIMIT = 80  # cells of a short name at most
TOLD_APART_MOST = 10_000  # names told apart at most (`told_apart`): 85 ms for 10,000 on the 2-core machine
CONTEXT = 4  # cells kept before where a name that would read alike first differs


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


def told_apart(names: Iterable[str], width: int) -> dict[str, str]:
    """Each of `names` wider than `width` cells, cut to it: as `cut_name` cuts it, except where names would read
    alike (the differences in the middle that `cut_name` drops). Each of those keeps its start, then, after `…`, the
    stretch from just before where it differs from the name most like it (its neighbour in sorted order), and `…`
    where more follows; those alike even then, from where their group first differs. A name that reads alike even
    then keeps `cut_name`'s cut. Names that fit are not in the result, nor any name where there are more than
    TOLD_APART_MOST (each is then cut alone). Sorting makes it O(n log n) in the names."""
    names = set(names)
    if len(names) > TOLD_APART_MOST:
        return {}
    cuts = {name: cut_name(name, width) for name in names if cell_len(name) > width}
    for group in _alike(cuts):
        ordered = sorted(group)
        differs = [0] * len(ordered)
        for at in range(len(ordered) - 1):
            shared = len(os.path.commonprefix(ordered[at:at + 2]))
            differs[at], differs[at + 1] = max(differs[at], shared), max(differs[at + 1], shared)
        cuts.update((name, _around(name, found, width)) for name, found in zip(ordered, differs))
    for group in _alike(cuts):
        shared = len(os.path.commonprefix(group))
        cuts.update((name, _around(name, shared, width)) for name in group)
    taken = Counter(cuts.values())
    return {name: cut if taken[cut] == 1 and cut not in names else cut_name(name, width) for name, cut in cuts.items()}


def _alike(cuts: dict[str, str]) -> list[list[str]]:
    """The names whose cuts read alike, in groups."""
    by_cut: dict[str, list[str]] = {}
    for name, cut in cuts.items():
        by_cut.setdefault(cut, []).append(name)
    return [group for group in by_cut.values() if len(group) > 1]


def _around(name: str, at: int, width: int) -> str:
    """`name` in `width` cells as its start, `…`, and the stretch from CONTEXT cells before `at` (the first character
    that tells it apart), then `…` where more follows; only its start and `…` where the stretch joins the start;
    `cut_name`'s cut where `width` is too narrow."""
    head = _leading(name, width // 4)
    room = width - cell_len(head) - cell_len(CUT)
    if not head or room < CONTEXT + 2 * cell_len(CUT):
        return cut_name(name, width)
    start = max(len(head), at - len(_leading(name[:at][::-1], CONTEXT)))
    if start == len(head):  # nothing between the start and the stretch: no `…` there
        return _leading(name, width - cell_len(CUT)) + CUT
    if cell_len(name[start:]) <= room:  # the end is in reach: the stretch runs back from it
        return head + CUT + _leading(name[len(head):][::-1], room)[::-1]
    return head + CUT + _leading(name[start:], room - cell_len(CUT)) + CUT


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


def within_limit(texts: dict[str, str], limit: int = SHORT_LIMIT) -> dict[str, str]:
    """These short texts (raw -> text, every text distinct) with each one over `limit` cells cut to `limit`: its start
    and its end kept around a `…`, where the text's middle goes. One cut point serves every long text, the nearest to
    the middle that keeps every text distinct; a text it cannot tell apart takes the nearest cut point that does."""
    long = sorted(raw for raw, text in texts.items() if cell_len(text) > limit)
    if not long:
        return texts
    room = limit - cell_len(CUT)
    kept = {text for raw, text in texts.items() if raw not in long}
    starts = sorted(range(room + 1), key=lambda start: (abs(2 * start - room - 1), -start))  # the middle first
    for start in starts:
        cuts = dict(zip(long, (_cut_at(texts[raw], start, room) for raw in long)))
        if len(set(cuts.values())) == len(cuts) and kept.isdisjoint(cuts.values()):
            return {**texts, **_at_words(cuts, texts, kept, start, room)}
    result = dict(texts)
    for raw in long:  # no one cut point tells them all apart: each takes the nearest one free
        cut = next((cut for cut in (_cut_at(texts[raw], start, room) for start in starts) if cut not in kept), None)
        if cut is not None:
            result[raw] = cut
            kept.add(cut)
    return result


def _cut_at(text: str, start: int, room: int, whole_words: bool = False) -> str:
    """`text` as its start in `start` cells, `…`, and its end in the rest of `room` cells; with `whole_words`, the
    start runs on to the end of the word it cuts and the end loses the word it cuts, where there is room."""
    head = _leading(text, start)
    if whole_words:
        word = WORD.match(text, len(head))
        if word is not None and cell_len(head) + cell_len(word[0]) < room:
            head += word[0]
    tail = _leading(text[::-1], room - cell_len(head))[::-1]
    if whole_words and len(tail) < len(text) - len(head):
        cut_word = WORD.match(tail)
        if cut_word is not None and cut_word.end() < len(tail):
            tail = tail[cut_word.end():]
    return head + CUT + tail


def _at_words(cuts: dict[str, str], texts: dict[str, str], kept: set[str], start: int, room: int) -> dict[str, str]:
    """The cuts with each one moved to the ends of words, where they stay distinct from every other text."""
    cuts = dict(cuts)
    for raw in cuts:
        tidy = _cut_at(texts[raw], start, room, whole_words=True)
        others = kept.union(cut for other, cut in cuts.items() if other != raw)
        if tidy not in others:
            cuts[raw] = tidy
    return cuts
