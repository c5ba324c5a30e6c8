"""Which configurations are refused or warned about, each with the reason the user sees before anything runs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from proton_tui.engine.params import RunParams
from proton_tui.engine.payload import install_command
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.view.formatting import counted

# The first Triton release whose Proton CLI accepts each `-b` choice.
BACKEND_SINCE = {"cupti": "3.0.0", "roctracer": "3.2.0", "instrumentation": "3.5.0", "rocprofiler": "3.8.0"}
# Proton's data modes and tree formats, and the first Triton release that writes each (the wheels' sources).
DATA_SINCE = {"tree": "3.0.0", "trace": "3.5.0"}
FORMAT_SINCE = {"hatchet": "3.0.0", "hatchet_msgpack": "3.7.0"}
BACKEND_VENDOR = {"cupti": "nvidia", "roctracer": "amd", "rocprofiler": "amd"}
VENDOR_VISIBLE_DEVICES = {"nvidia": "CUDA_VISIBLE_DEVICES", "amd": "ROCR_VISIBLE_DEVICES"}
AMD_FORBIDDEN_VARS = ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")  # Triton raises ValueError on AMD
MODE_FLAG_SINCE = "3.8.0"  # the first Proton whose command line passes -m on to the profiler (earlier: parsed only)
PAYLOAD_WARPS = 4  # warps per CTA of the payload's kernel: Triton's default num_warps, which its launches keep
# Bytes each recorded warp writes per launch of the payload's scoped kernel: 4 scopes, a start and an end event
# each, 8 bytes an event (on the H200 a 64-byte buffer for 4 warps lost 6 of every warp's 8 events; 256 lost none).
PAYLOAD_WARP_BYTES = 64


# How advice names each option: on the command line, and in the TUI (the launch form's controls, a screen's keys).
OPTION_NAMES = {
    "python": ("--python", "the Interpreter field"),
    "device": ("--device", "Device"),
    "backend auto": ("--backend auto", "Backend auto"),
    "backend instrumentation": ("--backend instrumentation", "Backend instrumentation"),
    "mode env": ("--mode env", "Mode env"),
    "data tree": ("--data tree", "Data tree"),
    "format hatchet": ("--format hatchet", "Format hatchet"),
    "granularity warp": ("--granularity warp", "Granularity warp"),
    "warps": ("--warps", "Warps"),
    "buffer size": ("--buffer-size", "Buffer size"),
    "no-profile": ("--no-profile", "'profile with Proton' switched off"),
    "no-hook": ("--no-hook", "'triton hook' switched off"),
    "cpu check": ("proton-tui check --cpu", "the CPU check (F2)"),
    "check cpu": ("--cpu", "the key c"),
    "timeout": ("--timeout", "the command line's doctor, which takes a longer time limit"),
}
OPTION = re.compile("«([^»]+)»")
# The command line's words for each option, longest first: the TUI shows advice in its own words (`tui_words`).
CLI_WORDS = sorted(((cli, tui) for cli, tui in OPTION_NAMES.values()), key=lambda pair: -len(pair[0]))


def cli_words(text: str) -> str:
    """Advice written with «option» names, as the command line words it (what records and the CLI keep)."""
    return OPTION.sub(lambda found: OPTION_NAMES[found[1]][0], text)


def tui_words(text: str) -> str:
    """Advice as the TUI words it: «option» names, and the command line's words for them (advice read back from a
    record or made by the core), become the TUI's controls."""
    text = OPTION.sub(lambda found: OPTION_NAMES[found[1]][1], text)
    for cli, tui in CLI_WORDS:
        text = text.replace(cli, tui)
    return text


@dataclass(frozen=True)
class Finding:
    """A rule that fired: ``refuse`` stops the run, ``warn`` is shown and the run goes ahead. Its text names options
    as «name» (OPTION_NAMES): `message` words them as command-line flags, `form_message` as the form's controls."""

    level: str  # "refuse" or "warn"
    text: str
    about: str = ""  # "imports": the interpreter lacks what the payload imports (the form says so in its top line)

    @property
    def refuses(self) -> bool:
        return self.level == "refuse"

    @property
    def message(self) -> str:
        return cli_words(self.text)

    @property
    def form_message(self) -> str:
        return tui_words(self.text)


def resolve_backend(backend: str, info: InterpreterInfo) -> str | None:
    """What Proton will use: ``auto`` follows Proton's own choice (the capture does not record it)."""
    if backend != "auto":
        return backend
    if info.gpu_vendor == "nvidia":
        return "cupti"
    if info.gpu_vendor == "amd":
        return "rocprofiler" if info.triton_at_least("3.8.0") else "roctracer"
    return None


