"""The messages screens and workers post. Screens never push each other: they ask, and the app routes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from proton_tui.hatchet import Profile
from proton_tui.records import OutputSignals
from proton_tui.view.names import Names

if TYPE_CHECKING:
    from proton_tui.engine.check import CheckReport
    from proton_tui.engine.session import RunResult
    from proton_tui.output.diff import ProfileDiff
    from proton_tui.tui.opening import Opening


@dataclass(eq=False)
class Loaded(Message):
    """A capture being opened has been read (`profile`: for a rank set's opening, the RankSet)."""

    profile: Profile
    opening: Opening | None = None


@dataclass(eq=False)
class TraceRead(Message):
    """An instrumentation trace being opened has had its events read: its warps (`WarpTrace`, the first launch worked
    out) can be shown while its tree is built."""

    trace: object
    warps: object
    opening: Opening


@dataclass(eq=False)
class AllLaunchesRead(Message):
    """An instrumentation trace's launches all worked out, and the statistics across them (`WarpTrace.across`)."""

    warps: object


@dataclass(eq=False)
class ReadCrashed(Message):
    """Reading the capture being opened failed in a way no capture should make it fail (a defect)."""

    error: Exception


@dataclass(eq=False)
class NamesReady(Message):
    """Readable (demangled) names for every raw name of the capture, worked out off the UI thread."""

    names: Names


@dataclass(eq=False)
class RanksLaidOut(Message):
    """A rank set's traces merged onto one timeline off the UI thread (`output.rank_timeline`), or why they could
    not be."""

    timeline: object | None
    problem: str | None = None


class TimelineLeft(Message):
    """Escape on a timeline: the screen goes back to the table."""


class TimelineSelected(Message):
    """A timeline's selected event changed (an index into its trace's events). Defined here, not with the timeline
    widgets, so a screen handles it without loading them (and numpy) before a trace is shown."""

    def __init__(self, view, event: int) -> None:
        super().__init__()
        # sent by the view itself: made inside its parent's handler, Textual would stop it at that parent
        self.set_sender(view)
        self.view, self.event = view, event


@dataclass(eq=False)
class WarpsRead(Message):
    """An instrumentation trace's warps, launches and statistics, worked out off the UI thread."""

    trace: object
    clock_khz: float | None
    warps: object


@dataclass(eq=False)
class ViewCapture(Message):
    """Open a capture in the viewer, with the run that made it when there is one: `profile` loaded, else the capture
    `opening` is about to read (a rank's), else the run's capture opened now (a run read back from its folder)."""

    profile: Profile | None
    run: RunResult | None = None
    opening: Opening | None = None


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
    """A capture being opened could not be read: for a fatal opening (``view FILE``) the app ends with this one-line
    reason and exit code 2; else the screen that opened it says why."""

    reason: str
    opening: Opening | None = None


@dataclass(eq=False)
class StreamRead(Message):
    """What a run's output stream has said so far, as the run engine read it."""

    signals: OutputSignals
