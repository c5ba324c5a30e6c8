"""A user's own command to profile (``proton-tui run -- COMMAND``): what kind of command it is, and how Proton is
attached to it. Proton's CLI runs a script or pytest itself; anything else (a module, a launcher, another program)
runs as given, in env mode, with the start-up hook (`startup.py`) on its PYTHONPATH."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from proton_tui.engine import startup

SCRIPT, PYTEST, MODULE, LAUNCHER, PROGRAM = "script", "pytest", "module", "launcher", "program"
PYTHON_WORD = re.compile(r"^python(\d+(\.\d+)?)?$")
LAUNCHERS = ("torchrun", "srun", "mpirun", "mpiexec")
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")
# the interpreter's own options that take a value (python -X dev -W error script.py)
PYTHON_VALUE_OPTIONS = ("-X", "-W", "-Q")
STARTUP_FOLDER = ".startup"  # in the run folder: the hook, as sitecustomize.py


class WorkloadError(ValueError):
    """A command that cannot be run: one line naming it."""


@dataclass(frozen=True)
class Workload:
    """A user's command: `argv` as given, its kind, the interpreter it names (None: the run's), the script or module
    or launcher it runs, and the folder it runs in."""

    argv: tuple[str, ...]
    kind: str
    cwd: Path
    python: str | None = None  # the interpreter word of `python …` (None: none named)
    python_options: tuple[str, ...] = ()  # the interpreter's options before the script (-u, -X dev)
    target: str | None = None  # the script, the module, the launcher, or the program
    args: tuple[str, ...] = ()  # what follows the target

    @property
    def by_proton_cli(self) -> bool:
        """Proton's CLI can run it (a script or pytest); else it runs as given with the start-up hook."""
        return self.kind in (SCRIPT, PYTEST)

    @property
    def ranks(self) -> bool:
        """Its processes have ranks (a launcher): one capture per rank."""
        return self.kind == LAUNCHER

    @property
    def default_name(self) -> str:
        """A capture name from what it runs: the script's or module's name, else the launcher's script's."""
        words = [self.target or "", *self.args] if self.kind == LAUNCHER else [self.target or ""]
        for word in words:
            if word.endswith(".py"):
                return _name_of(Path(word).stem)
        if self.kind == MODULE and self.target:
            return _name_of(self.target.rsplit(".", 1)[-1])
        if self.target in ("-c", "-"):
            return "workload"
        return _name_of(Path(self.target or "workload").name)

    def display(self) -> str:
        import shlex

        return shlex.join(self.argv)


