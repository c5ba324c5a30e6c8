"""The messages screens and workers post. Screens never push each other: they ask, and the app routes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from ..hatchet import Profile
from ..names import Names
from ..records import OutputSignals

if TYPE_CHECKING:
    from ..capture.check import CheckReport
    from ..capture.session import RunResult
    from ..diff import ProfileDiff
    from .opening import Opening


class Loaded(Message):
    """A capture being opened has been read."""

    def __init__(self, profile: Profile, opening: Opening | None = None) -> None:
        super().__init__()
        self.profile, self.opening = profile, opening


class ReadCrashed(Message):
    """Reading the capture being opened failed in a way no capture should make it fail (a defect)."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


class NamesReady(Message):
    """Readable (demangled) names for every raw name of the capture, worked out off the UI thread."""

    def __init__(self, names: Names) -> None:
        super().__init__()
        self.names = names


class WarpsRead(Message):
    """An instrumentation trace's warps, launches and statistics, worked out off the UI thread."""

    def __init__(self, trace: object, clock_khz: float | None, warps: object) -> None:
        super().__init__()
        self.trace, self.clock_khz, self.warps = trace, clock_khz, warps


class ViewCapture(Message):
    """Open a capture in the viewer, with the run that made it when there is one: `profile` loaded, or None for the
    run's capture to be opened now (a run read back from its folder)."""

    def __init__(self, profile: Profile | None, run: RunResult | None = None) -> None:
        super().__init__()
        self.profile, self.run = profile, run


class ShowRunLog(Message):
    """Show a run's output: the run screen underneath when it is that run's, else the run's stdout.log."""

    def __init__(self, run: RunResult) -> None:
        super().__init__()
        self.run = run


class OpenRun(Message):
    """Reopen a finished run: its capture when it has one to show, else its output."""

    def __init__(self, run: RunResult) -> None:
        super().__init__()
        self.run = run


class OpenCheck(Message):
    """Show a finished box check (read back from its folder)."""

    def __init__(self, report: CheckReport) -> None:
        super().__init__()
        self.report = report


class ShowDiff(Message):
    """Show two captures compared."""

    def __init__(self, diff: ProfileDiff, names: Names) -> None:
        super().__init__()
        self.diff, self.names = diff, names


class RunFinished(Message):
    """A run ended: a result, or a reason it never started (refusal, probe failure)."""

    def __init__(self, result: RunResult | None, problem: str | None = None) -> None:
        super().__init__()
        self.result, self.problem = result, problem


class LoadFailed(Message):
    """A capture being opened could not be read: for a fatal opening (``view FILE``) the app ends with this one-line
    reason and exit code 2; else the screen that opened it says why."""

    def __init__(self, reason: str, opening: Opening | None = None) -> None:
        super().__init__()
        self.reason, self.opening = reason, opening


class StreamRead(Message):
    """What a run's output stream has said so far, as the run engine read it."""

    def __init__(self, signals: OutputSignals) -> None:
        super().__init__()
        self.signals = signals
