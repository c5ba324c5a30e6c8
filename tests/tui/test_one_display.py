"""The viewer shows what every other view shows: the names as shown, every digit of every number, the tree's
structure at every depth, and an export of exactly the view on screen."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from textual.widgets import Input

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp
from tests.helpers import capture_path, kernel, scope, wait_for

SIZE = (140, 40)


def drawn(app) -> list[str]:
    """The table's lines as drawn on the screen."""
    table = app.screen.query_one("#table")
    return [table.render_line(y).text for y in range(table.scrollable_content_region.height)]


async def readable_names_ready(app) -> None:
    table = app.screen.query_one("#table")
    await wait_for(lambda: table.display_spec.names.readable is not None, what="readable names")


async def test_big_numbers_keep_every_digit(write_capture):
    path = write_capture([scope("ROOT", kernel("huge", 2**70, count=16_415_098)), {}])
    app = ProtonApp(load_profile(path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        text = "\n".join(drawn(app))
        assert "16,415,098" in text
        assert f"{2**70 / 1e9:,.2f} s" in text  # 1,180,591,620,717.41 s
        assert f"{2**70 / 16_415_098 / 1e9:,.2f} s" in text  # avg


async def test_a_leaf_sibling_is_drawn_at_its_own_depth(write_capture):
    """Siblings start at one column whether they have children or not; a leaf never lines up with the children of
    the row above it."""
    tree = scope("ROOT", scope("outer", kernel("inner_kernel", 500), kernel("inner_leaf", 100)), kernel("top", 50))
    app = ProtonApp(load_profile(write_capture([tree, {}])))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        start = {}
        for line in drawn(app):
            words = line.split()
            for name in ("outer", "inner_kernel", "inner_leaf", "top"):
                if name in words:  # where the row's own branch (or, without guide lines, its text) starts
                    glyphs = [line.index(g) for g in "├└▸▾" if g in line]
                    start[name] = min(glyphs) if glyphs else len(line) - len(line.lstrip())
        assert start["outer"] == start["top"]  # a scope with children and a leaf, both children of ROOT
        assert start["inner_kernel"] == start["inner_leaf"] > start["top"]


async def test_filter_matches_a_name_only_its_full_form_contains():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        await readable_names_ready(app)
        await pilot.press("f", *"at::native", "enter", "e", "d")  # the full names show what matched
        await pilot.pause()
        rows = [line for line in drawn(app)[1:] if line.strip()]
        assert len(rows) > 3 and any("at::native" in line for line in rows)
        assert "of the capture" in str(app.screen.query_one("#summary").render())  # filtered, not emptied


async def test_export_while_sorted_by_bandwidth_writes_the_view_on_screen(tmp_path):
    app = ProtonApp(load_profile(capture_path("vecadd_hook")))
    target = tmp_path / "view.json"
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await readable_names_ready(app)
        await pilot.press("K", "s", "s", "s")  # the kernel summary by launches, avg, then GB/s
        notes = [n.message for n in app._notifications]
        assert any("Sorted by GB/s" in message for message in notes), notes
        await pilot.press("x")
        await wait_for(lambda: app.screen.query("#path"), what="the export dialog")
        field = app.screen.query_one("#path")
        field.value = str(target)
        await pilot.press("enter")
        await wait_for(target.exists, what="export written")
        document = json.loads(target.read_text())
        assert document["sort"] == "gbps" and document["view"] == "kernels"
        assert document["rows"][0]["gbps"] is not None  # the kernel with bytes first, as on screen
        shown = [line.split("  ")[0].rstrip("…") for line in drawn(app)[1:] if line.strip()]
        assert len(shown) == len(document["rows"]) == 5
        assert all(row["short_name"].startswith(name) for row, name in zip(document["rows"], shown))


async def test_sort_by_name_follows_the_names_shown(tmp_path):
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=(200, 60)) as pilot:
        await readable_names_ready(app)
        await pilot.press("K", "s", "s", "s")  # launches, avg, then name (no GB/s: no kernel declared bytes)
        names = [line[: line.index("  ") if "  " in line else len(line)] for line in drawn(app)[1:] if line.strip()]
        assert names == sorted(names) and any(name.startswith("Kernel2<") for name in names)  # short names
        target = tmp_path / "kernels.csv"
        await pilot.press("x")
        await wait_for(lambda: app.screen.query("#path"), what="the export dialog")
        app.screen.query_one("#path").value = str(target)
        await pilot.press("enter")
        await wait_for(target.exists, what="export written")
        exported = [row["name"] for row in csv.DictReader(io.StringIO(target.read_text()))]
        assert exported == sorted(exported) and not any(name.startswith("_Z") for name in exported)


@pytest.mark.parametrize("form", ["short", "full", "raw"])
async def test_a_filter_by_any_form_of_a_name_keeps_the_same_kernel(form):
    profile = load_profile(capture_path("gpt2_shadow"))
    raw = next(name for name in profile.names if "pow_tensor_scalar" in name)
    app = ProtonApp(profile)
    async with app.run_test(size=SIZE) as pilot:
        await readable_names_ready(app)
        table = app.screen.query_one("#table")
        name = table.display_spec.names.in_form(raw, form)
        if form == "short":  # the name as the table shows it
            assert name == "vectorized_elementwise_kernel<…, pow_tensor_scalar_kernel_impl::{lambda#1}, …>"
        await pilot.press("f")
        field = app.screen.query_one("#include", Input)
        field.focus()
        field.value = re.escape(name)
        await pilot.press("enter", "K")
        await wait_for(lambda: [kernel.name for kernel in table.model.kernels] == [raw], what=f"the {form} name's kernel")
