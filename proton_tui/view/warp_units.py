"""What the text of an instrumentation trace names without its statistics (so that the text of any capture reads
them without numpy): the trace's units, a warp, a duration as cycles."""

from __future__ import annotations

from typing import NamedTuple

# Where an instrumentation trace puts events: Proton's writer adds each CTA's start on the GPU's clock in ns to its
# cycle count, so positions are cycles within a CTA and ns between CTAs; durations are cycles.
TRACE_UNITS = "trace units (cycles within a CTA, ns between CTAs)"


class Warp(NamedTuple):
    """One warp in one launch (ordered by SM, CTA, warp: the timeline's order; a tuple, as fast to hash and sort)."""

    sm: int
    cta: int
    warp: int

    @property
    def name(self) -> str:
        return f"CTA {self.cta} warp {self.warp} (SM {self.sm})"


def cycles_of(duration: float) -> int:
    """A duration of an instrumentation trace as its whole cycle count."""
    # Proton writes cycles / 1000 with three decimals; × 1000 in floating point can land a hair off the whole
    # number (1.011 × 1000 = 1010.9999999999999): the nearest integer is the exact cycle count.
    return round(duration)
