"""The box-check screen driven through Textual's pilot: the real payload through the Triton interpreter on two
jobs, cancel (and quit) leaving no process behind, and the no-GPU message with its CPU offer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Log

from proton_tui.engine.check import CHECK_JSON
from proton_tui.engine.probe import probe_interpreter
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.screens.check import CheckScreen
from proton_tui.tui.screens.form import FormScreen
from tests.helpers import payload_processes, wait_for

SIZE = (120, 40)


def table_cells(screen: CheckScreen) -> dict[str, dict[str, str]]:
    """The DataTable as {row key: {column: plain text}}."""
    table = screen.query_one("#check-table", DataTable)
    columns = [column.value for column in table.columns]
    return {row_key.value: {column: str(cell) for column, cell in zip(columns, table.get_row(row_key))}
            for row_key in table.rows}


def log_text(screen: CheckScreen) -> str:
    return "\n".join(screen.query_one("#check-log", Log).lines)


def finished(screen: CheckScreen) -> bool:
    return not screen.running


async def start_check(app: ProtonApp, screen: CheckScreen) -> CheckScreen:
    """Push ``screen`` once the launch form has probed the interpreter, as a user would: the check's own probe
    then comes from the cache instead of importing torch a second time alongside the first."""
    await wait_for(lambda: isinstance(app.screen, FormScreen)
                   and (app.screen.info is not None or app.screen.probe_error is not None), what="detection")
    app.push_screen(screen)
    return screen


@pytest.mark.slow
async def test_cpu_check_on_two_jobs_passes_row_by_row(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_check(app, CheckScreen(cpu=True, output=tmp_path / "runs", size=4096, iters=2, jobs=2))
        await wait_for(lambda: finished(screen), what="the check's end")
        await pilot.pause()
        assert screen.problem is None, screen.problem
        cells = table_cells(screen)
        assert list(cells) == ["cpu0", "cpu1"]
        for label, row in cells.items():
            assert row["RESULT"] == "PASS", (label, row, log_text(screen))
            assert row["MAX_ABS_ERR"] == "0.000e+00" and "GB/S" not in row and row["FLAG"] == ""
        status = str(screen.query_one("#check-status").render())
        assert status.startswith("PASS") and "all 2 runs passed" in status
        assert "check: PASS: 2 of 2 runs passed, none flagged" in str(screen.query_one("#check-result").render())
        text = log_text(screen)
        assert "[cpu0] vecadd: PASS" in text and "[cpu1] vecadd: PASS" in text
        assert "[cpu1] vecadd: size=4096 iters=2 block_size=1024" in text
        check_dir = Path(screen.report.check_dir)
        assert check_dir.parent == (tmp_path / "runs").resolve() and (check_dir / CHECK_JSON).is_file()
        assert len([run for run in check_dir.iterdir() if (run / "run.json").is_file()]) == 2
        await pilot.press("b")
        assert isinstance(app.screen, FormScreen)


@pytest.mark.slow
async def test_cancel_and_quit_end_every_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = "4194287"  # a size no other test uses, to find this check's processes
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_check(app, CheckScreen(cpu=True, output=tmp_path, size=marker, iters=100000, jobs=2))
        await wait_for(lambda: len(payload_processes(marker)) == 2, what="two payload processes")
        await wait_for(lambda: log_text(screen).count(f"vecadd: size={marker}") == 2, what="both runs' size line")
        assert screen.running and "running" in str(screen.query_one("#check-status").render())
        await pilot.press("x")
        await wait_for(lambda: finished(screen), 30, what="the cancelled check's end")
        await pilot.pause()
        assert payload_processes(marker) == []
        assert [row["RESULT"] for row in table_cells(screen).values()] == ["cancelled", "cancelled"]
        assert str(screen.query_one("#check-status").render()).startswith("CANCELLED  ·  0 of 2 passed")
        result = str(screen.query_one("#check-result").render())
        assert "check: CANCELLED: 2 of 2 runs ended by the cancel" in result and "FAIL" not in result
        report = json.loads(next(tmp_path.glob("*-check/check.json")).read_text())
        assert (report["failed"], report["cancelled"], report["exit_code"]) == (0, 2, 1)
        await pilot.press("escape")  # finished: escape goes back
        assert not isinstance(app.screen, CheckScreen)
        # Quitting during a check ends its runs too.
        app.push_screen(CheckScreen(cpu=True, output=tmp_path, size=marker, iters=100000, jobs=2))
        await wait_for(lambda: len(payload_processes(marker)) == 2, what="two payload processes")
    await wait_for(lambda: payload_processes(marker) == [], 30, what="no payload process after quit")


@pytest.mark.slow
async def test_no_gpu_says_so_and_offers_the_cpu_check(tmp_path, monkeypatch):
    if probe_interpreter(sys.executable).gpu_count:
        pytest.skip("this machine has a GPU: the no-GPU message does not apply")
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_check(app, CheckScreen(cpu=False, output=tmp_path))
        await wait_for(lambda: finished(screen), what="the no-GPU answer")
        await pilot.pause()
        assert screen.report is None and screen.no_gpu
        status = str(screen.query_one("#check-status").render())
        assert status.startswith("not run") and "no GPU" in status
        result = str(screen.query_one("#check-result").render())
        assert "sees no GPU" in result and "press c to run the interpreter check on the CPU" in result
        assert table_cells(screen) == {} and not list(tmp_path.iterdir())  # nothing ran, no folder made
        await pilot.press("c")
        cpu_screen = app.screen
        assert isinstance(cpu_screen, CheckScreen) and cpu_screen.cpu and cpu_screen is not screen
        await wait_for(lambda: finished(cpu_screen), what="the CPU check's end")
        await pilot.pause()
        assert [row["RESULT"] for row in table_cells(cpu_screen).values()] == ["PASS"]


async def test_a_finished_check_offers_back_not_cancel(monkeypatch):
    """Read back from its folder, a check has nothing to cancel: its key bar says Back, and Escape goes back."""
    from proton_tui.engine.history import stored_runs
    from tests.helpers import FIXTURES

    monkeypatch.chdir(FIXTURES)
    report = next(entry for entry in stored_runs(Path("runs")) if entry.kind == "check").check_report()
    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.push_screen(CheckScreen(finished=report))
        await pilot.pause()
        bar = [key[2] for key in app.screen.query_one("KeyBar").keys]
        assert "Back" in bar and "Cancel check" not in bar
        await pilot.press("escape")
        assert not isinstance(app.screen, CheckScreen)


def detail_text(screen: CheckScreen) -> str:
    return str(screen.query_one("#check-detail-text").render())


async def test_a_gpu_check_shows_each_gpus_likely_cause_and_readings():
    """A 2-GPU check read back from its folder: the slow GPU's row is selected, its likely cause and its NVML
    readings are in the detail pane; moving to the other GPU shows its readings instead."""
    from proton_tui.engine.history import stored_runs
    from tests.helpers import FIXTURES

    (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.push_screen(CheckScreen(finished=report))
        await pilot.pause()
        screen = app.screen
        cells = table_cells(screen)
        assert cells["1"]["FLAG"] == "SLOW" and cells["0"]["FLAG"] == ""
        pane = screen.query_one("#check-detail")
        assert pane.display and pane.border_title == "GPU 1: what the GPU said around its run"
        text = detail_text(screen)
        assert text.startswith("likely cause: other process on the GPU: pid 4242 (python3)\ndevice     NVIDIA H200")
        assert "processes  pid 4242 (python3) 3,081 MiB" in text and "busy       100% before the run" in text
        await pilot.press("up")
        assert screen.query_one("#check-detail").border_title.startswith("GPU 0:")
        assert "likely cause" not in detail_text(screen) and "processes  none besides the run" in detail_text(screen)


async def test_a_cpu_check_has_no_readings_pane():
    from proton_tui.engine.history import stored_runs
    from tests.helpers import FIXTURES

    (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "runs") if entry.kind == "check"]
    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.push_screen(CheckScreen(finished=report))
        await pilot.pause()
        assert not app.screen.query_one("#check-detail").display
        assert set(table_cells(app.screen)["cpu0"]) == {"GPU", "NAME", "RESULT", "MAX_ABS_ERR", "KERNEL_US", "FLAG"}


async def test_names_and_nvml_text_in_the_check_screen_are_data():
    """A stored check whose GPU name, driver string and causes carry control sequences: none reaches the screen."""
    from proton_tui.engine.history import stored_runs
    from tests.helpers import FIXTURES

    (report,) = [entry.check_report() for entry in stored_runs(FIXTURES / "gpu_checks") if entry.kind == "check"]
    report.rows[1].name = "NVIDIA H200\x1b]0;owned\x07"
    report.rows[1].readings["driver_version"] = "580\x1b[2J"
    report.rows[1].causes = ["other process on the GPU: pid 4242 (\x1b[31mpython3)"]
    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.push_screen(CheckScreen(finished=report))
        await pilot.pause()
        screen = app.screen
        shown = detail_text(screen) + "".join(str(cell) for row in table_cells(screen).values() for cell in row.values())
        assert "\x1b" not in shown and "\x07" not in shown
        assert "NVIDIA H200" in table_cells(screen)["1"]["NAME"]
