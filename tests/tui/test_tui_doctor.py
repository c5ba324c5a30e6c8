"""The doctor screen driven through Textual's pilot: F6 on the form, the no-GPU path with the real interpreter check,
and cells that really fail (the H200's recorded probe answer stands for this machine's, so the cells run and fail
here) filling in live, each with its remedy and its log one key away."""

from __future__ import annotations

import os
import sys

import pytest
from textual.widgets import DataTable

from proton_tui.engine import probe
from proton_tui.engine.doctor import TABLE_COLUMNS, DoctorReport
from proton_tui.engine.probe import probe_interpreter
from proton_tui.records import read_doctor
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.screens.doctor import DoctorScreen
from proton_tui.tui.screens.form import FormScreen
from proton_tui.tui.screens.run import RunScreen
from tests.helpers import FIXTURES, doctor_folder, h200_probe, plant_probe, wait_for

SIZE = (120, 40)


def table_cells(screen: DoctorScreen) -> dict[str, dict[str, str]]:
    table = screen.query_one("#doctor-table", DataTable)
    return {key.value: {column: str(cell) for column, cell in zip(TABLE_COLUMNS, table.get_row(key))}
            for key in table.rows}


def rendered(screen: DoctorScreen, selector: str) -> str:
    return str(screen.query_one(selector).render())


def facts_text(screen: DoctorScreen) -> str:
    """The facts panel as plain text (it renders a grid)."""
    from rich.console import Console

    with open(os.devnull, "w") as sink:
        console = Console(width=120, record=True, file=sink)
        console.print(screen.query_one("#doctor-facts").content)
    return console.export_text()


async def on_the_form(app: ProtonApp) -> None:
    """The form has probed the interpreter (the doctor's probe then comes from the cache)."""
    await wait_for(lambda: isinstance(app.screen, FormScreen)
                   and (app.screen.info is not None or app.screen.probe_error is not None), what="detection")


