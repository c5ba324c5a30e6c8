"""The verdict of a user's command: it has no PASS line, so it is judged by its exit status, Proton's own failure
lines, each rank's end and each expected capture (present, readable, with kernels)."""

from __future__ import annotations

from dataclasses import dataclass

from proton_tui.engine.classify import (
    EMPTY_CAPTURE_HINTS,
    NO_DRIVER_HINT,
    CaptureStatus,
    OutputClassifier,
    Verdict,
    stream_hints,
)
from proton_tui.engine.ranks import ended_text
from proton_tui.engine.rules import cli_words
from proton_tui.engine.runner import ProcessResult
from proton_tui.records import Outcome, RankRecord
from proton_tui.view.formatting import counted

NO_DRIVER = "0 active drivers"
NO_GPU_HINT = cli_words("Triton found no GPU driver in the workload's processes: Proton profiles only on a GPU; "
                        "«no-profile» runs the command alone")


@dataclass(frozen=True)
class RankOutcome:
    """One expected process: its sidecar (None when it never started the hook), its capture, its last exception."""

    rank: int | None
    record: RankRecord | None
    capture: CaptureStatus | None
    exception: str | None = None

    @property
    def label(self) -> str:
        return self.record.label if self.record is not None else f"rank {self.rank}"

    def problem(self, profiling: bool) -> str | None:
        """What went wrong with this process, in a few words; None when nothing did."""
        record = self.record
        if record is None:
            return f"{self.label}: never started (no sidecar)"
        parts = []
        if record.ended:
            parts.append(record.ended)
        elif not record.finalized:
            parts.append("ended without finalizing (killed outright?)")
        if self.exception:
            parts.append(f"raised {self.exception}")
        if profiling and record.proton_error:
            parts.append(f"Proton: {record.proton_error}")
        if profiling and self.capture is not None and not parts:
            if self.capture.missing:
                parts.append(f"no capture at {self.capture.path}")
            elif self.capture.error:
                parts.append(f"unreadable capture: {self.capture.error}")
            elif self.capture.empty:
                parts.append("an empty capture")
        return f"{self.label}: " + "; ".join(parts) if parts else None


# how a process ends by its own fault or the kernel's, never as a follow-on of a peer's end (a peer's exit makes NCCL's
# watchdog abort, SIGABRT; a launcher stops the rest with SIGTERM)
OUTRIGHT = frozenset(f"killed by {name}" for name in ("SIGKILL", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"))


def first_to_fail(ranks: list[RankOutcome], said: int | None) -> int | None:
    """The rank that failed first. Each rank's hook stamps when it began to end (its uncaught exception, a signal
    it caught, else its exit). A rank killed outright (OUTRIGHT: a signal no hook sees) has no stamp;
    where it is the only failed rank without one, it failed first: every other failed rank's end was seen by its
    hook, and a launcher stops the rest of a job with SIGTERM, which the hook sees. Where every failed rank has a
    stamp and they ran on one host (one clock), the earliest is first. Else the launcher's word (`said`): torchrun
    times failures to the second and names the lowest rank among those it found in one poll."""
    failed = [rank for rank in ranks if rank.record is None or rank.record.ended or rank.exception
              or not rank.record.finalized]
    unstamped = [rank for rank in failed if rank.record is None or rank.record.ending_ns is None]
    outright = [rank for rank in unstamped if rank.record is not None and rank.record.ended in OUTRIGHT]
    if unstamped:
        return outright[0].rank if len(outright) == len(unstamped) == 1 else said
    if not failed or len({rank.record.host for rank in failed}) != 1:
        return said
    earliest = min(rank.record.ending_ns for rank in failed)
    first = [rank.rank for rank in failed if rank.record.ending_ns == earliest]
    return first[0] if len(first) == 1 else said


def decide_workload_verdict(classifier: OutputClassifier, process: ProcessResult, profiling: bool,
                            capture: CaptureStatus | None, ranks: list[RankOutcome] | None,
                            first: int | None = None) -> Verdict:
    """PASS needs the command to exit 0 with no Proton failure and, when profiling, every expected capture with
    kernels. `ranks`: the expected processes of a run under a launcher (None for one process, whose capture is
    `capture`)."""
    hints = list(stream_hints(classifier))
    if process.ended_by == "cancelled":
        return Verdict(Outcome.CANCELLED, f"cancelled after {process.wall_s:.1f} s", tuple(hints))
    if process.ended_by == "timeout":
        return Verdict(Outcome.TIMED_OUT, f"timed out after {process.wall_s:.1f} s", tuple(hints))
    captures = [rank.capture for rank in ranks or []] if ranks is not None else [capture] if capture else []
    first_rank = [rank for rank in ranks or [] if rank.rank == first]  # the launcher's first failure leads
    problems = [text + (" (the first to fail)" if rank.rank == first else "")
                for rank in first_rank + [rank for rank in ranks or [] if rank.rank != first]
                if (text := rank.problem(profiling))]
    if any(NO_DRIVER in (rank.record.proton_error or "") for rank in ranks or [] if rank.record) or (
            classifier.signals.exception and NO_DRIVER in classifier.signals.exception):
        hints = [hint for hint in hints if hint != NO_DRIVER_HINT] + [NO_GPU_HINT]
    good = [status for status in captures if status and not (status.missing or status.error or status.empty)]
    tally = ""
    if profiling and ranks is not None:
        tally = f"captured {len(good)} of {counted(len(ranks), 'rank')}"
    elif profiling and capture is not None:
        tally = f"capture {capture.path}" if good else ""
    detail = "; ".join(part for part in (tally, *problems) if part)
    detail = f" ({detail})" if detail else ""
    error = None if problems else classifier.error  # a launcher's own error only repeats what its ranks said
    if process.exit_code != 0 or classifier.signals.script_error:
        how = ended_text(process.exit_code) if process.exit_code not in (0, None) else "exited with code 0"
        what = f"the command {how}" + (f": {error}" if error else "")
        return Verdict(Outcome.COMMAND_FAILED, f"{Outcome.COMMAND_FAILED.value}: {what}{detail}", tuple(hints))
    if profiling and ranks is not None and not ranks:
        return Verdict(Outcome.NO_CAPTURE, "no capture written: no process of the command had a rank (is it a "
                       "launcher that sets RANK, SLURM_PROCID or OMPI_COMM_WORLD_RANK?)", tuple(hints))
    if profiling and (not captures or any(status is None or status.missing for status in captures)):
        return Verdict(Outcome.NO_CAPTURE, f"{Outcome.NO_CAPTURE.value}{detail}", tuple(hints))
    if profiling and any(status.error for status in captures if status):
        return Verdict(Outcome.BAD_CAPTURE, f"{Outcome.BAD_CAPTURE.value}{detail}", tuple(hints))
    if profiling and any(status.empty for status in captures if status):
        hints.append(EMPTY_CAPTURE_HINTS[None])
        return Verdict(Outcome.EMPTY_CAPTURE, f"{Outcome.EMPTY_CAPTURE.value}{detail}", tuple(hints))
    if problems:  # exited 0 and captured, yet a rank says something went wrong
        return Verdict(Outcome.COMMAND_FAILED, f"{Outcome.COMMAND_FAILED.value}{detail}", tuple(hints))
    done = "the command exited 0" + (f"; {tally}" if tally else " (not profiled)" if not profiling else "")
    if ranks is not None and not profiling:
        done += f"; {counted(len(ranks), 'rank')} ran"
    return Verdict(Outcome.PASS, f"PASS: {done}", tuple(hints))
