"""Advice in the TUI names the TUI's controls, never command-line flags: one rule text, worded for where it is
read. Real interpreters are probed: this one (torch and Triton, no GPU) and the system's Python (neither)."""

from __future__ import annotations

import shutil
import sys

import pytest

from proton_tui.engine.check import NoGpuError, plan_check
from proton_tui.engine.classify import EMPTY_CAPTURE_HINTS, NO_DRIVER_HINT
from proton_tui.engine.doctor.matrix import OUTCOME_REMEDIES
from proton_tui.engine.judge import NO_GPU_HINT
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.screens.check import CheckScreen
from proton_tui.tui.screens.doctor import DoctorScreen
from tests.helpers import wait_for
from tests.tui.test_tui_doctor import facts_text, rendered

SIZE = (80, 24)
NO_TRITON = shutil.which("python3", path="/usr/bin")  # the system's Python: neither torch nor Triton


async def test_the_box_check_without_a_gpu_names_its_key_not_a_flag(tmp_path):
    with pytest.raises(NoGpuError, match="--cpu runs the interpreter check instead"):  # the command line's words
        plan_check(sys.executable, output=tmp_path)
    app = ProtonApp(python=sys.executable, output=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = CheckScreen(sys.executable, tmp_path)
        await app.push_screen(screen)
        await wait_for(lambda: screen.problem is not None, what="the check's refusal")
        await pilot.pause()
        said = rendered(screen, "#check-result")
        assert "the key c runs the interpreter check instead" in said and "--" not in said, said


@pytest.mark.skipif(NO_TRITON is None, reason="no system Python at /usr/bin/python3")
async def test_the_doctor_names_the_interpreter_field_not_a_flag(tmp_path):
    app = ProtonApp(python=sys.executable, output=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = DoctorScreen(NO_TRITON, tmp_path)
        await app.push_screen(screen)
        await wait_for(lambda: not screen.running and screen.report is not None, what="the doctor's end")
        await pilot.pause()
        facts = " ".join(facts_text(screen).split())
        assert "or name another interpreter (the Interpreter field)" in facts and "--python" not in facts, facts
        result = rendered(screen, "#doctor-result")
        assert "(the Interpreter field)" in result and "--" not in result, result


def test_every_core_advice_shown_in_the_tui_has_no_flag():
    """What the run, the box check and the doctor show as advice (hints, remedies), as the TUI words it."""
    from proton_tui.engine.rules import OPTION_NAMES, tui_words

    texts = [NO_DRIVER_HINT, NO_GPU_HINT, *EMPTY_CAPTURE_HINTS.values(), *OUTCOME_REMEDIES.values()]
    for text in texts:
        assert "--" not in tui_words(text), text
    for cli, tui in OPTION_NAMES.values():
        assert tui_words(cli) == tui and "--" not in tui