def under_rocprofv3(environ: Mapping[str, str]) -> bool:
    """rocprofv3 sets ROCPROF_*/ROCPROFILER_* variables and preloads librocprofiler into the workload."""
    return (any(key.startswith(("ROCPROF_", "ROCPROFILER_")) for key in environ)
            or "librocprofiler" in environ.get("LD_PRELOAD", ""))


def check_rules(params: RunParams, info: InterpreterInfo, environ: Mapping[str, str] | None = None) -> list[Finding]:
    """Every rule that applies to this run, refusals first."""
    environ = os.environ if environ is None else environ
    found = _environment_rules(params, info) + (_profiler_rules(params, info, environ) if params.profile else [])
    if info.gpu_vendor == "amd":
        found += [Finding("warn", f"{var}={environ[var]} is removed for the run: Triton rejects it on AMD and "
                                  "Proton ignores it; «device» pins a GPU through ROCR_VISIBLE_DEVICES")
                  for var in AMD_FORBIDDEN_VARS if var in environ]
    return sorted(found, key=lambda finding: not finding.refuses)


def import_problem(info: InterpreterInfo, *, triton: bool = True, torch: bool = True) -> str | None:
    """Why the payload cannot run in `info`'s interpreter when Triton (`triton`) or torch (`torch`) is needed and
    does not import there, with the command that installs them; None when nothing needed is missing."""
    missing = [(name, error) for name, needed, version, error in (
        ("triton", triton, info.triton_version, info.triton_error),
        ("torch", torch, info.torch_version, info.torch_error)) if needed and version is None]
    if not missing:
        return None
    names = " and ".join(name for name, _ in missing)
    errors = "; ".join(f"{name}: {error}" for name, error in missing)
    verb = "does" if len(missing) == 1 else "do"
    return (f"{names} {verb} not import in {info.python} ({errors}): `{install_command(info.python)}` installs "
            "what the payload needs, or name an interpreter that has it («python»)")


def _environment_rules(params: RunParams, info: InterpreterInfo) -> list[Finding]:
    found = []
    # a command of the user's may need neither; Proton needs Triton, the payload needs both
    problem = import_problem(info, triton=params.profile or not params.command, torch=not params.command)
    if problem is not None:
        found.append(Finding("refuse", problem, about="imports"))
    if isinstance(params.device, int) and params.device >= info.gpu_count:
        seen = f"sees {counted(info.gpu_count, 'GPU')}" if info.gpu_count else "sees no GPU"
        found.append(Finding("refuse", f"«device» {params.device}: {info.python} {seen}"))
    return found


def _profiler_rules(params: RunParams, info: InterpreterInfo, environ: Mapping[str, str]) -> list[Finding]:
    found = []
    backend, triton = params.backend, info.triton_version
    if triton is not None and not info.has_proton:
        found.append(Finding("refuse", f"Triton {triton} in {info.python} was built without Proton "
                                       "(triton.profiler does not import); «no-profile» runs the payload alone"))
    since = BACKEND_SINCE.get(backend)
    if triton is not None and since and not info.triton_at_least(since):
        found.append(Finding("refuse", f"backend {backend} needs Triton >= {since}; {info.python} has {triton}, "
                                       f"whose Proton rejects it (argparse invalid choice) before the payload "
                                       f"runs; use «backend auto»"))
    if backend == "roctracer" and params.mode == "cli":
        whose = f"Triton {triton}'s Proton command line" if triton is not None else "Proton's command line"
        found.append(Finding("refuse", f"backend roctracer in cli mode is refused: {whose} starts the HIP runtime "
                                       "only when -b is omitted, so a pinned roctracer starts before it, records "
                                       "an empty tree and still exits 0 (refused on every Triton version: none "
                                       "of their command lines starts it after the runtime); use «mode env» "
                                       "(the payload drives Proton) or «backend auto»"))
    if under_rocprofv3(environ) and backend != "instrumentation":
        found.append(Finding("refuse", "running under rocprofv3: Proton's AMD backends and rocprofv3 both "
                                       "intercept HSA queues; run outside rocprofv3, or use "
                                       "«backend instrumentation», the only one that coexists with it"))
    wanted_vendor = BACKEND_VENDOR.get(backend)
    if wanted_vendor and info.gpu_vendor and wanted_vendor != info.gpu_vendor:
        found.append(Finding("refuse", f"backend {backend} is for {wanted_vendor.upper()} GPUs and "
                                       f"{info.python} sees {info.gpu_vendor.upper()} ones; use «backend auto»"))
    for what, value, since, default in (("data", params.data, DATA_SINCE, "data tree"),
                                        ("format", params.output_format, FORMAT_SINCE, "format hatchet")):
        first = since[value]
        if triton is not None and not info.triton_at_least(first):
            found.append(Finding("refuse", f"{what} {value} needs Triton >= {first}; {info.python} has {triton}: "
                                           f"use «{default}»"))
    if params.output_format != "hatchet" and params.data == "trace":
        found.append(Finding("refuse", f"format {params.output_format} is a tree's format: a trace is written as "
                                       "a .chrome_trace; use «format hatchet» or «data tree»"))
    elif params.output_format != "hatchet" and params.mode == "cli":
        found.append(Finding("refuse", f"Proton's command line writes a tree as .hatchet only: format "
                                       f"{params.output_format} needs «mode env» (the payload finalizes Proton with "
                                       "it)"))
    if backend == "instrumentation" and (params.payload is not None or params.command):
        empty = "an empty (0-byte) .chrome_trace" if params.data == "trace" else "an empty tree (ROOT only)"
        found.append(Finding("warn", "the instrumentation backend records only kernels built with proton.language "
                                     f"scopes: a kernel without them yields {empty} (the bundled vecadd runs its "
                                     "scoped kernel under it)"))
    found += _instrumentation_rules(params, info)
    if params.hook and params.mode == "cli" and triton is not None and version_between(info, "3.5.0", "3.6.0"):
        found.append(Finding("refuse", f"Proton's CLI in Triton {triton} cannot enable the triton hook (-k); "
                                       "use «mode env» or «no-hook»"))
    if params.device == "cpu":
        found.append(Finding("refuse", "«device» cpu runs the Triton interpreter, which Proton cannot profile: "
                                       "«no-profile» runs the payload alone, or «cpu check» checks it in seconds"))
    elif not info.gpu_vendor:
        instead = ("«no-profile» runs the command alone" if params.command else
                   "«cpu check» checks the payload through the Triton interpreter in seconds")
        found.append(Finding("refuse", f"{info.python} sees no GPU, and Proton profiles only on one: {instead}"))
    return found


