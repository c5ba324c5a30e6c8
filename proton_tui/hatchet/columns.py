"""A trace's events as columns: typed arrays (start, duration, lane, name, category, call stack, arguments) in lane
then start order, the names, categories, call stacks and argument texts interned, each argument text decoded only
when something asks for it. `Trace` (`trace.py`) reads them with sorted-array operations; `events` hands out one
event at a time as an `Event`, for the panes and widgets that show one.

The sorted-array helpers here are exact: a running maximum restarted per segment works on the ranks of the values,
not on values shifted by an offset (which would round), and sums that must equal a left-to-right sum are made so."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec
import numpy as np

NO_ARGS: dict = {}  # the arguments of every event that has none (shared: never changed)


@dataclass(slots=True)
class Event:
    """One complete (`X`) event: a kernel, a scope, or another category; start and duration in ns."""

    lane: int
    name: str
    category: str
    start: float
    duration: float
    call_stack: tuple[str, ...] = ()
    args: dict = field(default_factory=lambda: NO_ARGS)

    @property
    def end(self) -> float:
        return self.start + self.duration


class ArgsShape(msgspec.Struct, gc=False):
    """What the views read of an event's arguments: its call stack and its launch metadata."""

    call_stack: tuple[str, ...] | None = None
    metrics: dict | None = None


ARGS = msgspec.json.Decoder(ArgsShape)
SHAPES = msgspec.json.Decoder(list[ArgsShape])
ARGS_PIECE = 16384  # argument texts decoded at a time


@dataclass
class Columns:
    """Events as arrays, in lane then start order; `names`, `categories`, `stacks` and `args` are the interned
    values the id columns point into (`args` as the file's bytes)."""

    start: np.ndarray  # float64 ns from the trace's first event
    duration: np.ndarray  # float64 ns
    lane: np.ndarray  # int32
    name: np.ndarray  # int32 into names
    category: np.ndarray  # int32 into categories
    stack: np.ndarray  # int32 into stacks
    arg: np.ndarray  # int32 into args
    names: list[str]
    categories: list[str]
    stacks: list[tuple[str, ...]]
    args: list[bytes]
    metrics: dict[str, np.ndarray]  # per argument text: its launch metadata's numbers (NaN: none)
    _end: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def end(self) -> np.ndarray:
        if self._end is None:
            self._end = self.start + self.duration
        return self._end

    def category_mask(self, category: str) -> np.ndarray:
        """Which events are of `category`."""
        if category not in self.categories:
            return np.zeros(len(self), dtype=bool)
        return self.category == self.categories.index(category)

    def name_of(self, index: int) -> str:
        return self.names[self.name[index]]

    def event(self, index: int) -> Event:
        """One event as an object (for a pane or a widget that shows it)."""
        return Event(int(self.lane[index]), self.names[self.name[index]], self.categories[self.category[index]],
                     float(self.start[index]), float(self.duration[index]), self.stacks[self.stack[index]],
                     self.other_args(int(self.arg[index])))

    def other_args(self, arg: int) -> dict:
        """An argument text decoded: every argument but the call stack (none: the shared empty dict)."""
        args = decoded_args(self.args[arg])
        rest = {key: value for key, value in args.items() if key != "call_stack"} if args else NO_ARGS
        return rest or NO_ARGS


def decoded_args(text: bytes) -> dict:
    """An argument text decoded (an object, else none)."""
    try:
        args = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return NO_ARGS
    return args if isinstance(args, dict) else NO_ARGS


def arg_tables(args: list[bytes], launch_metrics) -> tuple[np.ndarray, list[tuple[str, ...]], dict[str, np.ndarray]]:
    """For each argument text: its call stack (an id into the stacks, 0 the empty one) and its launch metadata's
    numbers as `launch_metrics` reads them (a column per key, NaN where an argument has none), decoded a piece at a
    time, the numbers of a key converted for all the arguments that hold it at once."""
    stacks: dict[tuple, int] = {(): 0}
    stack_of = np.zeros(len(args), dtype=np.int32)
    metrics: dict[str, np.ndarray] = {}
    for first in range(0, len(args), ARGS_PIECE):
        piece = args[first:first + ARGS_PIECE]
        try:
            shapes = SHAPES.decode(b"[" + b",".join(piece) + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError):  # one of another shape: each alone
            shapes = [args_shape(text) for text in piece]
        found = [shape.call_stack or () for shape in shapes]
        for stack in dict.fromkeys(found):
            stacks.setdefault(stack, len(stacks))
        stack_of[first:first + len(piece)] = list(map(stacks.__getitem__, found))
        held = [shape.metrics or NO_ARGS for shape in shapes]
        for key in dict.fromkeys(key for found in dict.fromkeys(map(tuple, held)) for key in found):  # as first used
            if key == "bytes" or str(key).startswith("flops"):
                values = _numbers([found.get(key) for found in held], launch_metrics, key)
                kept = np.flatnonzero(~np.isnan(values))
                if len(kept):
                    column = metrics.get(str(key))
                    if column is None:
                        column = metrics[str(key)] = np.full(len(args), np.nan)
                    column[first + kept] = values[kept]
    return stack_of, list(stacks), metrics


