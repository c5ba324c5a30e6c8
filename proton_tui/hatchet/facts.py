"""What an instrumentation capture's run knows and its file does not (`CycleFacts`), as the model holds it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CycleFacts:
    """What the capture's run knows and the file does not."""

    launches: int | None = None  # launches of the instrumented kernel
    ctas: int | None = None  # CTAs per launch
    sampled_warps: int | None = None  # warps recorded in each CTA under warp sampling; None: every warp
    sampling_known: bool = False  # whether the source says if warps were sampled
    source: str = ""  # where these facts come from: "the run", "the trace"
    clock_khz: float | None = None  # the SM clock the run's GPU reported, for a capture without device info
