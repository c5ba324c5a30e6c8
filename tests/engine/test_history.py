"""The output folder's runs and checks read back: what F4 lists, made by real runs of the payload."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from proton_tui.cli import app
from proton_tui.engine.history import stored_runs
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.screens.check import CheckScreen
from proton_tui.tui.screens.run import RunScreen
from proton_tui.tui.screens.runs import THIS_PROCESS, RunsScreen
from tests.helpers import wait_for

TINY = ["--size", "2048", "--iters", "2", "--device", "cpu", "--no-profile"]


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    """An output folder with an unprofiled run, an interpreter check, and a run whose run.json is damaged."""
    folder = tmp_path_factory.mktemp("runs")
    assert CliRunner().invoke(app, ["run", *TINY, "--output", str(folder)]).exit_code == 0
    time.sleep(1.1)  # folders are named by the second they start
    assert CliRunner().invoke(app, ["check", "--cpu", "--size", "2048", "--iters", "2", "--jobs", "1",
                                    "--output", str(folder)]).exit_code == 0
    damaged = folder / "20200101-000000-vecadd"
    damaged.mkdir()
    (damaged / "run.json").write_text('{"verdict": "PA')
    return folder


@pytest.mark.slow
def test_every_run_and_check_is_listed_newest_first(output):
    entries = stored_runs(output)
    assert [entry.kind for entry in entries] == ["check", "run", "run"]
    check, run, damaged = entries
    assert "interpreter check: 1 of 1 run passed" in check.label()
    assert " PASS " in run.label() and "unprofiled" in run.label() and "None" not in run.label()
    assert damaged.record is None and "run.json unreadable" in damaged.label()
    result = run.run_result()
    assert result.verdict.passed and result.command.argv == tuple(run.record.argv)
    assert result.signals.max_abs_err == 0.0 and result.signals.result == "PASS"  # as its record kept them
    assert check.run_result() is None and damaged.run_result() is None
    report = check.check_report()
    assert report.cpu and [row.passed for row in report.rows] == [True] and report.check_dir == str(check.path)
    assert run.check_report() is None and damaged.check_report() is None


@pytest.mark.slow
async def test_f4_lists_the_folder_and_reopens_a_run_with_its_command_line(output):
    app_ = ProtonApp(output=output)
    async with app_.run_test(size=(160, 40)) as pilot:
        await wait_for(lambda: app_.screen.query("#detection"))
        await pilot.press("f4")
        await pilot.pause()
        screen = app_.screen
        assert isinstance(screen, RunsScreen)
        labels = [label for label, _, _ in screen.entries]
        assert len(labels) == 3 and not any(label.startswith(THIS_PROCESS) for label in labels)
        assert "3 runs and checks in" in str(screen.query_one("#summary").render())
        await pilot.press("down", "enter")  # the run (the check is first)
        await pilot.pause()
        assert isinstance(app_.screen, RunScreen)
        command = str(app_.screen.query_one("#run-command").render())
        assert command.startswith("$ env ") and "vecadd.py --size 2048 --iters 2" in command
        assert "vecadd: PASS" in "\n".join(app_.screen.query_one("#run-log").lines)
        await pilot.press("b")  # back to the list: the check reopens as it ended, nothing runs
        await pilot.pause()
        await pilot.press("up", "enter")
        await pilot.pause()
        assert isinstance(app_.screen, CheckScreen) and app_.screen.report is not None
        assert app_.screen.status_text().startswith("PASS  ·  the 1 run passed, none flagged")
        assert str(app_.screen.query_one("#check-table").get_row_at(0)[2]) == "PASS"
