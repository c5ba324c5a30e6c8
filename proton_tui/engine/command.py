"""The argv and environment of a run: ``<python> -m triton.profiler.proton …`` (never a shell, never the
``proton`` console script, which may belong to another Python); for a user's command (`workload`), Proton's CLI where
it can run it, else the command as given with the start-up hook on its PYTHONPATH."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from proton_tui.engine.params import RunParams, capture_suffix, instrumentation_mode
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.engine.rules import AMD_FORBIDDEN_VARS, VENDOR_VISIBLE_DEVICES
from proton_tui.engine.workload import PYTEST, SCRIPT, HookSettings, Workload


@dataclass(frozen=True)
class Command:
    """What to execute. ``env_changes`` lists the variables set (value) or removed (None) for the child."""

    argv: tuple[str, ...]
    env: dict[str, str]
    env_changes: dict[str, str | None]
    capture_path: Path | None  # where Proton will write the .hatchet; None without profiling or with ranks
    cwd: Path | None = None  # the folder it runs in (None: proton-tui's)
    hook: HookSettings | None = None  # the start-up hook the run puts on the workload's PYTHONPATH

    def display(self) -> str:
        """The command as one line a shell can run: ``[cd DIR &&] env [-u VAR] VAR=value … argv``."""
        words = ["env"]
        for key, value in self.env_changes.items():
            words += ["-u", key] if value is None else [f"{key}={value}"]
        line = shlex.join(words + list(self.argv))
        return f"cd {shlex.quote(str(self.cwd))} && {line}" if self.cwd is not None else line


def payload_args(params: RunParams) -> list[str]:
    """The payload's own flags."""
    device = "auto" if params.device == "auto" else "cpu" if params.device == "cpu" else "gpu"
    args = ["--size", str(params.size), "--iters", str(params.iters), "--block-size", str(params.block_size),
            "--device", device]
    # the bundled payload's scoped kernel, for the only backend that records scopes (another payload has its own)
    scoped = params.profile and params.backend == "instrumentation" and params.payload is None
    return args + (["--inject-bug"] if params.inject_bug else []) + (["--scoped"] if scoped else [])


def proton_cli(params: RunParams, session: Path, mode: str) -> list[str]:
    """``-m triton.profiler.proton`` and its flags, up to the script it runs."""
    argv = ["-m", "triton.profiler.proton", "-n", str(session)]
    argv += ["-b", params.backend] if params.backend != "auto" else []
    argv += ["-c", params.context] if params.context != "shadow" else []
    argv += ["-k", "triton"] if params.hook else []
    argv += ["-d", "trace"] if params.data == "trace" else []
    return argv + (["-m", mode] if mode else [])


def build_command(params: RunParams, info: InterpreterInfo, payload: Path | None, run_dir: Path,
                  environ: Mapping[str, str] | None = None, workload: Workload | None = None) -> Command:
    """Build the run's argv and environment; ``run_dir`` must be absolute (Proton writes relative to its CWD)."""
    environ = os.environ if environ is None else environ
    session = Path(run_dir).resolve() / params.name  # Proton appends the suffix; never pass it
    mode = instrumentation_mode(params) if params.backend == "instrumentation" else ""
    if workload is not None:
        return workload_command(params, info, workload, session, mode, environ)
    python, script = params.python, str(payload)
    if not params.profile:
        argv = [python, script, *payload_args(params)]
    elif params.mode == "cli":
        argv = [python, *proton_cli(params, session, mode), script, *payload_args(params)]
    else:
        argv = [python, script, *payload_args(params), "--proton-name", str(session),
                "--proton-context", params.context, "--proton-hook", "triton" if params.hook else "none"]
        argv += ["--proton-backend", params.backend] if params.backend != "auto" else []
        argv += ["--proton-data", params.data] if params.data != "tree" else []
        argv += ["--proton-format", params.output_format] if params.output_format != "hatchet" else []
        argv += ["--proton-mode", mode] if mode else []
    changes = device_env(params, info, environ)
    capture = session.with_name(session.name + capture_suffix(params)) if params.profile else None
    return Command(tuple(argv), _environment(environ, changes), changes, capture)


def _environment(environ: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    env = {key: value for key, value in environ.items() if key not in changes}
    env.update({key: value for key, value in changes.items() if value is not None})
    return env


def workload_command(params: RunParams, info: InterpreterInfo, workload: Workload, session: Path, mode: str,
                     environ: Mapping[str, str]) -> Command:
    """A user's command: under Proton's CLI where it runs it (a script or pytest, in cli mode); else as given, with
    the start-up hook starting Proton in each process to profile (and, under a launcher, naming each rank's files
    even without profiling)."""
    changes = device_env(params, info, environ)
    capture = session.with_name(session.name + capture_suffix(params)) if params.profile else None
    if params.profile and params.mode == "cli" and workload.by_proton_cli:
        target = ["pytest"] if workload.kind == PYTEST else [workload.target or ""]
        argv = [params.python, *workload.python_options, *proton_cli(params, session, mode), *target, *workload.args]
        return Command(tuple(argv), _environment(environ, changes), changes, capture, workload.cwd)
    hook = None
    if params.profile or workload.ranks:
        hook = HookSettings(session.parent, params.name, workload.ranks, params.profile,
                            None if params.backend == "auto" else params.backend, params.context,
                            "triton" if params.hook else None, params.data, params.output_format, mode)
        changes.update(hook.env(environ))
    # a script named alone (SCRIPT.py) runs with the run's interpreter, as Proton's CLI would run it
    argv = (params.python, *workload.argv) if workload.kind == SCRIPT and workload.python is None else workload.argv
    return Command(tuple(argv), _environment(environ, changes), changes, None if workload.ranks else capture,
                   workload.cwd, hook)


def device_env(params: RunParams, info: InterpreterInfo, environ: Mapping[str, str]) -> dict[str, str | None]:
    """Variables to set (or remove, as None): unbuffered output, GPU pinning, the interpreter for ``cpu``."""
    changes: dict[str, str | None] = {"PYTHONUNBUFFERED": "1"}
    if info.gpu_vendor == "amd":
        changes.update({var: None for var in AMD_FORBIDDEN_VARS if var in environ})
    if params.device == "cpu":
        changes["TRITON_INTERPRET"] = "1"
    elif isinstance(params.device, int) and info.gpu_vendor in VENDOR_VISIBLE_DEVICES:
        var = VENDOR_VISIBLE_DEVICES[info.gpu_vendor]
        visible = [item.strip() for item in environ.get(var, "").split(",") if item.strip()]
        # An index counts among the GPUs the interpreter already sees, so map it through an existing pin.
        changes[var] = visible[params.device] if params.device < len(visible) else str(params.device)
    return changes
