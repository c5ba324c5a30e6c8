"""The messages screens and workers post. Screens never push each other: they ask, and the app routes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from ..filters import ViewFilter
from ..hatchet import Profile
from ..names import Names

if TYPE_CHECKING:
    from ..capture.check import CheckReport
    from ..capture.session import RunResult
    from ..diff import ProfileDiff


@dataclass
class Opening:
    """A capture being opened: the file, what to say meanwhile, the call that finishes the load (CaptureError), the
    filter to apply once it has loaded, and the call that cancels a load under way (from another thread). `loader`:
    the thread that runs `finish`, once started."""

    path: Path
    label: str
    finish: Callable[[], Profile]
    view_filter: ViewFilter = ViewFilter()
    cancel: Callable[..., None] = lambda abandon=False: None
    fraction_read: Callable[[], float] = lambda: 0.0
    loader: threading.Thread | None = None
    size: int | None = None  # the file's bytes, when known
    def loading(self) -> bool:
        return self.loader is not None and self.loader.is_alive()


@dataclass(eq=False)
class Loaded(Message):
    """The capture being opened has been read."""

    profile: Profile


@dataclass(eq=False)
class ReadCrashed(Message):
    """Reading the capture being opened failed in a way no capture should make it fail (a defect)."""

    error: Exception


@dataclass(eq=False)
class NamesReady(Message):
    """Readable (demangled) names for every raw name of the capture, worked out off the UI thread."""

    names: Names


@dataclass(eq=False)
class WarpsRead(Message):
    """An instrumentation trace's warps, launches and statistics, worked out off the UI thread."""

    trace: object
    clock_khz: float | None
    warps: object


@dataclass(eq=False)
class ViewCapture(Message):
    """Open a loaded capture in the viewer, with the run that made it when there is one."""

    profile: Profile
    run: RunResult | None = None


@dataclass(eq=False)
class ShowRunLog(Message):
    """Show a run's output: the run screen underneath when it is that run's, else the run's stdout.log."""

    run: RunResult


@dataclass(eq=False)
class OpenRun(Message):
    """Reopen a finished run: its capture when it has one to show, else its output."""

    run: RunResult


@dataclass(eq=False)
class OpenCheck(Message):
    """Show a finished box check (read back from its folder)."""

    report: CheckReport


@dataclass(eq=False)
class ShowDiff(Message):
    """Show two captures compared."""

    diff: ProfileDiff
    names: Names


@dataclass(eq=False)
class RunFinished(Message):
    """A run ended: a result, or a reason it never started (refusal, probe failure)."""

    result: RunResult | None
    problem: str | None = None


@dataclass(eq=False)
class LoadFailed(Message):
    """The capture being opened could not be read: the app ends with this one-line reason and exit code 2."""

    reason: str
