"""The flame view's geometry, without Textual: an icicle of a Display's tree (ROOT, or the frame zoomed into, on
top; each frame's children below it, as wide as their share of its inclusive value, in the display's order), laid
out in whole terminal cells. Frames narrower than one cell are never dropped: the siblings that are merge into one
"…" frame. The widget (`tui/widgets/flame_view.py`) only draws and navigates what this computes."""

from __future__ import annotations

from dataclasses import dataclass, field

from proton_tui.view.display import Display
from proton_tui.view.formatting import counted, format_percent, format_value
from proton_tui.view.names import PYTHON_FRAME

KERNEL, REGION, SCOPE, PYTHON, MERGED = "kernel", "region", "scope", "python frame", "merged"


@dataclass(frozen=True)
class Frame:
    """One frame of the icicle: the node it shows (None for a "…" frame, which stands for `merged`), its row (0 at
    the top) and the cells it covers, [x, x + width)."""

    node: int | None
    row: int
    x: int
    width: int
    merged: tuple[int, ...] = field(default=())

    @property
    def end(self) -> int:
        return self.x + self.width


class FlameLayout:
    """The icicle of `display` below `top`, `width` cells wide: `rows[r]` lists row r's frames left to right."""

    def __init__(self, display: Display, top: int = 0, width: int = 80) -> None:
        self.display, self.top, self.width = display, top, max(1, width)
        self.rows: list[list[Frame]] = []
        self._where: dict[int, Frame] = {}
        self._lay_out()

    def _lay_out(self) -> None:
        display, inclusive = self.display, self.display.profile.inclusive
        level = [Frame(self.top, 0, 0, self.width)]
        while level:
            self.rows.append(level)
            below: list[Frame] = []
            for frame in level:
                if frame.node is not None:
                    below += self._children(frame, display.children(frame.node), inclusive)
            level = below
        for row in self.rows:
            for frame in row:
                if frame.node is not None:
                    self._where[frame.node] = frame

    def _children(self, parent: Frame, kids: list[int], inclusive: list[float]) -> list[Frame]:
        """The frames of a frame's shown children: a share of its cells each, by the cumulative value so the
        rounding never adds up past the parent; those under one cell merged into one "…" frame at the end."""
        value = inclusive[parent.node]
        if not kids or value <= 0:
            return []
        scale, row = parent.width / value, parent.row + 1
        frames, small, done = [], [], 0.0
        for kid in kids:
            start = parent.x + round(done * scale)
            done += inclusive[kid]
            end = min(parent.end, parent.x + round(done * scale))
            if end - start >= 1:
                frames.append(Frame(kid, row, start, end - start))
            else:
                small.append(kid)
                done -= inclusive[kid]  # the merged frame takes its share at the end, not here
        if small:
            used = frames[-1].end if frames else parent.x
            share = max(1, round(sum(inclusive[kid] for kid in small) * scale))
            if used >= parent.end and frames and frames[-1].width > 1:  # no cell left: the last frame lends one
                last = frames.pop()
                frames.append(Frame(last.node, row, last.x, last.width - 1))
                used -= 1
            if used < parent.end:
                frames.append(Frame(None, row, used, min(share, parent.end - used), tuple(small)))
        return frames

    # ---- lookup and moves ---------------------------------------------------------------------------------------
    def frame_of(self, node: int) -> Frame | None:
        """The frame showing `node`, None when it is merged, below a merged frame or outside the zoom."""
        return self._where.get(node)

    def nearest(self, node: int) -> Frame:
        """The frame showing `node`, else the "…" frame it was merged into, else its closest shown ancestor's."""
        profile = self.display.profile
        chain = [node, *profile.ancestors(node)]
        for step, ancestor in enumerate(chain):
            frame = self._where.get(ancestor)
            if frame is not None:
                if step == 0:
                    return frame
                below = chain[step - 1]
                for merged in self.rows[frame.row + 1] if frame.row + 1 < len(self.rows) else []:
                    if below in merged.merged:
                        return merged
                return frame
        return self.rows[0][0]

    def parent_of(self, frame: Frame) -> Frame | None:
        if frame.row == 0:
            return None
        return next(up for up in self.rows[frame.row - 1] if up.x <= frame.x < up.end and up.node is not None)

    def first_child(self, frame: Frame) -> Frame | None:
        if frame.node is None or frame.row + 1 >= len(self.rows):
            return None
        return next((down for down in self.rows[frame.row + 1] if frame.x <= down.x < frame.end), None)

    def beside(self, frame: Frame, step: int) -> Frame | None:
        """The frame to the left (step -1) or right (+1) on the same row, across parents."""
        row = self.rows[frame.row]
        index = row.index(frame) + step
        return row[index] if 0 <= index < len(row) else None

    def at(self, x: int, row: int) -> Frame | None:
        """The frame covering cell x of a row (a click)."""
        if not 0 <= row < len(self.rows):
            return None
        return next((frame for frame in self.rows[row] if frame.x <= x < frame.end), None)


def kind(display: Display, node: int) -> str:
    """What a frame is, for its colour: a kernel, an instrumented region inside one, a python frame or a scope."""
    profile = display.profile
    if profile.is_kernel[node]:
        return KERNEL
    if profile.has_own[node]:
        return REGION
    return PYTHON if PYTHON_FRAME.fullmatch(profile.names[node]) else SCOPE


def merged_text(display: Display, frame: Frame) -> str:
    """What a "…" frame stands for, in words."""
    profile = display.profile
    total = sum(profile.inclusive[node] for node in frame.merged)
    return (f"{counted(len(frame.merged), 'frame')} narrower than a cell, merged: "
            f"{format_value(total, profile.unit)} ({format_percent(profile.percent(total))} of the capture)")
