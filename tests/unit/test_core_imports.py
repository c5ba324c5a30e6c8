"""The core never imports Textual: checked in a fresh interpreter, module by module."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import proton_tui

CORE = sorted(
    f"proton_tui.{m.name}"
    for m in pkgutil.walk_packages(proton_tui.__path__, onerror=lambda _: None)
    if not m.name.startswith(("tui", "payload")) and m.name != "__main__"
)


def test_core_modules_exist():
    assert "proton_tui.hatchet" in CORE and "proton_tui.report" in CORE and "proton_tui.cli" in CORE


def test_core_imports_no_textual():
    code = (
        "import importlib, sys\n"
        f"for name in {CORE!r}:\n"
        "    importlib.import_module(name)\n"
        "    assert 'textual' not in sys.modules, name\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
