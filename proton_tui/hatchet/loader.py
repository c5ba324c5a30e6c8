"""Loading a capture: `PendingLoad` checks and maps the file at once (so a bad file is reported before a TUI
starts); `finish` reads it, a large one in pieces (`pieces.py`), anything else whole. `load_profile` is both in one
call."""

from __future__ import annotations

import gc
import threading
from contextlib import ExitStack
from pathlib import Path

from .cycles import with_unattributed
from .decode import is_msgpack, is_object
from .errors import LoadCancelled
from .pieces import load_in_pieces
from .profile import Profile
from .reader import load_whole
from .source import mapped


def load_profile(path: str | Path, *, show_internal: bool = False, settled: bool = False) -> Profile:
    """Read, validate and index a `.hatchet` file. Raises CaptureError with a one-line reason. `settled`: its
    writer is known to have finished (a run's process has ended), so a file written just now is not waited on."""
    pending = PendingLoad(Path(path), show_internal, settled)
    try:
        return pending.finish()
    finally:
        pending.close()


class PendingLoad:
    """A capture about to be read: made, it has checked and mapped the file (CaptureError for one that cannot be
    read); `finish` reads it. `close` releases the file (also when `finish` was never called); `cancel`, from another
    thread, makes a `finish` under way raise LoadCancelled at its next check (between pieces, and as it walks the
    tree)."""

    def __init__(self, path: Path, show_internal: bool = False, settled: bool = False) -> None:
        self.path, self.show_internal = path, show_internal
        self._held = ExitStack()
        self._cancelled = threading.Event()
        self._abandon = False
        self._parked = threading.Event()
        self.data = self._held.enter_context(mapped(path, settled))
        self.size = len(self.data)
        self.bytes_read = 0  # so far, as a `finish` under way reports it (a file read in pieces: after each piece)

    def cancel(self, abandon: bool = False) -> None:
        """Stop a `finish` under way at its next check. `abandon`: the process is about to end, so the read stops
        there for good and never returns: unwinding would free what it built, and freeing a million objects holds
        the interpreter long enough to delay the end by a fraction of a second."""
        self._abandon = self._abandon or abandon
        self._cancelled.set()

    def _read_so_far(self, done: int) -> None:
        self.bytes_read = done

    def _stop_here(self) -> bool:
        if not self._cancelled.is_set():
            return False
        while self._abandon:  # parked for good: nothing ever sets this event
            self._parked.wait(3600)
        return True

    def finish(self) -> Profile:
        """The profile; raises CaptureError. The loaded capture is frozen out of the cyclic GC: it is long-lived
        and acyclic, and full collections would walk all of it (~50 ms at 100k nodes)."""
        collecting = gc.isenabled()
        gc.disable()  # millions of new containers, none cyclic: collections would walk the whole tree again and again
        try:
            with self._held:
                whole = is_msgpack(self.data) or is_object(self.data)  # pieces are cut at a JSON tree's lines
                profile = None if whole else load_in_pieces(
                    self.path, self.data, self.show_internal, cancelled=self._stop_here, progress=self._read_so_far)
                if self._stop_here():
                    raise LoadCancelled(self.path)
                if profile is None:
                    profile = load_whole(self.path, self.data, self.show_internal, self._stop_here)
                profile = with_unattributed(profile)
            gc.freeze()
            self.bytes_read = self.size
            return profile
        finally:
            if collecting:
                gc.enable()

    def close(self) -> None:
        self._held.close()
