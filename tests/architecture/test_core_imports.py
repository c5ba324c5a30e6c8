"""The core never imports Textual or Typer, and the command line never imports Textual until a TUI opens: checked
in a fresh interpreter, module by module."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import proton_tui

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(proton_tui.__path__, prefix="proton_tui.", onerror=lambda _: None)
    if not m.name.startswith(("proton_tui.tui", "proton_tui.payload")) and m.name != "proton_tui.__main__"
)
FRONT_ENDS = ("proton_tui.cli", "proton_tui.entry", "proton_tui.tui.launch")
CORE = [name for name in MODULES if not name.startswith(FRONT_ENDS)]


def test_core_modules_exist():
    assert {"proton_tui.hatchet", "proton_tui.view.display", "proton_tui.output.text", "proton_tui.engine.check"} <= set(CORE)
    assert "proton_tui.cli.view" in MODULES and "proton_tui.cli" not in CORE


def imports_none_of(modules: list[str], forbidden: tuple[str, ...]) -> subprocess.CompletedProcess:
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"    assert not [m for m in {forbidden!r} if m in sys.modules], name\n"
        "print('ok')\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_core_imports_neither_textual_nor_typer():
    result = imports_none_of(CORE, ("textual", "typer"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_command_line_imports_no_textual():
    result = imports_none_of(MODULES, ("textual",))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_the_viewer_starts_without_reading_package_metadata_or_loading_the_demangler():
    """Both are read when first needed (the payload's requirements, a C++ name): their imports were 0.04 s of the
    viewer's start on the 2-core machine, in front of its first frame."""
    result = imports_none_of(["proton_tui.entry", "proton_tui.tui.launch", "proton_tui.tui.app",
                              "proton_tui.tui.opening", "proton_tui.view.warps"], ("importlib.metadata", "demangle"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
