"""Read a run's output stream for what matters, and decide the run's verdict from stream and capture.

A run is judged by its stream and its capture, never by the exit code alone: Proton 3.5-3.6 exits 0 after a
FAIL, and writes no capture when the script exits or raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from proton_tui.engine.rules import cli_words
from proton_tui.engine.runner import ProcessResult
from proton_tui.records import Outcome, OutputSignals  # noqa: F401  (Outcome: the words a run ends with)

PAYLOAD_LINE = re.compile(r"^vecadd: (?P<key>[a-z_]+)=(?P<value>.*)$")
PAYLOAD_VERDICT = re.compile(r"^vecadd: (PASS|FAIL)$")
TIMING = re.compile(r"(first_launch_ms|loop_ms|per_iter_us|gbps)=([0-9.eE+-]+)")
SCRIPT_ERROR = re.compile(r"An error occurred while executing the script: (.*)$")
MISSING_LIBRARY = re.compile(r"Could not load `(lib[^`]*\.so)`")
DROPPED_EVENTS = re.compile(r"^Warning \(cta(\d+), warp(\d+)\): .* events are dropped due to insufficient buffer size")
SIGFPE = 8
INSTRUMENTATION_SIGFPE = ("SIGFPE: under the instrumentation backend Proton dies this way when a Triton kernel "
                          "without proton.language scopes is launched after a scoped one (seen with Triton 3.6.0 and "
                          "3.7.1); launch only scoped kernels while it profiles, or the others first")
ARGPARSE_ERROR = re.compile(r"^(?P<prog>[\w.-]+): error: (?P<message>.+)$")
NO_DRIVER_HINT = cli_words("Triton found no GPU driver: Proton needs a GPU; «no-profile» runs the payload alone "
                           "through the Triton interpreter")
EMPTY_CAPTURE_HINTS = {
    "instrumentation": "the instrumentation backend records only proton.language scopes: a plain kernel yields "
                       "an empty tree",
    "roctracer": cli_words("a pinned roctracer records nothing unless it starts after the HIP runtime: use «mode env» "
                           "or «backend auto»"),
    None: "no kernel reached the profiler: check that the payload ran on the GPU Proton watches",
}
LIBRARY_REMEDY = ("Proton dlopens the unversioned library name; some images (ROCm from Python wheels) ship only the "
                  "versioned soname: put a folder of unversioned symlinks on LD_LIBRARY_PATH, or use a system ROCm")


class OutputClassifier:
    """Feed it lines as they arrive; ``signals`` holds what it has seen so far."""

    def __init__(self) -> None:
        self.signals = OutputSignals()
        self._in_traceback = False
        self._dropped: set[tuple[str, str]] = set()

    def feed(self, lines: list[str]) -> None:
        for line in lines:
            self._feed_line(line)

    def _feed_line(self, line: str) -> None:
        signals = self.signals
        if line.strip():
            signals.last_line = line.strip()
        if line.startswith("Traceback (most recent call last):"):
            self._in_traceback = True
            return
        if self._in_traceback:
            if not line.strip() or line[:1].isspace():  # a frame
                return
            self._in_traceback = False
            signals.exception = line.strip()
        if verdict := PAYLOAD_VERDICT.match(line):
            signals.result = verdict[1]
        elif payload := PAYLOAD_LINE.match(line):
            self._payload_value(payload["key"], payload["value"], line)
        if match := SCRIPT_ERROR.search(line):
            signals.script_error = match[1].strip()
        if match := MISSING_LIBRARY.search(line):
            signals.missing_library = match[1]
        if line.startswith("Warning (cta") and (dropped := DROPPED_EVENTS.match(line)):
            self._dropped.add((dropped[1], dropped[2]))  # Proton warns once per CTA, warp and launch
            signals.dropped_events = len(self._dropped)
        if match := ARGPARSE_ERROR.match(line):
            signals.usage_error = f"{match['prog']}: {match['message']}"

    def _payload_value(self, key: str, value: str, line: str) -> None:
        signals = self.signals
        if key == "device":
            signals.device = value
        elif key == "max_abs_err":
            signals.max_abs_err = _number(value)
        elif key == "sm_clock_khz":
            signals.sm_clock_khz = _number(value)
        else:
            for name, number in TIMING.findall(line):
                setattr(signals, name, _number(number))

    @property
    def error(self) -> str | None:
        """The most telling error line in the stream, if any."""
        signals = self.signals
        if signals.missing_library:
            return f"Proton could not load `{signals.missing_library}`"
        return signals.script_error or signals.usage_error or signals.exception


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class CaptureStatus:
    """What the run left at ``path``: nothing, an unreadable file, an empty tree, or kernels."""

    path: Path
    missing: bool = False
    error: str | None = None  # CaptureError's one-line reason
    empty: bool = False


@dataclass(frozen=True)
class Verdict:
    """A run's outcome, a one-line message, and remedies worth showing with it."""

    outcome: Outcome
    message: str
    hints: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS

    @property
    def exit_code(self) -> int:
        """The CLI's exit code: 0 PASS, 2 refused configuration, 1 any other failed run."""
        return 0 if self.passed else 2 if self.outcome is Outcome.REFUSED else 1


