"""A trace's timeline: `LaneTimeline` (one row per GPU stream or CPU thread) and `WarpTimeline` (an instrumentation
trace's warps, one launch at a time), both `TimelineView`s, which holds what they share."""

from .base import NAME_WIDTH, TimelineView
from .lanes import LaneTimeline
from .warps import WarpTimeline

__all__ = ["NAME_WIDTH", "LaneTimeline", "TimelineView", "WarpTimeline"]
