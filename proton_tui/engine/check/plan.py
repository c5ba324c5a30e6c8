"""Planning a box check: the options parsed, the interpreter probed, one run per GPU (or ``--cpu`` job) planned
against the rules. Nothing runs."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from proton_tui.engine.command import device_env
from proton_tui.engine.job import JobPlan
from proton_tui.engine.params import (
    MAX_ITERS,
    ParamError,
    RunParams,
    parse_count,
    parse_size,
    parse_timeout,
    whole_number,
)
from proton_tui.engine.payload import payload_path
from proton_tui.engine.probe import InterpreterInfo, probe_interpreter
from proton_tui.engine.rules import Finding, check_rules, cli_words, import_problem, resolve_backend, version_between
from proton_tui.engine.rundir import DEFAULT_OUTPUT
from proton_tui.engine.session import RunPlan
from proton_tui.engine.sizes import CHECK_SIZE, CPU_ITERS, CPU_SIZE, GPU_ITERS
from proton_tui.records import MIN_FRACTION
from proton_tui.view.formatting import counted

TIMEOUT_S = 600.0  # per GPU: a hung GPU is one of the things a box check is for
MAX_JOBS = 64
INTERPRETER_NAME = "Triton interpreter (CPU)"


class CheckError(Exception):
    """The check cannot start (exit 2); the message is one line. `findings`: the rules that refused it, when rules
    did (for a front end that words their advice its own way)."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings


class NoGpuError(CheckError):
    """The interpreter sees no GPU; the message names it and says that ``--cpu`` runs the interpreter check."""


def parse_gpus(text: str | Collection[int] | None, flag: str = "--gpus") -> list[int] | None:
    """``0,1`` (or a list) -> [0, 1]; None or ``all`` -> None (every visible GPU). Raises ParamError."""
    if text is None:
        return None
    if isinstance(text, str):
        if text.strip().lower() == "all":
            return None
        items = [item.strip() for item in text.split(",")]
    else:
        items = [str(item) for item in text]
    if not items or any(whole_number(item) is None for item in items):
        raise ParamError(flag, f"{text!r} is not a comma-separated list of GPU indices (e.g. 0,1)")
    indices = [int(item) for item in items]
    if len(set(indices)) != len(indices):
        raise ParamError(flag, f"{text!r} names a GPU twice")
    return indices