def _name_of(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip("._-")
    return name or "workload"


def parse_workload(argv: Sequence[str], cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Workload:
    """The command after ``--``, checked: its script exists, its launcher or program is installed. Raises
    WorkloadError with one line naming what is wrong."""
    environ = os.environ if environ is None else environ
    cwd = Path(cwd or os.getcwd())
    argv = tuple(argv)
    if not argv:
        raise WorkloadError("--: no command after it (for example: proton-tui run -- python train.py)")
    first = argv[0]
    base = os.path.basename(first)
    if PYTHON_WORD.match(base) or (base.startswith("python") and _is_file(first, cwd)):
        return _python_command(argv, cwd, environ)
    if base in ("pytest", "py.test"):
        _installed(first, environ, cwd)
        return Workload(argv, PYTEST, cwd, target="pytest", args=argv[1:])
    if first.endswith(".py"):
        _script(first, cwd)
        return Workload(argv, SCRIPT, cwd, target=first, args=argv[1:])
    _installed(first, environ, cwd)
    kind = LAUNCHER if base in LAUNCHERS else PROGRAM
    return Workload(argv, kind, cwd, target=first, args=argv[1:])


def _python_command(argv: tuple[str, ...], cwd: Path, environ: Mapping[str, str]) -> Workload:
    python, rest = argv[0], list(argv[1:])
    _installed(python, environ, cwd)
    options: list[str] = []
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c", "-"):
        option = rest.pop(0)
        options.append(option)
        if option in PYTHON_VALUE_OPTIONS and rest:
            options.append(rest.pop(0))
    if not rest:
        raise WorkloadError(f"{python}: no script or module to run (for example: -- {python} train.py)")
    if rest[0] == "-m":
        if len(rest) < 2:
            raise WorkloadError(f"{python} -m: no module named after it")
        module = rest[1]
        kind = PYTEST if module == "pytest" else LAUNCHER if module in LAUNCHER_MODULES else MODULE
        return Workload(argv, kind, cwd, python, tuple(options), module, tuple(rest[2:]))
    if rest[0] in ("-c", "-"):
        return Workload(argv, PROGRAM, cwd, python, tuple(options), rest[0], tuple(rest[1:]))
    _script(rest[0], cwd)
    return Workload(argv, SCRIPT, cwd, python, tuple(options), rest[0], tuple(rest[1:]))


def _is_file(word: str, cwd: Path) -> bool:
    return os.sep in word and (cwd / word).is_file()


def _script(path: str, cwd: Path) -> None:
    if not (cwd / path).is_file():
        raise WorkloadError(f"{path}: no such script" + (f" in {cwd}" if not os.path.isabs(path) else ""))


def _installed(program: str, environ: Mapping[str, str], cwd: Path) -> None:
    """A program named by a path must exist; one named by its name must be on PATH."""
    if os.sep in program:
        if not os.access(cwd / program, os.X_OK) or not (cwd / program).is_file():
            raise WorkloadError(f"{program}: no such program")
    elif shutil.which(program, path=environ.get("PATH", os.defpath)) is None:
        raise WorkloadError(f"{program}: not installed here (not found on PATH)")


@dataclass(frozen=True)
class HookSettings:
    """What the start-up hook is told (PROTON_TUI_HOOK): where to write, under which name, and how Proton starts."""

    folder: Path
    name: str
    ranks: bool
    profile: bool
    backend: str | None = None
    context: str = "shadow"
    hook: str | None = "triton"
    data: str = "tree"
    format: str = "hatchet"
    mode: str = ""

    def env(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The variables that put the hook in the workload: the hook's folder first on PYTHONPATH, its settings."""
        folder = self.folder / STARTUP_FOLDER
        before = environ.get("PYTHONPATH", "")
        settings = {"folder": str(self.folder), "name": self.name, "ranks": self.ranks, "profile": self.profile,
                    "backend": self.backend, "context": self.context, "hook": self.hook, "data": self.data,
                    "format": self.format, "mode": self.mode}
        return {"PYTHONPATH": str(folder) + (os.pathsep + before if before else ""),
                startup.CONFIG_VAR: json.dumps(settings, sort_keys=True)}

    def install(self) -> Path:
        """Copy the hook into the run folder as sitecustomize.py; its path."""
        folder = self.folder / STARTUP_FOLDER
        folder.mkdir(exist_ok=True)
        target = folder / "sitecustomize.py"
        target.write_bytes(Path(startup.__file__).read_bytes())
        return target


def command_interpreter(workload: Workload, default: str, environ: Mapping[str, str] | None = None) -> str:
    """The Python the workload's processes run: the one its command names (`python …`), the one a launcher or a
    program on PATH is a script of (its ``#!`` line), else `default` (--python)."""
    environ = os.environ if environ is None else environ
    path = environ.get("PATH", os.defpath)
    if workload.python is not None:
        named = workload.python
        if os.sep in named:
            return str(workload.cwd / named)
        return shutil.which(named, path=path) or named
    if workload.kind in (LAUNCHER, PROGRAM, PYTEST) and workload.target and workload.target not in ("-c", "-"):
        program = workload.target if os.sep in workload.target else shutil.which(workload.target, path=path)
        if program and (shebang := _shebang(workload.cwd / program)) is not None:
            return shebang
    return default


def _shebang(program: Path) -> str | None:
    """The Python a script's ``#!`` line names (``#!/usr/bin/env python3`` looked up on PATH)."""
    try:
        with open(program, "rb") as stream:
            first = stream.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        words = [shutil.which(words[1]) or words[1]]
    if words and PYTHON_WORD.match(os.path.basename(words[0])):
        return words[0]
    return None
