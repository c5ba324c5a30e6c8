"""Loading a capture: `PendingLoad` checks and maps the file at once (so a bad file is reported before a TUI
starts); `finish` reads it, a large one in pieces (`pieces.py`), anything else whole, and completes it with what its
run says (`RunFacts`) before anyone sees it. `load_profile` is both in one call."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from proton_tui.hatchet.cycles import with_unattributed
from proton_tui.hatchet.decode import is_msgpack, is_object
from proton_tui.hatchet.devices import device_index, device_label
from proton_tui.hatchet.errors import CaptureError, LoadCancelled
from proton_tui.hatchet.facts import CycleFacts
from proton_tui.hatchet.pieces import load_in_pieces
from proton_tui.hatchet.profile import Profile
from proton_tui.hatchet.reader import load_whole, trace_profile
from proton_tui.hatchet.source import mapped, streamed

if TYPE_CHECKING:
    from proton_tui.hatchet.trace import Trace


class WhileReading:
    """A process-wide setting changed while any capture is read, and put back as it was when the last read ends:
    reads overlap (a rank set's compare, a capture opened while another is read), and the first to end must not put
    it back under the others, nor the last leave it changed."""

    def __init__(self, change: Callable[[], object], restore: Callable[[object], None]) -> None:
        self._change, self._restore = change, restore
        self._lock, self._reads, self._before = threading.Lock(), 0, None

    def hold(self) -> None:
        with self._lock:
            if self._reads == 0:
                self._before = self._change()
            self._reads += 1

    def release(self) -> None:
        with self._lock:
            self._reads -= 1
            if self._reads == 0:
                self._restore(self._before)


def _collector_off() -> bool:
    collecting = gc.isenabled()
    gc.disable()
    return collecting


# millions of new containers, none cyclic: collections would walk the whole tree again and again
GC_PAUSED = WhileReading(_collector_off, lambda collecting: gc.enable() if collecting else None)


@dataclass(frozen=True)
class RunFacts:
    """What a capture's run says that its file does not, built into the profile as it is read: the devices called as
    the user chose them (`device_map`, {"CUDA:0": "CUDA:1"}, with the note that says why), an instrumentation
    capture's launches, CTAs and sampled warps, and the SM clock the user gave (`sm_clock_khz`, for an
    instrumentation trace only: `clock_flag` names it in the error)."""

    device_map: dict[str, str] | None = None
    device_note: str | None = None
    cycle_facts: CycleFacts | None = None
    sm_clock_khz: float | None = None
    clock_flag: str = "--sm-clock-khz"

    @property
    def trace_clock_khz(self) -> float | None:
        """The SM clock an instrumentation trace's cycles are timed at, as `completed` builds it in (its profile's
        `run_clock_khz`): the one the user gave, else the one its run reported; None when neither did."""
        run = self.cycle_facts.clock_khz if self.cycle_facts is not None else None
        return self.sm_clock_khz or run or None


def load_profile(path: str | Path, *, show_internal: bool = False, settled: bool = False,
                 facts: RunFacts | None = None) -> Profile:
    """Read, validate and index a `.hatchet` file. Raises CaptureError with a one-line reason. `settled`: its
    writer is known to have finished (a run's process has ended), so a file written just now is not waited on.
    `facts`: what its run says, built into the profile."""
    pending = PendingLoad(Path(path), show_internal, settled, facts)
    try:
        return pending.finish()
    finally:
        pending.close()


class PendingLoad:
    """A capture about to be read: made, it has checked and mapped the file (CaptureError for one that cannot be
    read); `finish` reads it. `close` releases the file (also when `finish` was never called); `cancel`, from another
    thread, makes a `finish` under way raise LoadCancelled at its next check (between pieces, and as it walks the
    tree)."""

    def __init__(self, path: Path, show_internal: bool = False, settled: bool = False,
                 facts: RunFacts | None = None) -> None:
        self.path, self.show_internal, self.facts = path, show_internal, facts
        self._held = ExitStack()
        self._cancelled = threading.Event()
        self._abandon = False
        self._parked = threading.Event()
        self.settled = settled
        self._streaming = ExitStack()  # a large trace read a piece at a time (else: `data`, read whole)
        self.trace_file = self._streaming.enter_context(streamed(path, settled))
        self._split = None  # a large trace's workers, decoding it meanwhile (`split_read`)
        if self.trace_file is not None:
            from proton_tui.hatchet.split_read import SplitRead, workers_for

            if workers := workers_for(self.trace_file):
                self._split = SplitRead(path, self.trace_file, workers)
        self.data = None if self.trace_file is not None else self._held.enter_context(mapped(path, settled))
        self.size = self.trace_file.size if self.trace_file is not None else len(self.data)
        self.bytes_read = 0  # so far, as a `finish` under way reports it (a file read in pieces: after each piece)

    @property
    def decoded_by_workers(self) -> bool:
        """Whether worker processes decode the file (`split_read`): its reading thread then mostly waits for them."""
        return self._split is not None and bool(self._split.children)

    def cancel(self, abandon: bool = False) -> None:
        """Stop a `finish` under way at its next check. `abandon`: the process is about to end, so the read stops
        there for good and never returns: unwinding would free what it built, and freeing a million objects holds
        the interpreter long enough to delay the end by a fraction of a second."""
        self._abandon = self._abandon or abandon
        self._cancelled.set()
        if (split := self._split) is not None:
            split.kill()

    def _read_so_far(self, done: int) -> None:
        self.bytes_read = done

    def _stop_here(self) -> bool:
        if not self._cancelled.is_set():
            return False
        while self._abandon:  # parked for good: nothing ever sets this event
            self._parked.wait(3600)
        return True

    def finish(self, first: Callable[[Trace], None] | None = None) -> Profile:
        """The profile; raises CaptureError. `first`: for a trace, called with it as soon as its events are read,
        before its tree is built (what a view may show meanwhile). The loaded capture is frozen out of the cyclic
        GC: it is long-lived and acyclic, and full collections would walk all of it (docs/measurements.md, row
        34)."""
        GC_PAUSED.hold()
        try:
            with self._held:
                profile = self._streamed(first) if self.trace_file is not None else None
                if profile is None:
                    profile = self._read_whole(first)
                if self.facts is not None:
                    profile = completed(profile, self.facts)
                profile = with_unattributed(profile)
            gc.freeze()
            self.bytes_read = self.size
            return profile
        finally:
            GC_PAUSED.release()

    def _read_whole(self, first: Callable[[Trace], None] | None = None) -> Profile:
        if self.data is None:  # a trace that must be read whole after all
            self.data = self._held.enter_context(mapped(self.path, self.settled))
            self.size = len(self.data)
        whole = is_msgpack(self.data) or is_object(self.data)  # pieces are cut at a JSON tree's lines
        profile = None if whole else load_in_pieces(
            self.path, self.data, self.show_internal, cancelled=self._stop_here, progress=self._read_so_far)
        if self._stop_here():
            raise LoadCancelled(self.path)
        return profile or load_whole(self.path, self.data, self.show_internal, self._stop_here, first)

    def _streamed(self, first: Callable[[Trace], None] | None = None) -> Profile | None:
        """The profile of a large trace read a piece at a time; None when it must be read whole (the trace file is
        then let go)."""
        from proton_tui.hatchet.chrome_trace import TraceError  # numpy: for traces alone
        from proton_tui.hatchet.trace_stream import NotStreamable, stream_trace

        with self._streaming:
            try:
                trace = self._split_trace()
            except TraceError:  # columns the trace refuses (a time past the largest float): read whole, where
                self.trace_file = None  # every error is worded
                return None
            if trace is None:
                try:
                    trace = stream_trace(self.path, self.trace_file.pieces(), self._stop_here, self._read_so_far)
                except (NotStreamable, TraceError):  # read whole, where every error is worded
                    trace = None
            if trace is not None:
                self.trace_file.check()
        self.trace_file = None
        return None if trace is None else trace_profile(self.path, trace, self.show_internal, self._stop_here, first)

    def _split_trace(self):
        """The trace as the workers decoded it; None when there are none, or one reader must read it after all."""
        split = self._split
        if split is None:
            return None
        try:  # kept meanwhile, so that a cancel stops the workers
            trace = split.trace(self._stop_here, self._read_so_far)
        finally:
            split.close()
            self._split = None
        if trace is not None:
            self.trace_file.read_by_workers()
            self._read_so_far(self.size)
        return trace

    def close(self) -> None:
        if self._split is not None:
            self._split.close()
            self._split = None
        self._streaming.close()
        self._held.close()


def completed(profile: Profile, facts: RunFacts) -> Profile:
    """The profile as its run knows it (see RunFacts); CaptureError for an SM clock given to a capture other than an
    instrumentation trace (a trace records no device info, so only a trace takes a clock)."""
    clock = facts.sm_clock_khz
    if clock is not None and (profile.trace is None or not profile.trace.has_warps):
        raise CaptureError(f"{facts.clock_flag}: {profile.path} is not an instrumentation trace (its cycles are what "
                           "the clock converts)")
    changes: dict = {}
    if facts.device_map and (renamed := _renamed_devices(profile, facts.device_map)):
        changes.update(renamed, device_note=facts.device_note)
    cycle_facts = profile.cycle_facts
    if profile.unit == "cycles" and facts.cycle_facts is not None:
        if profile.trace is not None and cycle_facts is not None:  # a trace counts its own launches
            cycle_facts = replace(cycle_facts, clock_khz=facts.cycle_facts.clock_khz)
        else:
            cycle_facts = facts.cycle_facts
    if clock is not None:  # the user's word over the clock its run reported
        cycle_facts = replace(cycle_facts or CycleFacts(), clock_khz=clock)
    if cycle_facts is not profile.cycle_facts:
        changes["cycle_facts"] = cycle_facts
    return replace(profile, **changes, _kernel_stats=None, _device_names=None, _device_totals=None) if changes \
        else profile


def _renamed_devices(profile: Profile, mapping: dict[str, str]) -> dict | None:
    """The node labels and device_info with devices called by other labels; a label the capture already uses is
    never taken (two devices would merge). None when nothing is renamed."""
    taken = set(profile.device_names())
    mapping = {old: new for old, new in mapping.items() if old != new and new not in taken}
    if not mapping:
        return None
    info = {}
    for device_type, by_id in profile.device_info.items():
        if isinstance(by_id, dict):
            by_id = {device_index(mapping.get(label := device_label(device_type, device_id), label)): spec
                     for device_id, spec in by_id.items()}
        info[device_type] = by_id
    return {"devices": [mapping.get(device, device) for device in profile.devices], "device_info": info}
