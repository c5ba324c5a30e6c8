"""The run, runs, box-check and doctor screens at 80x24: nothing that matters is cut."""

from __future__ import annotations

from pathlib import Path

from proton_tui.engine.history import stored_runs
from proton_tui.tui.app import ProtonApp
from tests.helpers import FIXTURES, H200_PYTHON
from tests.tui.screen_text import shown_in, words

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
