"""The run, runs, box-check, doctor and compare screens at 80x24: nothing that matters is cut."""

from __future__ import annotations

from pathlib import Path

from proton_tui.engine.history import stored_runs
from proton_tui.engine.rules import tui_words
from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp
from tests.helpers import FIXTURES, H200_PYTHON, capture_path
from tests.tui.screen_text import screen_lines, shown_in, shown_lines, words

SIZE = (80, 24)


async def shown(pilot, screen):
    await pilot.app.push_screen(screen)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return pilot.app.screen


async def test_the_run_status_line_wraps_instead_of_leaving_parts_out(monkeypatch):
    from proton_tui.tui.screens.run import RunScreen

    monkeypatch.chdir(FIXTURES)
    run = next(entry for entry in stored_runs(Path("runs")) if entry.kind == "run").run_result()
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, RunScreen(finished=run))
        status = words(shown_in(pilot.app, screen.query_one("#run-status")))
        assert status == ("PASS · 2.4 s · device cpu (Triton interpreter, TRITON_INTERPRET=1) · "
                          "max_abs_err=0.000e+00"), status
        assert "…" not in status


async def test_the_runs_list_shows_a_line_per_run_in_aligned_columns(monkeypatch):
    from proton_tui.tui.screens.runs import RunsScreen

    monkeypatch.chdir(FIXTURES)
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, RunsScreen([], Path("runs")))
        table = screen.query_one("#runs")
        top = table.region.y + 2  # under its border and its header
        lines = [line[table.region.x:table.region.right] for line in screen_lines(pilot.app)[top:top + 3]]
        assert "2026-12-01 01:15:02" in lines[0] and "2026-12-01 00:47:13" in lines[1]  # one line each
        assert "interpreter check" in lines[0] and "1 of 1 run passed, 0 flagged" in lines[0]
        assert "PASS" in lines[1] and "size=4096 iters=2 unprofiled" in lines[1]
        assert "runs/" not in lines[2] and not lines[2].strip("│ ")
        assert lines[0].index("interpreter check") == lines[1].index("PASS")  # aligned
        assert lines[0].index("1 of 1") == lines[1].index("size=4096")
        assert words(shown_in(pilot.app, screen.query_one("#runs-folder"))) == "folder: runs/20261201-011502-check"
        await pilot.press("down")
        assert words(shown_in(pilot.app, screen.query_one("#runs-folder"))) == "folder: runs/20261201-004713-vecadd"


async def test_the_box_check_table_fits_80_columns_its_cause_and_capture_in_the_detail_pane():
    from proton_tui.tui.screens.check import CheckScreen

    (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, CheckScreen(finished=report))
        table = screen.query_one("#check-table")
        header = screen_lines(pilot.app)[table.region.y + 1]
        assert words(header) == "│ GPU NAME RESULT MAX_ABS_ERR KERNEL_US GB/S %PEAK FLAG │", header
        assert table.virtual_size.width <= table.scrollable_content_region.width  # every column whole
        detail = words(shown_in(pilot.app, screen.query_one("#check-detail")))
        assert "likely cause: other process on the GPU: pid 4242 (python3)" in detail
        assert report.rows[1].capture and "capture:" in screen.detail_text("1")[1]


def doctor_report(name: str):
    from proton_tui.engine.doctor import DoctorReport
    from proton_tui.records import read_doctor

    return DoctorReport.from_record(read_doctor(FIXTURES / "doctor" / f"{name}.json"))


async def test_every_doctor_fact_and_remedy_is_reachable_by_keyboard():
    """The facts pane takes the focus one Tab back from the table, and its keys scroll it to its last fact; no
    value or remedy is cut."""
    from proton_tui.tui.screens.doctor import DoctorScreen

    report = doctor_report("no_gpu")
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, DoctorScreen(finished=report))
        assert screen.focused is screen.query_one("#doctor-table")
        await pilot.press("shift+tab")
        pane = screen.query_one("#doctor-facts-pane")
        assert screen.focused is pane
        facts = screen.query_one("#doctor-facts")
        seen: dict[int, str] = {}
        for _ in range(facts.virtual_size.height + 2):
            for row, line in enumerate(shown_lines(pilot.app, facts, pane)):
                seen[pane.scroll_y + row] = line
            await pilot.press("down")
        text = "".join("".join(seen[row].split()) for row in sorted(seen))  # a path folds anywhere: no spaces
        for fact in report.facts:
            assert "".join(fact.value.split()) in text, fact.value
            if fact.remedy:
                assert "".join(("→ " + fact.remedy).split()) in text, fact.remedy


async def test_a_failed_doctor_cells_remedy_wraps_whole():
    from proton_tui.tui.screens.doctor import DoctorScreen

    report = doctor_report("no_driver")
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, DoctorScreen(finished=report))
        result = screen.highlighted()
        assert result.remedy
        detail = words(shown_in(pilot.app, screen.query_one("#doctor-detail")))
        assert words("→ " + tui_words(result.remedy)) in detail, detail


async def test_the_box_check_status_line_wraps_instead_of_leaving_the_median_out():
    from proton_tui.tui.screens.check import CheckScreen

    (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, CheckScreen(finished=report))
        status = words(shown_in(pilot.app, screen.query_one("#check-status")))
        assert status == ("FAIL · 0 of 2 failed, 1 flagged · median 3300.4 GB/s, flagged below 2970.4 GB/s "
                          "(0.90 x median)"), status


async def compared(pilot, a: str, b: str):
    from proton_tui.output.diff import diff_profiles
    from proton_tui.tui.screens.diff import DiffScreen
    from proton_tui.view.names import Names

    return await shown(pilot, DiffScreen(diff_profiles(load_profile(capture_path(a)), load_profile(capture_path(b))),
                                         Names()))


async def test_the_compare_screen_counts_new_gone_and_shared_kernels_as_diff_prints():
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await compared(pilot, "vecadd_auto", "vecadd_hook")
        assert words(shown_in(pilot.app, screen.query_one("#diff-counts"))) == "1 new, 1 gone, 4 in both"


async def test_the_compare_screen_says_when_b_records_no_kernel():
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await compared(pilot, "vecadd_auto", "vecadd_instr")  # B: a capture of ROOT alone
        counts = words(shown_in(pilot.app, screen.query_one("#diff-counts")))
        assert counts == "0 new, 5 gone, 0 in both; B records no kernel: every kernel of A is gone", counts


async def test_a_long_kernel_name_on_the_compare_screen_is_shown_whole_over_its_lines():
    from proton_tui.output.diff import diff_profiles
    from proton_tui.tui.screens.diff import DiffScreen
    from proton_tui.view.names import Names

    diff = diff_profiles(load_profile(capture_path("vecadd_auto")), load_profile(capture_path("vecadd_hook")))
    names = Names.demangled({kernel.name for kernel in diff.kernels})
    async with ProtonApp(python=H200_PYTHON).run_test(size=SIZE) as pilot:
        screen = await shown(pilot, DiffScreen(diff, names))
        table = screen.query_one("#diff")
        width = table.columns[next(iter(table.columns))].width
        column = [line[table.region.x:table.region.x + width] for line in screen_lines(pilot.app)]
        text = "".join(line.rstrip() if line.strip() else "" for line in column)
        for kernel in diff.kernels:
            name = names.shown(kernel.name)
            assert "".join(name.split()) in "".join(text.split()), name
