"""Analysis in the viewer, driven through the pilot on real H200 captures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.dialogs.path import PathDialog
from proton_tui.tui.screens.diff import DiffScreen
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.widgets.profile_table import ProfileTable
from tests.helpers import FIXTURES, capture_path, wait_for

SIZE = (140, 44)
CUTLASS = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nt_align1EEvNT_6ParamsE"


def names_of(table: ProfileTable) -> list[str]:
    return [table.profile.names[node] for node in table.model.rows]


async def type_into(pilot, selector: str, text: str) -> None:
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = text
    await pilot.pause()


async def test_filter_bar_prunes_live_and_clears():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        total = table.profile.total
        await pilot.press("f")
        await type_into(pilot, "#include", "^forward$")
        await wait_for(lambda: "backward" not in table.profile.names)
        assert table.profile.total < total and "filtered:" in str(app.screen.query_one("#summary").render())
        await type_into(pilot, "#include", "")
        await type_into(pilot, "#exclude", "gemm|cutlass")
        await wait_for(lambda: all("gemm" not in n and "cutlass" not in n for n in table.profile.names))
        await type_into(pilot, "#exclude", "")
        await type_into(pilot, "#threshold", "9")
        await wait_for(lambda: table.display_spec.visible is not None)
        await pilot.press("escape", "e")
        shown_percents = [table.profile.percent(table.profile.inclusive[n]) for n in table.model.rows]
        assert min(shown_percents) >= 9 and len(table.model.rows) < table.profile.node_count
        await pilot.press("f")
        await type_into(pilot, "#include", "([")
        await wait_for(lambda: app.screen.query_one("#filter-error").display)
        assert "include '([' is not a valid regular expression" in str(app.screen.query_one("#filter-error").render())
        await pilot.press("escape", "F")
        await wait_for(lambda: table.display_spec.visible is None and table.profile.total == total)


async def test_search_jumps_between_matches_opening_ancestors():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        await pilot.press("slash")
        await type_into(pilot, "#search", "layer_norm")
        await pilot.press("enter")
        assert len(table.model.matches) == 3  # two in backward, one in forward
        first = table.current_node
        assert "layer_norm" in table.profile.names[first]
        assert table.profile.names[table.profile.parents[first]] in ("backward", "forward")
        await pilot.press("n")
        second = table.current_node
        assert second != first and second in table.model.matches
        await pilot.press("N")
        assert table.current_node == first


async def test_d_cycles_short_full_and_raw_names():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        await wait_for(lambda: table.display_spec.names.readable is not None)
        short, full = "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>", "void cutlass::Kernel2<cutlass_80_simt_sgemm_"
        assert table.display_spec.names.shown(CUTLASS) == short
        await pilot.press("K")
        row = next(i for i, k in enumerate(table.model.kernels) if k.name == CUTLASS)
        assert short in table.model.text(row, 200) and full not in table.model.text(row, 200)
        await pilot.press("d")
        assert full in table.model.text(row, 200)
        await pilot.press("d")
        assert CUTLASS[:60] in table.model.text(row, 200)
        await pilot.press("d")
        assert short in table.model.text(row, 200)


async def test_detail_pane_has_bandwidth_flops_and_raw_metrics():
    app = ProtonApp(load_profile(capture_path("vecadd_hook")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down")
        detail = str(app.screen.query_one("#detail").render())
        assert "add_kernel<n=268435456>" in detail
        assert "4,400.4 GB/s, 91.4% of the 4,814 GB/s peak in device_info" in detail
        assert "TFLOP/s (fp32)" in detail and "bytes=161061273600" in detail


async def test_export_key_writes_the_view_and_never_overwrites(tmp_path):
    app = ProtonApp(load_profile(capture_path("vecadd_auto")))
    target = tmp_path / "view.csv"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("K", "x")
        assert isinstance(app.screen, PathDialog)
        await type_into(pilot, "#path", str(target))
        await pilot.press("enter")
        assert isinstance(app.screen, ProfileScreen)
        assert target.read_text().splitlines()[1].startswith("add_kernel,46112")
        await pilot.press("x")
        await type_into(pilot, "#path", str(target))
        await pilot.press("enter")
        assert isinstance(app.screen, PathDialog)
        assert "already exists; not overwritten" in str(app.screen.query_one("#path-error").render())


async def test_compare_opens_a_diff_of_two_real_captures():
    app = ProtonApp(load_profile(capture_path("vecadd_auto")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await type_into(pilot, "#path", str(capture_path("vecadd_fail")))
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="the comparison")  # B is read on a thread
        rows = [app.screen.query_one(DataTable).get_row_at(i) for i in range(3)]
        assert str(rows[0][0]) == "(total)"  # the kernel first, the numbers after it
        assert str(rows[1][0]) == "add_kernel"  # the largest change: 46,112 ns -> 16,064 ns
        assert str(rows[1][3]).strip().startswith("-30.05")


async def test_multi_device_columns_totals_and_warning():
    app = ProtonApp(load_profile(capture_path("multigpu")))
    async with app.run_test(size=SIZE):
        table = app.screen.query_one(ProfileTable)
        assert "device" in table.model.header(140)
        summary = str(app.screen.query_one("#summary").render())
        assert "\n" not in summary and summary.endswith("3 notes in ROOT's details")  # one line
        details = dict(app.screen.detail_rows)  # the cursor starts on ROOT
        assert details["per device"] == "CUDA:0 478.30 µs (34.6%)  CUDA:1 904.38 µs (65.4%)"
        warnings = " ".join(text for label, text in app.screen.detail_rows if label == "warning")
        assert "merges same-named kernels" in warnings and "not CUDA:0" in warnings
        gpu0_kernel = next(r for r, n in enumerate(table.model.rows) if table.profile.devices[n] == "CUDA:0")
        assert table.model.text(gpu0_kernel, 140).rstrip().endswith("CUDA:0")


async def test_export_suggests_a_fresh_name_each_time_and_says_where_it_went(tmp_path, monkeypatch):
    """Accepting the suggested name twice writes two files (the second suggestion is a name not taken yet), and the
    toast names the whole path."""
    monkeypatch.chdir(tmp_path)
    app = ProtonApp(load_profile(capture_path("vecadd_auto")))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        for expected in ("vecadd_auto-kernels.csv", "vecadd_auto-kernels-2.csv"):
            await pilot.press("K", "x") if expected.endswith("s.csv") else await pilot.press("x")
            assert isinstance(app.screen, PathDialog)
            assert app.screen.query_one("#path").value == expected
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ProfileScreen) and (tmp_path / expected).is_file()
            assert any(str(tmp_path / expected) in note.message for note in app._notifications)


async def test_compare_offers_the_captures_beside_the_open_one_and_in_the_output_folder(tmp_path, monkeypatch):
    """`m` lists the other captures of the open one's folder and of the output folder's runs, newest first, as paths
    from the working folder (a long absolute path wrapped over lines hides which run it is); Enter on one compares
    with it."""
    monkeypatch.chdir(tmp_path)
    beside, run = tmp_path / "captures", tmp_path / "proton-runs" / "20261130-120000-vecadd"
    beside.mkdir()
    run.mkdir(parents=True)
    opened = beside / "a.hatchet"
    opened.write_bytes(capture_path("vecadd_auto").read_bytes())
    (beside / "notes.txt").write_text("not a capture")
    (run / "vecadd.hatchet").write_bytes(capture_path("vecadd_fail").read_bytes())
    os.utime(run / "vecadd.hatchet", (1, 1))  # the oldest
    (beside / "b.hatchet").write_bytes(capture_path("vecadd_fail").read_bytes())
    app = ProtonApp(load_profile(opened))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, PathDialog)
        assert app.screen.choices == [str(beside / "b.hatchet"), str(run / "vecadd.hatchet")]
        shown = [str(option.prompt) for option in app.screen.query_one("#choices", OptionList).options]
        assert shown == ["captures/b.hatchet", "proton-runs/20261130-120000-vecadd/vecadd.hatchet"]  # under the cwd
        await pilot.press("down", "enter")
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="the comparison")  # B is read on a thread


def _b_with_its_record(tmp_path, fixture: str, **fields) -> Path:
    """A run folder holding a fixture capture and the run.json of the run that wrote it (written as runs write it)."""
    import shutil

    from proton_tui.records import RunRecord, write_run_record

    folder = tmp_path / "20261201-040000-vecadd"
    folder.mkdir()
    capture = Path(shutil.copy(FIXTURES / fixture, folder / f"vecadd{Path(fixture).suffix}"))
    write_run_record(folder / "run.json", RunRecord(capture=str(capture), **fields))
    return capture


def _diff_side(profile) -> dict:
    facts = profile.cycle_facts
    return {"devices": profile.device_names(), "note": profile.device_note,
            "launches": facts.launches if facts else None, "ctas": facts.ctas if facts else None,
            "sampled": facts.sampled_warps if facts else None}


@pytest.mark.parametrize("a, b, fields", [
    ("vecadd_auto.hatchet", "vecadd_hook.hatchet",  # `run --device 1`: pinned, the capture calls its GPU 0
     {"device_requested": 1, "device_pinning": {"CUDA_VISIBLE_DEVICES": "1"}}),
    ("instr_vecadd_3.6.0.hatchet", "instr_vecadd_warps02_3.6.0.hatchet",  # instrumentation, warps 0 and 2
     {"params": "instrumentation"}),
])
async def test_compare_and_diff_read_b_s_run_record_alike(tmp_path, a, b, fields):
    """Compare in the viewer and `proton-tui diff A B --json` open B the same way, completed by the run.json beside
    it: the same numbers, and B's devices and launches as its run knew them."""
    import json

    from typer.testing import CliRunner

    from proton_tui.cli import app as cli
    from proton_tui.hatchet import open_capture
    from proton_tui.records import RecordedParams

    if fields.get("params") == "instrumentation":
        fields = {"params": RecordedParams(size=1 << 20, iters=20, block_size=1024, backend="instrumentation",
                                           warps=[0, 2])}
    capture_b = _b_with_its_record(tmp_path, b, **fields)
    expected_b = _diff_side(open_capture(capture_b))
    assert expected_b != _diff_side(load_profile(capture_b))  # the record says what the file does not
    result = CliRunner().invoke(cli, ["diff", str(FIXTURES / a), str(capture_b), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    app = ProtonApp(load_profile(FIXTURES / a))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await type_into(pilot, "#path", str(capture_b))
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="the comparison")
        diff = app.screen.diff
        assert _diff_side(diff.b) == expected_b
        from proton_tui.output.diff import diff_json

        assert diff_json(diff, names=app.screen.names)["kernels"] == document["kernels"]
        assert (diff.delta, diff.ratio) == (document["delta"], document["ratio"])


async def test_compare_of_two_scopes_of_the_open_capture_matches_diff_of_file_scopes():
    """On a scope's row, `m` offers that scope as A; `:SCOPE` as B compares it with another scope of the same capture,
    with the numbers of `proton-tui diff FILE:SCOPE FILE:SCOPE --json`; `FILE:SCOPE` as B reads B's file and gives
    the same; a scope that names no frame stays in the dialog as one line."""
    import json

    from typer.testing import CliRunner

    from proton_tui.cli import app as cli
    from proton_tui.hatchet import open_capture
    from proton_tui.output.diff import diff_json

    gpt2 = str(capture_path("gpt2_shadow"))
    result = CliRunner().invoke(cli, ["diff", f"{gpt2}:step/forward", f"{gpt2}:step/backward", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    app = ProtonApp(open_capture(gpt2))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        for b in (":nope", ":step/backward", f"{gpt2}:step/backward"):
            table.select_node(table.profile.names.index("forward"))
            await pilot.press("m")
            await pilot.pause()
            assert isinstance(app.screen, PathDialog)
            assert app.screen.query_one("#scope-a", Input).value == ":step/forward"
            await type_into(pilot, "#path", b)
            await pilot.press("enter")
            if b == ":nope":
                assert isinstance(app.screen, PathDialog)
                assert "no frame is named 'nope'" in str(app.screen.query_one("#path-error").render())
                await pilot.press("escape")
                continue
            await wait_for(lambda: isinstance(app.screen, DiffScreen), what="the comparison")
            diff = app.screen.diff
            assert diff_json(diff, names=app.screen.names) == document
            summary = str(app.screen.query_one("#summary").render())
            assert summary == f"A: {gpt2}, scope step/forward\nB: {gpt2}, scope step/backward"
            await pilot.press("escape")
            await wait_for(lambda: isinstance(app.screen, ProfileScreen), what="back to the viewer")


async def test_compare_offers_no_scope_as_a_on_a_kernel_row_and_compares_the_whole_capture():
    app = ProtonApp(load_profile(capture_path("gpt2_shadow")))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(ProfileTable)
        table.select_node(next(node for node in range(table.profile.node_count) if table.profile.is_kernel[node]))
        await pilot.press("m")
        await pilot.pause()
        assert app.screen.query_one("#scope-a", Input).value == ""
        await type_into(pilot, "#path", ":optimizer")
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, DiffScreen), what="the comparison")
        assert (app.screen.diff.a.scope, app.screen.diff.b.scope) == (None, "step/optimizer")
        assert app.screen.diff.b.total == 1967265 and app.screen.diff.a.total == 31097204
