"""A Chrome trace decoded from its pieces as they are read (`source.TraceFile`), never held whole: each piece is cut
after the last event it completes and decoded into the columns (`chrome_trace.EventColumns`), the rest carried into
the next piece.

A cut is tried after a `}` followed by `,` and the next event's `{`, or by `]`; it is right exactly when the events
before it decode as a JSON list (a cut inside an event or inside a string leaves a bracket or a string open).
Anything this reader does not take as it comes (a file that is not JSON, an event of the wrong shape, a trace that
does not name its events early) raises NotStreamable, and the file is read whole instead, where every error is
worded as it always is."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from proton_tui.hatchet.chrome_trace import EVENTS, TRACE_INDEX, EventColumns
from proton_tui.hatchet.errors import LoadCancelled
from proton_tui.hatchet.trace import Trace

EVENTS_KEY = re.compile(rb'"traceEvents"[ \t\n\r]*:[ \t\n\r]*\[')
AFTER_EVENT = re.compile(rb"[ \t\n\r]*(?:(,)[ \t\n\r]*(?=\{)|(\]))")  # the next event's start, or the list's end
SPACE = re.compile(rb"[ \t\n\r]*")
JSON_SPACE = b" \t\n\r"
CUTS_TRIED = 4  # cuts tried, last first, before a piece waits for more bytes (the first is right in Proton's files)
HEAD_LIMIT = 1 << 20  # the bytes before `traceEvents` this reader takes; a trace with more is read whole


class NotStreamable(Exception):
    """The trace cannot be read a piece at a time: read it whole."""


def stream_trace(path: Path, pieces: Iterator[bytes], cancelled: Callable[[], bool] = lambda: False,
                 progress: Callable[[int], None] = lambda done: None) -> Trace:
    """The trace whose bytes `pieces` yields, in order. Raises NotStreamable (read it whole instead); `cancelled` is
    asked before each piece: True raises LoadCancelled. `progress` is told how many bytes have been read."""
    head, first, done = trace_head(pieces)
    columns = EventColumns()
    tail, done, _ = read_events(path, first, pieces, columns, cancelled, progress, done)
    tail += b"".join(pieces)  # the object's keys after its events
    base = base_time(head, tail)
    progress(done + len(tail))
    return columns.trace(base)


def trace_head(pieces: Iterator[bytes]) -> tuple[bytes, bytearray, int]:
    """The bytes before the event list's `[`, the bytes read from the `[` on, and how many were read; NotStreamable
    when no `traceEvents` list starts within HEAD_LIMIT bytes."""
    rest, done = b"", 0
    for piece in pieces:
        rest += piece
        done += len(piece)
        if (found := EVENTS_KEY.search(rest)) is not None:
            break
        if len(rest) > HEAD_LIMIT:
            raise NotStreamable
    else:
        raise NotStreamable
    return rest[:found.end() - 1], bytearray(rest[found.end() - 1:]), done


def base_time(head: bytes, tail: bytes) -> int | None:
    """The trace's `baseTimeNanoseconds`, from the object's keys around its events; NotStreamable when they are
    not right."""
    try:
        return TRACE_INDEX.decode(head + b"[]" + tail).baseTimeNanoseconds
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise NotStreamable from None


def read_events(path: Path, buf: bytearray, pieces: Iterator[bytes], columns: EventColumns,
                cancelled: Callable[[], bool] = lambda: False, progress: Callable[[int], None] = lambda done: None,
                done: int = 0) -> tuple[bytes, int, int]:
    """The events of a list (`buf`: the bytes from its `[` on, then what `pieces` yields) decoded into `columns`
    a piece at a time: the bytes after the list's `]` that were read with it, how many bytes were read, and how many
    events. Raises NotStreamable, and LoadCancelled once `cancelled` says so."""
    count, low, after_comma = 0, 0, False
    while True:
        if cancelled():
            raise LoadCancelled(path)
        space = SPACE.match(buf, 1).end()
        if buf[space:space + 1] == b"]":  # the list ends: no event before it, or a comma (not JSON) before it
            if after_comma:
                raise NotStreamable
            return bytes(buf[space + 1:]), done, count
        cut = _cut(buf, low)
        if cut is None:
            piece = next(pieces, None)
            if piece is None:
                raise NotStreamable  # no event ends where a cut can be: not JSON, or not a list of events
            low = max(1, len(buf.rstrip(JSON_SPACE)) - 1)  # a cut before it failed or was tried already
            buf += piece
            done += len(piece)
            progress(done)
            continue
        events, after, closed = cut
        del cut
        columns.add(events, count)
        count += len(events)
        del events  # and with them the views of `buf` their arguments were
        if closed:
            return bytes(buf[after:]), done, count
        del buf[:after - 1]  # the comma before the next event becomes its piece's `[`
        buf[0], low, after_comma = ord("["), 1, True


def _cut(buf: bytearray, low: int) -> tuple[list, int, bool] | None:
    """The events that `buf` (a `[`, then events from the start of one) completes, decoded, where the next begins,
    and whether the list closed there; None when no cut after `low` decodes. ValidationError (an event of another
    shape) reads the file whole, so that its error is worded as always."""
    end = len(buf)
    for _ in range(CUTS_TRIED):
        at = buf.rfind(b"}", low, end)
        if at < 0:
            return None
        end = at
        follow = AFTER_EVENT.match(buf, at + 1)
        if follow is None:
            continue
        kept, buf[at + 1] = buf[at + 1], ord("]")  # the list closed right after the cut, for the decoder
        try:
            events = EVENTS.decode(memoryview(buf)[:at + 2])  # its arguments are views of `buf` while they live
        except msgspec.ValidationError:
            raise NotStreamable from None
        except msgspec.DecodeError:
            continue
        finally:
            buf[at + 1] = kept
        return events, follow.end(), follow[2] is not None
    return None
