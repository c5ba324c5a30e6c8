"""A trace's timeline: `LaneTimeline` (one row per GPU stream or CPU thread) and `WarpTimeline` (an instrumentation
trace's warps, one launch at a time), both `TimelineView`s, which holds what they share."""

from proton_tui.tui.widgets.timeline.base import NAME_WIDTH, TimelineView
from proton_tui.tui.widgets.timeline.lanes import LaneTimeline
from proton_tui.tui.widgets.timeline.ranks import RanksTimeline
from proton_tui.tui.widgets.timeline.warps import WarpTimeline

__all__ = ["NAME_WIDTH", "LaneTimeline", "RanksTimeline", "TimelineView", "WarpTimeline"]