def parse_fraction(text: str | float) -> float:
    """``--min-fraction``: a number in (0, 1]."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ParamError("--min-fraction", f"{text!r} is not a number") from None
    if not 0.0 < value <= 1.0:
        raise ParamError("--min-fraction", f"{text!r} must be in (0, 1] (a fraction of the median bandwidth)")
    return value


@dataclass(frozen=True)
class CheckSlot:
    """One process of the check: a GPU (``index`` as the interpreter sees it) or, with ``--cpu``, a job."""

    index: int
    label: str  # "0", "1", … or "cpu0", "cpu1", …
    name: str  # the GPU's name from the probe, or the interpreter
    plan: RunPlan

    def pinning(self, environ: Mapping[str, str] | None = None) -> dict[str, str | None]:
        """The ``*_VISIBLE_DEVICES`` variables the run sets (or removes, as None) for its process."""
        changes = device_env(self.plan.params, self.plan.info, os.environ if environ is None else environ)
        return {key: value for key, value in changes.items() if key.endswith("VISIBLE_DEVICES")}


@dataclass(frozen=True)
class CheckPlan(JobPlan):
    """Every run of a check, planned against the rules; execute it with ``execute_check``. Every slot runs at once
    (``jobs`` is their count)."""

    slots: tuple[CheckSlot, ...] = ()
    cpu: bool = False
    size: int = CHECK_SIZE
    iters: int = GPU_ITERS
    profile: bool = True
    min_fraction: float = MIN_FRACTION
    warnings: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()  # the rules behind `warnings`, one per distinct message



def plan_check(python: str | None = None, *, gpus: str | Collection[int] | None = None,
               size: str | int | None = None, iters: str | int | None = None, profile: bool = True,
               output: str | Path = DEFAULT_OUTPUT, cpu: bool = False, jobs: str | int | None = None,
               min_fraction: str | float = MIN_FRACTION, timeout: str | float | None = TIMEOUT_S,
               mode: str | None = None, info: InterpreterInfo | None = None,
               environ: Mapping[str, str] | None = None, payload: Path | None = None,
               inject_bug: str | Collection[int] | None = None) -> CheckPlan:
    """Check the options, probe the interpreter (or take ``info``), and plan one run per GPU (or per ``--cpu``
    job). Nothing runs. Raises ParamError (a bad option, named), ProbeError, NoGpuError or CheckError."""
    import sys

    python = python or (info.python if info else sys.executable)
    wanted = parse_gpus(gpus)
    size = parse_size(size if size is not None else CPU_SIZE if cpu else CHECK_SIZE)
    iters = parse_count("--iters", iters if iters is not None else CPU_ITERS if cpu else GPU_ITERS, most=MAX_ITERS)
    fraction = parse_fraction(min_fraction)
    timeout = parse_timeout(timeout)
    bugged = set(parse_gpus(inject_bug, "--inject-bug") or ())
    if cpu:
        if wanted is not None:
            raise ParamError("--gpus", "--cpu runs the interpreter, not GPUs: use --jobs N for N parallel runs")
        if profile:
            raise ParamError("--profile", "Proton cannot profile the Triton interpreter: --cpu runs without a "
                                          "capture")
        count = parse_count("--jobs", jobs if jobs is not None else 1)
        if count > MAX_JOBS:
            raise ParamError("--jobs", f"{count} is more than {MAX_JOBS}")
    elif jobs is not None:
        raise ParamError("--jobs", "only with --cpu: on GPUs the check runs one process per GPU")
    info = info or probe_interpreter(python)
    if (problem := import_problem(info)) is not None:
        raise CheckError(Finding("refuse", problem).message)
    if cpu:
        indices = list(range(count))
    elif not info.gpu_count:
        raise NoGpuError(cli_words(f"{python} sees no GPU (torch.cuda.is_available() is False there): nothing to "
                                   "check; «check cpu» runs the interpreter check instead"))
    else:
        indices = wanted if wanted is not None else list(range(info.gpu_count))
        for index in indices:
            if index >= info.gpu_count:
                seen = counted(info.gpu_count, "GPU")
                raise ParamError("--gpus", f"GPU {index} is not visible: {python} sees {seen}, 0..{info.gpu_count - 1}")
    for index in bugged:
        if index not in indices:
            raise ParamError("--inject-bug", f"{index} is not one of the check's runs")
    if mode is None:  # Proton's CLI in Triton 3.5.x cannot enable the triton hook; env mode can
        mode = "env" if version_between(info, "3.5.0", "3.6.0") else "cli"
    payload = Path(payload) if payload is not None else payload_path()
    slots, warned = [], []
    for index in indices:
        label = f"cpu{index}" if cpu else str(index)
        params = RunParams(size=size, iters=iters, python=python, device="cpu" if cpu else index,
                           output=Path(output), name=f"vecadd-{'cpu' if cpu else 'gpu'}{index}", profile=profile,
                           timeout=timeout, mode=mode, inject_bug=index in bugged, payload=payload)
        findings = tuple(check_rules(params, info, environ))
        refusals = [finding for finding in findings if finding.refuses]
        if refusals:
            raise CheckError("refused configuration: " + "; ".join(f.message for f in refusals), tuple(refusals))
        warned += [finding for finding in findings if finding.message not in {f.message for f in warned}]
        plan = RunPlan(params, info, findings, resolve_backend(params.backend, info) if profile else None, payload)
        name = INTERPRETER_NAME if cpu else info.gpu_names[index]
        slots.append(CheckSlot(index, label, name, plan))
    return CheckPlan(info, Path(output), len(slots), tuple(slots), cpu, size, iters, profile, fraction,
                     tuple(finding.message for finding in warned), tuple(warned))

