"""Snapshots of the doctor screen (pytest-textual-snapshot), read back from real doctor.json reports: the no-GPU
check, a matrix whose cells all failed (no driver), and the H200's (Triton 3.6.0), every cell proved. Review changes
with `pytest --snapshot-update`."""



from __future__ import annotations

import pytest

from proton_tui.engine.doctor import DoctorReport
from proton_tui.records import read_doctor
from proton_tui.tui.app import ProtonApp
from proton_tui.tui.screens.doctor import DoctorScreen
from tests.helpers import FIXTURES
from tests.tui.test_snapshots import H200_PYTHON, on_a_screen

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])


THEMES = pytest.mark.parametrize("theme", ["textual-dark"])  # the light theme: the table and the form (test_snapshots)


def stored(name: str) -> DoctorReport:
    return DoctorReport.from_record(read_doctor(FIXTURES / "doctor" / f"{name}.json"))


class TestDoctorScreen:
    """The doctor screen, read back from recorded reports."""

    @SIZES
    @THEMES
    @pytest.mark.parametrize("name", ["no_gpu", "no_driver", "h200_triton360"])
    def test_doctor_screen(self, snap_compare, size, theme, name):
        report = stored(name)
        assert snap_compare(ProtonApp(python=H200_PYTHON),
                            run_before=on_a_screen(lambda: DoctorScreen(finished=report), theme), terminal_size=size)