def decide_verdict(classifier: OutputClassifier, process: ProcessResult, capture: CaptureStatus | None,
                   backend: str | None = None) -> Verdict:
    """PASS needs the stream's PASS and, when profiling (``capture`` given), a capture with kernels."""
    signals, error = classifier.signals, classifier.error
    hints = stream_hints(classifier)
    if process.exit_code in (-SIGFPE, 128 + SIGFPE) and backend == "instrumentation" and process.ended_by is None:
        after = f" after: {signals.last_line}" if signals.last_line else ""
        outcome = Outcome.NO_CAPTURE if capture is not None and capture.missing else Outcome.PAYLOAD_ERROR
        return Verdict(outcome, f"{outcome.value}: killed by {INSTRUMENTATION_SIGFPE}{after}", hints)
    if process.ended_by == "cancelled":
        return Verdict(Outcome.CANCELLED, f"cancelled after {process.wall_s:.1f} s", hints)
    if process.ended_by == "timeout":
        return Verdict(Outcome.TIMED_OUT, f"timed out after {process.wall_s:.1f} s", hints)
    if signals.result == "FAIL":
        err = "" if signals.max_abs_err is None else f" (max_abs_err={signals.max_abs_err:.3e})"
        return Verdict(Outcome.FAIL, f"FAIL: the kernel's output differs from x + y{err}", hints)
    if capture is not None and capture.missing and (signals.device is None or signals.result == "PASS"):
        where = ("Proton failed before the payload started" if signals.device is None
                 else f"Proton left no {capture.path}")
        if not error and process.exit_code is not None and process.exit_code < 0:
            error = f"killed by signal {-process.exit_code}"
        return Verdict(Outcome.NO_CAPTURE, f"no capture written: {where}" + (f": {error}" if error else ""), hints)
    if signals.result != "PASS" or error or process.exit_code != 0:
        return Verdict(Outcome.PAYLOAD_ERROR, f"payload error: {_payload_problem(classifier, process)}", hints)
    if capture is None:
        return Verdict(Outcome.PASS, "PASS: the kernel matched x + y (not profiled)", hints)
    if capture.error:
        return Verdict(Outcome.BAD_CAPTURE, f"unreadable capture: {capture.error}", hints)
    if capture.empty:
        return Verdict(Outcome.EMPTY_CAPTURE, f"empty capture: Proton recorded no kernels in {capture.path}",
                       hints + (EMPTY_CAPTURE_HINTS.get(backend, EMPTY_CAPTURE_HINTS[None]),))
    return Verdict(Outcome.PASS, f"PASS: the kernel matched x + y; capture {capture.path}", hints)


def _payload_problem(classifier: OutputClassifier, process: ProcessResult) -> str:
    last_line = classifier.signals.last_line
    after = f" after: {last_line}" if last_line else ""
    if classifier.error:
        return classifier.error
    if process.exit_code is not None and process.exit_code < 0:
        return f"killed by signal {-process.exit_code}{after}"
    if process.exit_code:
        return f"exited with code {process.exit_code}{after}"
    return "the payload ended without printing PASS or FAIL"


def stream_hints(classifier: OutputClassifier) -> tuple[str, ...]:
    signals, hints = classifier.signals, []
    if signals.missing_library:
        hints.append(LIBRARY_REMEDY)
    if signals.exception and "0 active drivers" in signals.exception:
        hints.append(NO_DRIVER_HINT)
    if signals.dropped_events:
        warps = "1 warp" if signals.dropped_events == 1 else f"{signals.dropped_events:,} warps"
        hints.append(f"{warps} lost events: Proton's instrumentation buffer was too small for what they recorded "
                     + cli_words("(give «buffer size» more bytes, or 0 to let Proton size it)"))
    return tuple(hints)