@pytest.mark.slow
async def test_f6_runs_the_doctor_and_without_a_gpu_the_interpreter_check(tmp_path, monkeypatch):
    if probe_interpreter(sys.executable).gpu_count:
        pytest.skip("this machine has a GPU: the no-GPU path does not apply")
    monkeypatch.chdir(tmp_path)
    app = ProtonApp(output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_the_form(app)
        await pilot.press("f6")
        screen = app.screen
        assert isinstance(screen, DoctorScreen)
        await wait_for(lambda: not screen.running, what="the doctor's end")
        await pilot.pause()
        assert screen.problem is None, screen.problem
        assert rendered(screen, "#doctor-status").startswith("no GPU: profiling not checked")
        facts = facts_text(screen)
        assert "interpreter" in facts and "Triton" in facts and "GPU" in facts and "→" in facts  # the GPU remedy
        cells = table_cells(screen)
        assert list(cells) == ["cpu-check"] and cells["cpu-check"]["PROVED"] == "PASS"
        assert "doctor folder" in rendered(screen, "#doctor-result")
        assert "Cell's log" in [key[2] for key in screen.query_one("KeyBar").keys]
        await pilot.press("enter")  # the cell's run, as the run screen shows it
        assert isinstance(app.screen, RunScreen)
        assert "vecadd: PASS" in "\n".join(app.screen.query_one("#run-log").lines)
        await pilot.press("b")
        assert app.screen is screen
        await pilot.press("b")
        assert isinstance(app.screen, FormScreen)


def h200_answer_for_this_interpreter(version: str) -> probe.InterpreterInfo:
    """The 2×H200 box's recorded probe answer, as if this machine's interpreter had given it."""
    return h200_probe(python=sys.executable, executable=sys.executable, triton_version=version)


@pytest.mark.slow
async def test_failing_cells_fill_in_live_with_their_remedy_and_log(tmp_path, monkeypatch):
    if probe_interpreter(sys.executable).gpu_count:
        pytest.skip("this machine has a GPU: the cells would pass")
    plant_probe(monkeypatch, sys.executable, h200_answer_for_this_interpreter("3.7.1"))
    monkeypatch.chdir(tmp_path)
    app = ProtonApp(python=sys.executable, output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        screen = DoctorScreen(sys.executable, tmp_path / "runs", backend="cupti", context="shadow", mode="cli",
                              jobs=2)
        await app.push_screen(screen)
        await wait_for(lambda: screen.plan is not None, what="the plan")
        await pilot.pause()
        planned = table_cells(screen)
        assert list(planned) == ["cupti/shadow/hatchet/cli", "cupti/shadow/chrome_trace/cli",
                                 "cupti/shadow/hatchet_msgpack/cli"]  # the cells that run first
        assert planned["cupti/shadow/hatchet_msgpack/cli"]["EXPECTED"] == "refused"
        assert planned["cupti/shadow/hatchet/cli"]["EXPECTED"] == "time (ns)"
        await wait_for(lambda: not screen.running, what="the doctor's end")
        await pilot.pause()
        cells = table_cells(screen)
        for key in ("cupti/shadow/hatchet/cli", "cupti/shadow/chrome_trace/cli"):
            assert cells[key]["PROVED"] not in ("", "queued") and not cells[key]["PROVED"].startswith("PASS")
        assert rendered(screen, "#doctor-status").startswith("FAIL: 2 of 2 cells failed")
        assert "highlight one for its remedy, Enter for its log" in rendered(screen, "#doctor-result")
        detail = rendered(screen, "#doctor-detail")
        assert detail.startswith("cupti/shadow/hatchet/cli") and "→" in detail and "Enter: its log" in detail
        failed = screen.results["cupti/shadow/hatchet/cli"]
        await pilot.press("enter")
        assert isinstance(app.screen, RunScreen) and app.screen.result is failed.run
        await pilot.press("b")
        await pilot.press("down", "down")  # the refused cell: its reason, nothing to open
        detail = rendered(screen, "#doctor-detail")
        assert "refused by the rules, not run" in detail and "Mode env" in detail and "--" not in detail
        assert "Cell's log" not in [key[2] for key in screen.query_one("KeyBar").keys if key[3]]
        report = DoctorReport.from_record(read_doctor(next((tmp_path / "runs").glob("*-doctor/doctor.json"))))
        proved = {result.cell.key: result.proved for result in report.results}
        assert proved["cupti/shadow/hatchet_msgpack/cli"] == "not run" and report.exit_code == 1


async def test_f6_examines_the_interpreter_the_form_shows(tmp_path, monkeypatch):
    """The form was pointed at another interpreter: F6 runs the doctor on that one, not on the app's."""
    other = tmp_path / "python3"
    other.symlink_to(sys.executable)
    plant_probe(monkeypatch, str(other), probe_interpreter(sys.executable))
    monkeypatch.chdir(tmp_path)
    app = ProtonApp(python=sys.executable, output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_the_form(app)
        form = app.screen
        form.query_one("#python").value = str(other)
        form.query_one("#python").focus()
        await pilot.press("enter")
        await wait_for(lambda: form.python == str(other) and form.info is not None, what="the new interpreter")
        await pilot.press("f6")
        assert isinstance(app.screen, DoctorScreen) and app.screen.python == str(other)
        app.screen.stop.set()


@pytest.mark.slow
async def test_new_capture_from_the_palette_keeps_a_running_doctor(tmp_path, monkeypatch):
    """Cells under way: the command palette's New capture is refused with a notice instead of dropping the doctor
    (its runs would end with no report)."""
    if probe_interpreter(sys.executable).gpu_count:
        pytest.skip("this machine has a GPU: the cells would pass")
    plant_probe(monkeypatch, sys.executable, h200_answer_for_this_interpreter("3.6.0"))
    monkeypatch.chdir(tmp_path)
    app = ProtonApp(python=sys.executable, output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_the_form(app)
        screen = DoctorScreen(sys.executable, tmp_path / "runs", backend="cupti", context="shadow", jobs=2)
        await app.push_screen(screen)
        await wait_for(lambda: screen.plan is not None and screen.running, what="cells under way")
        app.action_new_capture()
        await pilot.pause()
        assert app.screen is screen and screen.running
        assert "cancel it there (Escape or x)" in str(list(app._notifications)[-1].message)
        await wait_for(lambda: not screen.running, what="the doctor's end")
        assert list((tmp_path / "runs").glob("*-doctor/doctor.json"))
        app.action_new_capture()
        await pilot.pause()
        assert isinstance(app.screen, FormScreen)


async def test_a_failed_fact_without_a_remedy_shows_no_arrow():
    from proton_tui.engine.doctor import Fact

    report = DoctorReport.from_record(read_doctor(FIXTURES / "doctor" / "no_gpu.json"))
    report.facts.append(Fact("CUPTI", "fail", "not looked for: Triton's folder was not found", None))
    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=SIZE) as pilot:
        await app.push_screen(DoctorScreen(sys.executable, finished=report))
        await pilot.pause()
        result = rendered(app.screen, "#doctor-result")
        assert "CUPTI: not looked for: Triton's folder was not found" in result and "None" not in result


async def test_a_doctor_read_back_from_disk_opens_its_cells_log(tmp_path):
    """A finished doctor read from its folder (doctor.json beside its cells' run folders): Enter on a cell opens that
    cell's run with its log."""
    path = doctor_folder(tmp_path)
    report = DoctorReport.from_record(read_doctor(path))
    app = ProtonApp(python=sys.executable)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.push_screen(DoctorScreen(sys.executable, finished=report))
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert app.screen.result.run_dir == path.parent / "20261201-030717-cpu-check"
        await wait_for(lambda: "vecadd: size=4096 iters=2" in "\n".join(
            str(line) for line in app.screen.query_one("#run-log").lines), what="the cell's log")