def _instrumentation_rules(params: RunParams, info: InterpreterInfo) -> list[Finding]:
    """Warp sampling, buffer size and granularity: what the workload's Proton takes, and where it loses data."""
    if not (params.warps or params.buffer_size or params.granularity != "warp"):
        return []
    if params.backend != "instrumentation":
        return [Finding("refuse", "instrumentation options («warps», «buffer size», granularity) apply to the "
                                  "instrumentation backend only: use «backend instrumentation»")]
    found = []
    if params.granularity != "warp":
        whose = f"Triton {info.triton_version}'s Proton" if info.triton_version is not None else "Proton"
        found.append(Finding("refuse", f"granularity {params.granularity}: {whose} compiles only granularity warp "
                                       "(\"granularity must be warp for now\", in 3.6.0, 3.7.1 and 3.9.0 alike: "
                                       "refused on every Triton version); use «granularity warp»"))
    if params.mode == "cli" and info.triton_version is not None and not info.triton_at_least(MODE_FLAG_SINCE):
        found.append(Finding("refuse", f"Proton's command line in Triton {info.triton_version} ignores -m (it parses "
                                       f"it and does not pass it on before {MODE_FLAG_SINCE}): warp sampling and "
                                       "buffer size need «mode env» (the payload starts Proton with them)"))
    if params.payload is None:
        beyond = [warp for warp in params.warps if warp >= PAYLOAD_WARPS]
        if beyond:
            found.append(Finding("refuse", f"warp {beyond[0]}: the payload's kernel runs {PAYLOAD_WARPS} warps per CTA "
                                           f"(0-{PAYLOAD_WARPS - 1}); Proton raises \"Invalid sampling warp id\""))
        recorded = len(params.warps) or PAYLOAD_WARPS
        if params.buffer_size and recorded & (recorded - 1):
            found.append(Finding("refuse", f"«warps» {','.join(map(str, params.warps))} records {recorded} warps of "
                                           "each CTA: with a «buffer size» given, Proton's compiler pass fails "
                                           "(\"PassManager::run failed\") unless the warps recorded are a power of "
                                           "two; record 1, 2 or 4 warps, or leave the buffer size at 0"))
        needed = recorded * PAYLOAD_WARP_BYTES
        if params.buffer_size and params.buffer_size < needed and not beyond:
            found.append(Finding("warn", f"a {params.buffer_size}-byte buffer drops events: each recorded warp writes "
                                         f"{PAYLOAD_WARP_BYTES} bytes per launch of the payload's scoped kernel, so "
                                         f"{recorded} warps need at least {needed} bytes (Proton then warns that "
                                         "events are dropped, and the tree loses scopes)"))
    return found


def version_between(info: InterpreterInfo, low: str, high: str) -> bool:
    """low <= Triton version < high."""
    return info.triton_at_least(low) and not info.triton_at_least(high)
