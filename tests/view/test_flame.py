"""The flame view's geometry on real captures, without a terminal: frames inside their parent, as wide as their
share, none dropped (those under a cell merged into a "…" frame), zoom, and the moves between frames."""

from __future__ import annotations

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.view.display import Display
from proton_tui.view.flame import KERNEL, PYTHON, SCOPE, FlameLayout, kind
from tests.helpers import capture_path


def gpt2() -> Display:
    return Display(load_profile(capture_path("gpt2_shadow")))


@pytest.mark.parametrize("width", [20, 80, 100, 157])
def test_every_frame_sits_in_its_parent_as_wide_as_its_share_and_none_is_dropped(width):
    display = gpt2()
    profile, layout = display.profile, FlameLayout(display, 0, width)
    assert [(f.node, f.x, f.width) for f in layout.rows[0]] == [(0, 0, width)]
    for upper, row in zip(layout.rows, layout.rows[1:]):
        for parent in upper:
            if parent.node is None:
                continue
            kids = [frame for frame in row if parent.x <= frame.x < parent.end]
            assert all(frame.end <= parent.end for frame in kids)
            assert all(a.end <= b.x for a, b in zip(kids, kids[1:]))  # left to right, never overlapping
            shown = [frame.node for frame in kids if frame.node is not None]
            merged = [node for frame in kids for node in frame.merged]
            assert sorted(shown + merged) == sorted(display.children(parent.node))  # nothing dropped
            assert shown == [kid for kid in display.children(parent.node) if kid in shown]  # the display's order
            scale = parent.width / profile.inclusive[parent.node]
            for frame in kids:
                if frame.node is not None:
                    assert frame.width >= 1 and abs(frame.width - profile.inclusive[frame.node] * scale) <= 1.5
                else:
                    assert frame.width >= 1 and all(profile.inclusive[n] * scale < 1.5 for n in frame.merged)


def test_frames_under_a_cell_are_merged_into_one_visible_frame():
    display = gpt2()
    layout = FlameLayout(display, 0, 100)
    merged = [frame for row in layout.rows for frame in row if frame.node is None]
    assert merged and all(frame.width >= 1 and len(frame.merged) >= 1 for frame in merged)
    hidden = merged[0].merged[0]
    assert layout.frame_of(hidden) is None and layout.nearest(hidden) == merged[0]


def test_zoom_puts_a_frame_on_top_at_full_width():
    display = gpt2()
    backward = next(node for node in range(display.profile.node_count) if display.profile.names[node] == "backward")
    layout = FlameLayout(display, backward, 100)
    assert [(f.node, f.x, f.width) for f in layout.rows[0]] == [(backward, 0, 100)]
    assert {frame.node for frame in layout.rows[1] if frame.node is not None} <= set(display.children(backward))
    forward = next(node for node in range(display.profile.node_count) if display.profile.names[node] == "forward")
    assert layout.frame_of(forward) is None and layout.nearest(forward) == layout.rows[0][0]  # outside the zoom


def test_moves_between_frames():
    display = gpt2()
    layout = FlameLayout(display, 0, 100)
    root = layout.rows[0][0]
    step = layout.first_child(root)
    backward = layout.first_child(step)
    assert display.name(step.node) == "step" and display.name(backward.node) == "backward"
    forward = layout.beside(backward, 1)
    assert display.name(forward.node) == "forward" and layout.beside(backward, -1) is None
    assert layout.parent_of(forward) == step and layout.parent_of(root) is None
    assert layout.at(forward.x, 2) == forward and layout.at(10_000, 2) is None


def test_kinds_colour_kernels_scopes_and_python_frames():
    display = gpt2()
    assert kind(display, 1) == SCOPE and KERNEL in {kind(display, n) for n in range(display.profile.node_count)}
    python = Display(load_profile(capture_path("python_scopes")))
    assert PYTHON in {kind(python, n) for n in range(python.profile.node_count)}
