"""Loading a capture: `PendingLoad` maps the file (and, for a large one, starts the split loader); `finish` gives
the profile. `load_profile` is both in one call."""

from __future__ import annotations

import gc
from contextlib import ExitStack
from pathlib import Path

from .profile import Profile
from .reader import load_in_one_process, mapped
from .split import start_split

# From here a capture is parsed on two cores (split.py). Measured on 2 cores: even at 17 MB, 0.34 s instead of
# 0.41 s at 34 MB.
TWO_PROCESS_MIN_BYTES = 24_000_000


def load_profile(path: str | Path, *, show_internal: bool = False) -> Profile:
    """Read, validate and index a `.hatchet` file (from TWO_PROCESS_MIN_BYTES on two cores). Raises CaptureError
    with a one-line reason."""
    pending = PendingLoad(Path(path), show_internal)
    try:
        return pending.finish()
    finally:
        pending.close()


class PendingLoad:
    """A capture being loaded: made, it has checked and mapped the file and, for a large one, forked the child that
    loads part of it (CaptureError for a file that cannot be read); `finish` does the rest here. `close` releases
    the file and the child (also when `finish` was never called)."""

    def __init__(self, path: Path, show_internal: bool, busy_s: float = 0.0) -> None:
        """`busy_s`: seconds of other work this process does before `finish` (the child then takes more)."""
        self.path, self.show_internal = path, show_internal
        self._held = ExitStack()
        self.data = self._held.enter_context(mapped(path))
        self.split = None
        if len(self.data) >= TWO_PROCESS_MIN_BYTES:
            self.split = start_split(path, self.data, show_internal, busy_s)
            if self.split is not None:
                self._held.callback(self.split.close)

    def finish(self) -> Profile:
        """The profile; raises CaptureError. The loaded capture is frozen out of the cyclic GC: it is long-lived
        and acyclic, and full collections would walk all of it (~50 ms at 100k nodes)."""
        collecting = gc.isenabled()
        gc.disable()  # millions of new containers, none cyclic: collections would walk the whole tree again and again
        try:
            with self._held:
                profile = self.split.finish() if self.split is not None else None
                if profile is None:
                    profile = load_in_one_process(self.path, self.data, self.show_internal)
            gc.freeze()
            return profile
        finally:
            if collecting:
                gc.enable()

    def close(self) -> None:
        self._held.close()


