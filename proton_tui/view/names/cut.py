"""A name cut to a width without losing what tells it apart: the middle of its template arguments goes first, so the
base name before them and their last part (often what differs between two kernels) stay; a name without template
arguments loses its middle. A short name over SHORT_LIMIT cells loses its middle too, where it still tells the
capture's kernels apart."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from rich.cells import cell_len

CUT = "…"
MIN_ARGUMENTS = 12  # cells of template arguments worth keeping; with less room the whole name loses its middle
WORD = re.compile(r"[A-Za-z0-9]+")  # what a cut is moved to the end of, where there is room
SHORT_LIMIT = 80  # cells of a short name at most
TOLD_APART_MOST = 10_000  # names told apart at most: 44–53 ms for 10,000, 2-core machine (bench_names_apart.py)
CONTEXT = 4  # cells kept before where names that would read alike first differ
APART_DEPTH = 3  # times a group still alike is cut again from where it differs in turn
MERGES = 2  # times groups whose cuts read as each other's are joined and cut again together
APART_WORDS = 200  # names in a group up to which a group still alike shows the word that tells it from the others


def cut_name(name: str, width: int) -> str:
    """`name` in at most `width` cells: whole when it fits, else with the middle of its template arguments (the
    whole name's middle where the base name and what follows the arguments leave under MIN_ARGUMENTS cells)
    written as `…`."""
    if width <= 0:
        return ""
    if _cells(name) <= width:
        return name
    opening = name.find("<")
    closing = name.rfind(">")
    if 0 < opening < closing:
        head, middle, tail = name[:opening + 1], name[opening + 1:closing], name[closing:]
        room = width - _cells(head) - _cells(tail) - _cells(CUT)
        if room >= MIN_ARGUMENTS:
            return (head + _middle_cut(middle, room) + tail).replace(CUT + CUT, CUT)
    return _middle_cut(name, width - _cells(CUT)).replace(CUT + CUT, CUT)  # a `…` of the name's own beside the cut's


def told_apart(names: Iterable[str], width: int) -> dict[str, str]:
    """`_told_apart` of these names, the last few answers kept (a table asks again for the same names as it is
    sorted, filtered back, or switched between its views)."""
    return _told_apart(frozenset(names), width)


@lru_cache(maxsize=16)
def _told_apart(names: frozenset[str], width: int) -> dict[str, str]:
    """Each of `names` wider than `width` cells, cut to it: as `cut_name` cuts it, except where names would read
    alike (they differ only in the middle that `cut_name` drops). A group of those is cut alike (`_apart`): the start
    they share, `…`, the part where they differ whole (with what comes just before it), then `…` where more follows;
    a group whose differing parts are too long for that, part by part. A re-cut that reads as another name's cut
    takes `cut_name`'s cut where that reads as no other. Names that fit are not in the result, nor any name where
    there are more than TOLD_APART_MOST (each is then cut alone)."""
    if len(names) > TOLD_APART_MOST:
        return {}
    cuts = {name: cut_name(name, width) for name in sorted(names) if _cells(name) > width}  # the same every run
    plain = dict(cuts)
    groups = _alike(cuts)
    for _ in range(MERGES + 1):
        apart = {name: cut for group in groups for name, cut in _apart(group, width).items()}
        merged = _merged(groups, apart)
        if merged is None:
            break
        groups = merged
    # a re-cut showing less than half its width of the name (names each the start of the next) is no better
    cuts.update((name, cut if _cells(cut.replace(CUT, "")) >= width // 2 else plain[name])
                for name, cut in apart.items())
    taken = Counter(cuts.values())
    for name, cut in cuts.items():
        if (taken[cut] > 1 or cut in names) and taken[plain[name]] == 0 and plain[name] not in names:
            taken[cut] -= 1
            cuts[name] = plain[name]
            taken[plain[name]] += 1
    return cuts


def _merged(groups: list[list[str]], cuts: dict[str, str]) -> list[list[str]] | None:
    """The groups, those whose cuts read as another group's joined into one (to be told apart together: what tells
    them apart may lie where each group alone was cut); None where no cut reads as another group's."""
    group_of = {name: at for at, group in enumerate(groups) for name in group}
    joined = list(range(len(groups)))

    def root(at: int) -> int:
        while joined[at] != at:
            at = joined[at]
        return at

    owners: dict[str, int] = {}
    found = False
    for name, cut in cuts.items():
        other = owners.setdefault(cut, group_of[name])
        if root(other) != root(group_of[name]):
            joined[root(group_of[name])] = root(other)
            found = True
    if not found:
        return None
    together: dict[int, list[str]] = {}
    for at, group in enumerate(groups):
        together.setdefault(root(at), []).extend(group)
    return list(together.values())


def _alike(cuts: dict[str, str]) -> list[list[str]]:
    """The names whose cuts read alike, in groups."""
    by_cut: dict[str, list[str]] = {}
    for name, cut in cuts.items():
        by_cut.setdefault(cut, []).append(name)
    return [group for group in by_cut.values() if len(group) > 1]


