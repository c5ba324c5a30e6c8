"""The form at 80x24: its messages wrap, its choices fit, a long interpreter path says it is cut, and every switch
and radio button says its state in text (a monochrome terminal shows it too)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Switch

from proton_tui.tui.app import ProtonApp
from tests.helpers import H200_PYTHON, h200_probe, plant_probe
from tests.tui.screen_text import shown_in, words

SIZE = (80, 24)


def form_app(monkeypatch, tmp_path) -> ProtonApp:
    plant_probe(monkeypatch, H200_PYTHON, h200_probe())
    monkeypatch.chdir(tmp_path)
    return ProtonApp(python=H200_PYTHON, output=Path("proton-runs"))


async def settled(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_a_size_error_is_shown_whole(monkeypatch, tmp_path):
    async with form_app(monkeypatch, tmp_path).run_test(size=SIZE) as pilot:
        await settled(pilot)
        screen = pilot.app.screen
        screen.query_one("#size").value = "abc"
        await pilot.pause()
        error = screen.query_one("#size-error")
        assert words(shown_in(pilot.app, error)) == "'abc' is not a size (try 1048576, 1M, 2^20 or 1<<20)"


async def test_every_format_is_named_whole(monkeypatch, tmp_path):
    async with form_app(monkeypatch, tmp_path).run_test(size=SIZE) as pilot:
        await settled(pilot)
        formats = pilot.app.screen.query_one("#format")
        formats.scroll_visible(animate=False)
        await pilot.pause()
        shown = shown_in(pilot.app, formats)
        assert "hatchet_msgpack" in shown and "…" not in shown


async def test_a_long_interpreter_path_is_cut_with_an_ellipsis(monkeypatch, tmp_path):
    async with form_app(monkeypatch, tmp_path).run_test(size=SIZE) as pilot:
        await settled(pilot)
        field = pilot.app.screen.query_one("#python")
        field.value = "/home/someone/projects/a-rather-long-folder-name/.venv/bin/python3.12"
        await pilot.pause()
        shown = shown_in(pilot.app, field)
        assert "…" in shown and shown.startswith("/home/") and shown.endswith("bin/python3.12")
        field.focus()
        await pilot.pause()
        assert "…" not in shown_in(pilot.app, field)  # being edited: the value itself


async def test_switches_and_radio_buttons_say_their_state_in_text(monkeypatch, tmp_path):
    """Under NO_COLOR the state is still printed: ● / ○ on the radio buttons, on / off after each switch."""
    monkeypatch.setenv("NO_COLOR", "1")
    async with form_app(monkeypatch, tmp_path).run_test(size=SIZE) as pilot:
        await settled(pilot)
        app, screen = pilot.app, pilot.app.screen
        backends = shown_in(app, screen.query_one("#backend"))
        assert "●▌ auto" in backends and "○▌ cupti" in backends and backends.count("●") == 1
        assert shown_in(app, screen.query_one("#profile-label")) == "profile with Proton: on"
        screen.query_one("#profile", Switch).value = False
        await pilot.pause()
        assert shown_in(app, screen.query_one("#profile-label")) == "profile with Proton: off"
        assert words(shown_in(app, screen.query_one("#hook-label"))).endswith(": on")


async def test_an_interpreter_without_torch_and_triton_is_told_once_with_the_command_that_installs_them(tmp_path):
    """A real interpreter that has neither (a bare virtual environment): the top line says what is missing, why, and
    the exact install command; the refusal list and Run's reason do not say it again."""
    import subprocess
    import sys

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    app = ProtonApp(python=python, output=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        screen = pilot.app.screen
        top = words(shown_in(pilot.app, screen.query_one("#detection")))
        assert "no Triton (ModuleNotFoundError: No module named 'triton')" in top
        assert "This installs what the payload needs, then F2 runs the CPU check:" in top
        command = f"{python} -m pip install torch triton numpy"
        assert "".join(command.split()) in "".join(top.split())  # on a line of its own; a long path folds
        below = [str(screen.query_one(selector).render()) for selector in ("#findings", "#run-reason")]
        assert not any("No module named" in text or "pip install" in text for text in below), below
        assert "Run can't start" in below[1] and screen.query_one("#run").disabled