def _numbers(values: list, launch_metrics, key) -> np.ndarray:
    """Launch metadata values as numbers (NaN for those `launch_metrics` leaves out: not a finite number ≥ 0)."""
    try:
        numbers = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):  # one is not a number: each alone
        return np.array([launch_metrics({key: value}).get(str(key), np.nan) if value is not None else np.nan
                         for value in values], dtype=np.float64)
    numbers[~np.isfinite(numbers) | (numbers < 0)] = np.nan
    return numbers


def args_shape(text: bytes) -> ArgsShape:
    """The call stack (a list) and launch metadata (an object) of an argument text; none where it has neither."""
    try:
        return ARGS.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):  # another shape: the fields that are right
        args = decoded_args(text)
        stack, metrics = args.get("call_stack"), args.get("metrics")
        return ArgsShape(tuple(str(frame) for frame in stack) if isinstance(stack, list) else None,
                         metrics if isinstance(metrics, dict) else None)


class EventList(Sequence):
    """The events of a trace, each made when asked for (`Columns.event`); equal to a list of the same events."""

    def __init__(self, columns: Columns) -> None:
        self.columns = columns

    def __len__(self) -> int:
        return len(self.columns)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.columns.event(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.columns.event(index)

    def __iter__(self):
        return (self.columns.event(i) for i in range(len(self)))

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, (list, EventList)) else NotImplemented

    __hash__ = None


class IndexMap(Mapping):
    """Event index → event index, held as two arrays (keys sorted): a mapping of a million events in 16 MB."""

    def __init__(self, keys: np.ndarray, values: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")
        self.keys_, self.values_ = keys[order], values[order]

    def __getitem__(self, key) -> int:
        at = int(np.searchsorted(self.keys_, key))
        if at < len(self.keys_) and self.keys_[at] == key:
            return int(self.values_[at])
        raise KeyError(key)

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys_.tolist())

    def __len__(self) -> int:
        return len(self.keys_)


class MadeWhenAsked(Sequence):
    """A sequence whose items are made when asked for (`_item`, given an index in range): a slice is a list of them,
    a negative index counts from the end, any other index past the ends raises IndexError."""

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._item(at) for at in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._item(index)

    def _item(self, index: int):
        raise NotImplementedError


def interned_ids(values: list, table: dict, taken: list | None = None) -> np.ndarray:
    """The values as ids into `table` (value → id, in the order they first come), which takes in the new ones (and
    `taken` too, in their order)."""
    new = [value for value in dict.fromkeys(values) if value not in table]
    table.update(zip(new, range(len(table), len(table) + len(new))))
    if taken is not None:
        taken.extend(new)
    return np.fromiter(map(table.__getitem__, values), dtype=np.int32, count=len(values))


def order_by(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The positions sorted by `first`, then `second`, equal pairs in position order: what
    ``np.lexsort((second, first))`` gives, found by one stable sort of complex numbers (`first` their real parts,
    `second` their imaginary ones), which numpy compares part by part in that order, many times faster than lexsort
    (and faster still on runs already in order, as a trace's events come). `first` holds whole numbers (exact as
    doubles), and neither holds NaN."""
    keys = np.empty(len(first), dtype=np.complex128)
    keys.real, keys.imag = first, second
    return np.argsort(keys, kind="stable")


def time_order(times: np.ndarray) -> np.ndarray:
    """The positions sorted by time, equal times in position order: ``np.argsort(times, kind="stable")``. Where every
    time is a number ≥ 0 (a trace's are counted from its first event), their bits read as int64 sort in the same
    order, 1.45× faster (the 2-core CI machine, 20k to 1M times); `+ 0.0` makes a -0.0 the 0 it equals."""
    if len(times) and times.min() >= 0:  # a NaN makes the minimum NaN: sorted as floats
        return np.argsort((times + 0.0).view(np.int64), kind="stable")
    return np.argsort(times, kind="stable")


def segment_running_max(values: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """The running maximum of `values`, restarted where `segments` (non-decreasing integers) changes: exact, as it
    runs over the values' ranks."""
    if not len(values):
        return values.copy()
    distinct, rank = np.unique(values, return_inverse=True)
    span = np.int64(len(distinct))
    keys = segments.astype(np.int64) * span + rank
    return distinct[np.maximum.accumulate(keys) - segments.astype(np.int64) * span]


def segment_bounds(keys: np.ndarray, count: int) -> np.ndarray:
    """Where each of the keys 0 … count-1 starts in sorted `keys`, and where the last ends (count + 1 offsets)."""
    return np.searchsorted(keys, np.arange(count + 1), side="left")


def merged(starts: np.ndarray, ends: np.ndarray, segments: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals (sorted by segment, then start) merged per segment where they overlap or touch: which interval opens
    each merged one (a bool mask) and the merged ones' ends (at the intervals that open them)."""
    if not len(starts):
        return np.zeros(0, dtype=bool), starts.copy()
    reach = segment_running_max(ends, segments)
    opens = np.ones(len(starts), dtype=bool)
    opens[1:] = (segments[1:] != segments[:-1]) | (starts[1:] > reach[:-1])
    closes = np.flatnonzero(np.r_[opens[1:], True])
    return opens, reach[closes]
