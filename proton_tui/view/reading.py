"""A capture read on a daemon thread, started at once (``view FILE`` starts it before the TUI is imported, so the read
runs while Textual starts): what came of it is told, in order, to the one who `listen`s, held until then.

The outcomes: `First` (an instrumentation trace's events are read: its warps, the first launch worked out; the tree
is built once `first_shown` is set, so that the drawing of that launch has the interpreter to itself, or after
FIRST_SHOWN_WAIT_S), then one of `Read` (the profile), `Failed` (CaptureError's one line) or `Crashed` (a defect);
none when the read was cancelled. `settled` is set before the last outcome is told."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from proton_tui.hatchet.errors import CaptureError, LoadCancelled
from proton_tui.hatchet.loader import WhileReading

if TYPE_CHECKING:
    from proton_tui.hatchet.loader import PendingLoad
    from proton_tui.hatchet.profile import Profile
    from proton_tui.hatchet.trace import Trace
    from proton_tui.view.warps import WarpTrace

# How long the reading thread may hold the interpreter while the keys wait (Python's default is 5 ms): the app's
# quit takes many turns of its event loop; calibrated with benchmarks/bench_quit.py on the 2-core machine.
READING_SWITCH_S = 0.001


def _short_switch() -> float:
    before = sys.getswitchinterval()
    sys.setswitchinterval(READING_SWITCH_S)
    return before


SHORT_SWITCH = WhileReading(_short_switch, sys.setswitchinterval)  # while any capture is read

# How long the read waits for a trace's first launch to be shown before it builds the tree beside the drawing (a
# screen gone, say); the drawing takes 0.05-0.1 s on the H200 box (benchmarks/README.md).
FIRST_SHOWN_WAIT_S = 2.0


@dataclass(frozen=True)
class First:
    trace: Trace
    warps: WarpTrace


@dataclass(frozen=True)
class Read:
    profile: object  # a Profile, or what the finish given returns (a rank set)


@dataclass(frozen=True)
class Failed:
    reason: str


@dataclass(frozen=True)
class Crashed:
    error: Exception


Outcome = First | Read | Failed | Crashed


class Reading:
    """`finish` (`PendingLoad.finish`, or another read of the same shape) run on a daemon thread started now, after
    `prepare` (what the thread may do before it reads). With `trace_first`, `finish` is given the call that tells
    `First` (`clock_khz`: the SM clock the warps are timed at). While it runs, the interpreter switches threads more
    often (SHORT_SWITCH)."""

    def __init__(self, finish: Callable[..., Profile], *, trace_first: bool = False,
                 clock_khz: float | None = None, prepare: Callable[[], object] | None = None) -> None:
        self.settled = threading.Event()
        self.first_shown = threading.Event()
        self._finish, self._trace_first, self._clock_khz = finish, trace_first, clock_khz
        self._prepare = prepare
        self._lock = threading.Lock()
        self._held: list[Outcome] = []
        self._listener: Callable[[Outcome], object] | None = None
        self.thread = threading.Thread(target=self._run, name="capture-reader", daemon=True)
        SHORT_SWITCH.hold()
        self.thread.start()

    def listen(self, listener: Callable[[Outcome], object]) -> None:
        """Tell `listener` what came of the read: what was held first, then each outcome as it comes."""
        with self._lock:  # what was held goes first: an outcome told meanwhile waits for the lock
            self._listener = listener
            for outcome in self._held:
                listener(outcome)
            self._held = []

    def loading(self) -> bool:
        """Under way: its outcome not yet settled."""
        return self.thread.is_alive() and not self.settled.is_set()

    def _tell(self, outcome: Outcome) -> None:
        with self._lock:
            if self._listener is None:
                self._held.append(outcome)
                return
            listener = self._listener
        listener(outcome)

    def _first(self, trace: Trace) -> None:
        if not trace.has_warps:
            return
        from proton_tui.view.warps import warp_trace

        warps = warp_trace(trace, self._clock_khz)
        if warps is None or not warps.launches:
            return
        warps.launches[0]  # worked out here, not where it is drawn
        self._tell(First(trace, warps))
        self.first_shown.wait(FIRST_SHOWN_WAIT_S)

    def _run(self) -> None:
        try:
            if self._prepare is not None:
                self._prepare()
            profile = self._finish(self._first) if self._trace_first else self._finish()
        except CaptureError as error:
            self.settled.set()
            self._tell(Failed(str(error)))
        except LoadCancelled:
            pass
        except Exception as error:  # a defect: the listener raises it again where it ends the program
            self.settled.set()
            self._tell(Crashed(error))
        else:
            self.settled.set()
            self._tell(Read(profile))
        finally:
            SHORT_SWITCH.release()


def read_now(pending: PendingLoad) -> Reading:
    """`pending` read from now on (an instrumentation trace's first launch first), before anything asks for it. A
    trace decoded by workers has the modules that work out its first launch imported while the thread waits for
    them, not after."""
    facts = pending.facts
    return Reading(pending.finish, trace_first=True, clock_khz=facts.trace_clock_khz if facts is not None else None,
                   prepare=_import_warps if pending.decoded_by_workers else None)


def _import_warps() -> None:
    import proton_tui.view.warps  # noqa: F401
