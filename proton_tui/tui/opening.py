"""A capture being opened in the TUI: read on a daemon thread, whichever way it came (``view FILE``, the sample,
compare's B, a stored run's capture, a rank set's captures), and reported back as messages (Loaded, LoadFailed,
ReadCrashed). An instrumentation trace's first launch is reported as soon as its events are read (TraceRead), and
its tree is built once that launch is on the screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from proton_tui.console import printable, size_text
from proton_tui.hatchet import CaptureError, PendingLoad, Profile
from proton_tui.hatchet.scope import within
from proton_tui.tui.messages import Loaded, LoadFailed, ReadCrashed, TraceRead
from proton_tui.view.filters import ViewFilter
from proton_tui.view.formatting import counted
from proton_tui.view.reading import Failed, First, Outcome, Read, Reading

# How long a frame that must be seen (the app's first, an instrumentation trace's first launch) gets to reach the
# terminal before a large read holds the interpreter beside it (Textual's writer thread needs it); calibrated with
# the end-to-end test of an 86 MB capture on the 2-core machine.
FRAME_WRITE_S = 0.02


@dataclass
class Opening:
    """A capture being opened: the file, what to say meanwhile, the call that finishes the load (CaptureError), the
    filter to apply once it has loaded, and the call that cancels a load under way (from another thread). `loader`:
    the thread that runs `finish`, once started. `fatal`: a load that fails ends the app (``view FILE``); else the
    screen that asked says why and stays."""

    path: Path
    label: str
    finish: Callable[[], Profile]
    view_filter: ViewFilter = ViewFilter()
    cancel: Callable[..., None] = lambda abandon=False: None
    fraction_read: Callable[[], float] = lambda: 0.0
    reading: Reading | None = None
    size: int | None = None  # the file's bytes, when known
    fatal: bool = True
    rank_set: bool = False  # what it finishes with is a RankSet (`of_rank_set`), not a Profile
    kernel: str | None = None  # the kernel the viewer opens on, in its kernel summary (a rank's, from a rank set)
    # `finish` takes a call for a trace's events read (`PendingLoad.finish`); with it, the trace's SM clock
    trace_first: bool = False
    clock_khz: float | None = None
    started: bool = False  # `start` has been called (a screen takes what the read posts)

    @classmethod
    def of(cls, pending: PendingLoad, view_filter: ViewFilter | None = None, *, fatal: bool = True,
           owned: bool = False, scope: str | None = None, reading: Reading | None = None) -> Opening:
        """The opening of a capture about to be read (`hatchet.pending_capture`). `owned`: the file is released once
        read (else its opener closes it). `scope`: the capture is restricted to that scope's subtree once read (a
        scope that names no frame, or several, fails the read as a bad file does). `reading`: the read of `pending`
        already under way (`read_now`), which the opening takes over."""
        def finish(first=None) -> Profile:
            try:
                return within(pending.finish(first), scope)
            finally:
                if owned:
                    pending.close()

        facts = pending.facts
        return cls(pending.path, f"Reading {printable(str(pending.path))} ({size_text(pending.size)})…", finish,
                   view_filter or ViewFilter(), pending.cancel, lambda: pending.bytes_read / pending.size,
                   size=pending.size, fatal=fatal, trace_first=scope is None,
                   clock_khz=facts.trace_clock_khz if facts is not None else None, reading=reading)

    @classmethod
    def of_rank_set(cls, files: list[Path], view_filter: ViewFilter | None = None, *, fatal: bool = True) -> Opening:
        """The opening of a rank set (`output.ranks.open_rank_set`): its captures (`rank_files`, checked already)
        read one after the other; what it finishes with is the RankSet. `rank_set` says so."""
        from proton_tui.hatchet import open_capture
        from proton_tui.output.ranks import RankSetError, open_rank_set

        read = [0]

        def opener(path: Path) -> Profile:
            profile = open_capture(path)
            read[0] += 1
            return profile

        def finish():
            try:
                rank_set = open_rank_set(files, opener)
            except RankSetError as error:
                raise CaptureError(str(error)) from None
            rank_set.kernels()  # each kernel across the ranks worked out here, on the reading thread, not the UI's
            return rank_set

        folder = files[0].parent
        where = folder if all(path.parent == folder for path in files) else Path(".")
        label = f"Reading {counted(len(files), 'rank capture')} in {printable(str(where))}…"
        return cls(where, label, finish, view_filter or ViewFilter(), fraction_read=lambda: read[0] / len(files),
                   fatal=fatal, rank_set=True)

    @classmethod
    def of_rank(cls, rank, kernel: str | None = None) -> Opening:
        """The opening of one rank's own capture in a rank set (`output.ranks.open_rank`): read again, and refused
        if the file changed after the set was read; with `kernel`, the viewer opens on it. Raises CaptureError for a
        file that cannot be opened now."""
        from proton_tui.hatchet import pending_capture
        from proton_tui.output.ranks import RankSetError, open_rank

        pending = pending_capture(rank.capture.path)
        opening = cls.of(pending, fatal=False, owned=True)
        read = opening.finish

        def finish() -> Profile:
            try:
                return open_rank(rank, lambda path: read())
            except RankSetError as error:
                raise CaptureError(str(error)) from None
            finally:
                pending.close()  # read() closes it too; not when open_rank refused before reading

        opening.finish, opening.kernel, opening.trace_first = finish, kernel, False
        opening.label = f"Reading {rank.label}'s capture ({size_text(pending.size)})…"
        return opening

    def loading(self) -> bool:
        """The read is under way: started and its outcome not yet known (an outcome is settled before it is posted,
        so an app that ends on it never takes the read as abandoned)."""
        return self.reading is not None and self.reading.loading()

    def start(self, post: Callable[[Message], object], trace_first: bool = False) -> None:
        """Read the capture on a daemon thread (unless it is read already: `of`'s `reading`) and `post` what came of
        it: the keys stay live meanwhile, and quitting never waits for it (the app's process ends with the read under
        way; a thread of Textual's worker pool would be joined first). `trace_first`: an instrumentation trace's first
        launch is posted as soon as its events are read (TraceRead); its tree is built once the screen says it is
        shown (`first_shown`)."""
        self.started = True
        reading = self.reading or self._read(trace_first)

        def told(outcome: Outcome) -> None:
            if isinstance(outcome, First):
                post(TraceRead(outcome.trace, outcome.warps, self))
            elif isinstance(outcome, Read):
                post(Loaded(outcome.profile, self))
            elif isinstance(outcome, Failed):
                post(LoadFailed(outcome.reason, self))
            else:
                post(ReadCrashed(outcome.error))

        reading.listen(told)

    def first_shown(self) -> None:
        """A trace's first launch (TraceRead) is on the screen: its tree is built from now."""
        if self.reading is not None:
            self.reading.first_shown.set()

    def _read(self, trace_first: bool) -> Reading:
        self.reading = Reading(self.finish, trace_first=trace_first and self.trace_first, clock_khz=self.clock_khz)
        return self.reading