def _apart(group: list[str], width: int, depth: int = 0, before: dict[str, str] | None = None) -> dict[str, str]:
    """Names that read alike, cut alike to `width` cells: the characters they all start with (a few), `…`, then from
    CONTEXT cells before where they first differ, as much as fits (`…` where more follows). The room goes to the
    part where they differ (up to where they end alike) first, then to what comes before it, then to their start.
    Those still alike, having differed past the room, are cut again (APART_DEPTH times at most): their start, `…`,
    the word where they differ from the group's others (and each word so found before it), `…`, then from where
    they differ in turn. `before`: what a cut again shows ahead of its stretch, by name."""
    shared = len(os.path.commonprefix(group))
    same_end = len(os.path.commonprefix([name[shared:][::-1] for name in group]))
    differing = max(_cells(name[shared:len(name) - same_end]) for name in group)
    taken = max((_cells(text) for text in before.values()), default=0) if before else 0
    spare = max(0, width - taken - 2 * _cells(CUT) - differing)
    context = _leading(group[0][:shared][::-1], min(CONTEXT, spare))[::-1]
    head = _leading(group[0], min(width // 4, spare - _cells(context), shared - len(context)))
    start = shared - len(context)
    longest = max(_cells(name[start:]) for name in group)
    if before is None and _cells(head) + _cells(CUT) + longest < width:  # the room left goes to the start
        head = _leading(group[0], min(start, width - _cells(CUT) - longest))
    cuts = {name: _stretch(name, before[name] if before else (head + CUT if start > len(head) else name[:start]),
                           start, width) for name in group}
    if depth < APART_DEPTH:
        for alike in _alike(cuts):
            others = [name for name in group if name not in alike] if len(group) <= APART_WORDS else []
            word = _word_apart(alike[0], others, shared)
            ahead = (before[alike[0]] if before else (head or _leading(group[0], 2)) + CUT) + word + CUT
            if word and _cells(ahead) <= width - 2 * CONTEXT:
                cuts.update(_apart(alike, width, depth + 1, {name: ahead for name in alike}))
            else:
                cuts.update(_apart(alike, width, depth + 1, before))
    return cuts


def _word_apart(name: str, others: list[str], shared: int) -> str:
    """`name` from `shared` to the end of the word (letters and digits) where it first differs from the most like
    it of `others` (a group read alike shares it: it tells them from the rest); "" where there are no others."""
    if not others:
        return ""
    differs = shared + max(len(os.path.commonprefix([name[shared:], other[shared:]])) for other in others)
    found = WORD.match(name, differs)
    return name[shared:found.end() if found else differs + 1]


def _stretch(name: str, lead: str, start: int, width: int) -> str:
    """`lead` (what is shown ahead), then `name` from `start`: whole where it fits, else as much as fits and `…`; a
    `…` of the name's own beside one of the cut's is written once."""
    room = width - _cells(lead)
    rest = name[start:]
    cut = lead + rest if _cells(rest) <= room else lead + _leading(rest, room - _cells(CUT)) + CUT
    return cut.replace(CUT + CUT, CUT)


def _middle_cut(text: str, room: int) -> str:
    """`text` with its middle written as `…`, its start and end in `room` cells (the start gets the odd cell)."""
    if room <= 0:
        return CUT if room == 0 else ""
    start = _leading(text, (room + 1) // 2)
    end = _leading(text[::-1], room - _cells(start))[::-1]
    return start + CUT + end


def _leading(text: str, cells: int) -> str:
    """The longest start of `text` in at most `cells` cells."""
    if cells <= 0:
        return ""
    if _one_cell_each(text):
        return text[:cells]
    used = 0
    for index, char in enumerate(text):
        used += _cells(char)
        if used > cells:
            return text[:index]
    return text


def within_limit(texts: dict[str, str], limit: int = SHORT_LIMIT) -> dict[str, str]:
    """These short texts (raw -> text, every text distinct) with each one over `limit` cells cut to `limit`: its start
    and its end kept around a `…`, where the text's middle goes. One cut point serves every long text, the nearest to
    the middle that keeps every text distinct; a text it cannot tell apart takes the nearest cut point that does."""
    long = sorted(raw for raw, text in texts.items() if _cells(text) > limit)
    if not long:
        return texts
    room = limit - _cells(CUT)
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
        if word is not None and _cells(head) + _cells(word[0]) < room:
            head += word[0]
    tail = _leading(text[::-1], room - _cells(head))[::-1]
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


def _one_cell_each(text: str) -> bool:
    """Whether each character of `text` takes one cell: ASCII and `…` (what long names are made of; the general
    measure walks a name a character at a time)."""
    return text.isascii() or text.replace(CUT, "").isascii()


def _cells(text: str) -> int:
    """The cells `text` takes (`rich.cells.cell_len`), at once where each character takes one."""
    return len(text) if _one_cell_each(text) else cell_len(text)
