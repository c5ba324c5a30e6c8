"""The user's command after `--`: its kind, what it runs, its interpreter and its capture's default name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from proton_tui.engine.workload import WorkloadError, command_interpreter, parse_workload

PYTHON = sys.executable
TORCHRUN = str(Path(sys.executable).with_name("torchrun"))


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "train.py").write_text("print('hi')\n")
    return tmp_path


@pytest.mark.parametrize("argv, kind, target, args, name, by_cli", [
    ([PYTHON, "train.py", "--lr", "3"], "script", "train.py", ("--lr", "3"), "train", True),
    ([PYTHON, "-u", "-X", "dev", "train.py"], "script", "train.py", (), "train", True),
    (["train.py", "x"], "script", "train.py", ("x",), "train", True),
    ([PYTHON, "-m", "pkg.job", "a"], "module", "pkg.job", ("a",), "job", False),
    ([PYTHON, "-m", "pytest", "-q"], "pytest", "pytest", ("-q",), "pytest", True),
    ([PYTHON, "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py"], "launcher",
     "torch.distributed.run", ("--nproc-per-node", "2", "train.py"), "train", False),
    ([TORCHRUN, "--nproc-per-node", "2", "train.py"], "launcher", TORCHRUN, ("--nproc-per-node", "2", "train.py"),
     "train", False),
    ([PYTHON, "-c", "print(1)"], "program", "-c", ("print(1)",), "workload", False),
])
def test_kinds(folder, argv, kind, target, args, name, by_cli):
    workload = parse_workload(argv, folder)
    assert (workload.kind, workload.target, workload.args, workload.default_name, workload.by_proton_cli) == (
        kind, target, args, name, by_cli)
    assert workload.ranks == (kind == "launcher")


def test_python_options_are_kept_for_the_interpreter(folder):
    assert parse_workload([PYTHON, "-u", "-X", "dev", "train.py"], folder).python_options == ("-u", "-X", "dev")


def test_the_interpreter_is_the_one_the_command_names_or_its_launchers(folder):
    assert command_interpreter(parse_workload([PYTHON, "train.py"], folder), "/other/python") == PYTHON
    assert command_interpreter(parse_workload(["train.py"], folder), "/other/python") == "/other/python"
    launcher = command_interpreter(parse_workload([TORCHRUN, "train.py"], folder), "/other/python")
    assert Path(launcher).name.startswith("python") and Path(launcher).parent == Path(PYTHON).parent


@pytest.mark.parametrize("argv, message", [
    ([], "--: no command after it"),
    ([PYTHON], f"{PYTHON}: no script or module to run"),
    (["./nothing-here"], "./nothing-here: no such program"),
    (["surely-not-a-program-xyz"], "surely-not-a-program-xyz: not installed here (not found on PATH)"),
])
def test_commands_that_cannot_run(folder, argv, message):
    with pytest.raises(WorkloadError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_workload(argv, folder)
