"""Box diagnostics for the Triton/Proton stack: what the workload interpreter's Triton promises, proved.

``plan_doctor`` (probe the interpreter, read the host, ask the interpreter which profiler libraries it can load,
plan the matrix; nothing is captured) -> ``execute_doctor`` (one short capture per cell the rules let run, in
parallel, each in its own process group and run folder under ``<output>/<timestamp>-doctor/``, judged as any run
is, then ``doctor.json``). Never imports Textual.

* The matrix (``plan_matrix``, pure): every backend × context × output (the tree as ``hatchet`` or
  ``hatchet_msgpack``, or a ``chrome_trace``) × mode the interpreter's Triton offers (``BACKEND_SINCE``,
  ``DATA_SINCE``, ``FORMAT_SINCE``). A cell the rules refuse (another vendor's backend, a version's CLI limits) is
  expected "refused" with the rules' reasons and is not run; every other cell is expected to work and to record
  ``time (ns)`` (``cycles`` for the instrumentation backend, which runs the payload's scoped kernel).
* Proved (``judge_cell``): the run's verdict from the capture engine (``decide_verdict``: the payload's PASS, a
  capture, not empty), then the capture's metric against the one expected.
* The facts (``environment_facts``, pure over recorded readings): interpreter, GPU, driver, the profiler libraries
  as the interpreter loads them, counters restricted to admins, ``*_VISIBLE_DEVICES``, ``TRITON_PROTON_DISABLE``,
  the probe's cache; each wrong one with its remedy.
* Without a GPU there is no matrix: the payload runs once through the Triton interpreter instead (the CPU check).

Exit codes (``DoctorReport.exit_code``): 0 every cell works as the version promises and no fact failed; 1 a cell
or a fact failed; 3 no GPU (profiling not checked) and nothing failed; 2, a usage error, is raised before anything
runs (ParamError, ProbeError).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .. import JSON_SCHEMA, __version__
from ..console import printable
from ..formatting import counted
from ..records import InterpreterRecord
from .check import CPU_ITERS, CPU_SIZE
from .classify import LIBRARY_REMEDY, Outcome, Verdict
from .command import Command
from .params import BACKENDS, CONTEXTS, MODES, ParamError, RunParams, parse_count, parse_timeout, whole_number
from .payload import payload_path
from .probe import InterpreterInfo, cache_dir, cache_state, probe_interpreter, read_answer
from .rules import BACKEND_SINCE, DATA_SINCE, FORMAT_SINCE, check_rules, resolve_backend
from .rundir import DEFAULT_OUTPUT, RUN_JSON, STDOUT_LOG, create_run_dir, write_json
from .session import RunPlan, RunResult, execute_run

DOCTOR_SIZE = 4096  # elements per cell's payload: a capture needs a kernel, not bandwidth
DOCTOR_ITERS = 2
CELL_TIMEOUT_S = 180.0  # per cell: the first compile of the scoped kernel included
DEFAULT_JOBS = 16  # at most, by default: each cell holds an interpreter with torch and a CUDA context
MAX_JOBS = 64  # cells at once: a whole matrix fits (5 backends × 2 contexts × 3 outputs × 2 modes = 60 at most)
DOCTOR_JSON = "doctor.json"
NO_GPU_EXIT = 3
# The outputs a Triton version offers: (Proton's data, the tree's format in RunParams), by the name of the file kind.
OUTPUTS = {"hatchet": ("tree", "hatchet"), "hatchet_msgpack": ("tree", "hatchet_msgpack"),
           "chrome_trace": ("trace", "hatchet")}
METRIC_OF_UNIT = {"ns": "time (ns)", "cycles": "cycles"}
CPU_CHECK = "cpu"  # the kind of the cell that runs the payload through the Triton interpreter
LIBRARY_TIMEOUT_S = 60.0

# Run by the workload's interpreter: where Proton would load its profiler libraries from, and whether they load.
# It finds Triton's folder without importing Triton (fast, no GPU driver touched) and mirrors Proton's lookup:
# <TRITON_CUPTI_LIB_PATH or triton/backends/nvidia/lib/cupti>/libcupti.so, and the ROCm libraries by their
# unversioned names (or TRITON_*_LIB_PATH / TRITON_*_LIBRARY).
LIBRARY_SCRIPT = r"""
import ctypes, importlib.util, json, os
answer = {"triton_dir": None, "libraries": []}
try:
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.origin:
        answer["triton_dir"] = os.path.dirname(spec.origin)
except Exception as error:
    answer["error"] = f"{type(error).__name__}: {error}"
def check(name, folder, library, source):
    path = os.path.join(folder, library) if folder else library
    entry = {"name": name, "path": path, "source": source, "exists": os.path.exists(path) if folder else None,
             "loads": False, "error": None}
    try:
        ctypes.CDLL(path)
        entry["loads"] = True
    except OSError as error:
        entry["error"] = str(error)
    answer["libraries"].append(entry)
root = answer["triton_dir"]
cupti = os.environ.get("TRITON_CUPTI_LIB_PATH")
if cupti or root:
    check("cupti", cupti or os.path.join(root, "backends", "nvidia", "lib", "cupti"), "libcupti.so",
          "TRITON_CUPTI_LIB_PATH" if cupti else "bundled")
for name, prefix, library in (("roctracer", "TRITON_ROCTRACER", "libroctracer64.so"),
                              ("rocprofiler-sdk", "TRITON_ROCPROFILER_SDK", "librocprofiler-sdk.so")):
    folder = os.environ.get(prefix + "_LIB_PATH")
    chosen = os.environ.get(prefix + "_LIBRARY")
    source = prefix + "_LIB_PATH" if folder else prefix + "_LIBRARY" if chosen else "default"
    check(name, folder, chosen or library, source)
print("proton-tui-answer " + json.dumps(answer))
"""


# --- the matrix (pure) ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One configuration to prove: what the version's rules expect of it, and the run that proves it."""

    backend: str
    context: str
    data: str  # "tree" or "trace"
    format: str  # the file: "hatchet", "hatchet_msgpack" or "chrome_trace"
    mode: str
    expected: str  # "works" or "refused"
    metric: str | None  # the metric key the capture must hold ("time (ns)", "cycles"); None when not profiled
    reasons: tuple[str, ...] = ()  # why the rules refuse it (as command-line advice)
    resolved: str | None = None  # the backend Proton will use
    params: RunParams | None = None  # None for a cell read back from doctor.json
    kind: str = "capture"  # or CPU_CHECK

    @property
    def key(self) -> str:
        """The cell in one word, as the live output and doctor.json name it."""
        if self.kind == CPU_CHECK:
            return "cpu-check"
        return f"{self.backend}/{self.context}/{self.format}/{self.mode}"

    @property
    def backend_text(self) -> str:
        if self.kind == CPU_CHECK:
            return "none (CPU)"
        return f"auto → {self.resolved}" if self.backend == "auto" and self.resolved else self.backend

    @property
    def expected_text(self) -> str:
        return "refused" if self.expected == "refused" else self.metric or "PASS"


def offered(info: InterpreterInfo) -> tuple[list[str], list[str]]:
    """The backends (auto first) and outputs the interpreter's Triton offers."""
    backends = [b for b in BACKENDS if b == "auto" or info.triton_at_least(BACKEND_SINCE[b])]
    outputs = ["hatchet"]
    if info.triton_at_least(FORMAT_SINCE["hatchet_msgpack"]):
        outputs.append("hatchet_msgpack")
    if info.triton_at_least(DATA_SINCE["trace"]):
        outputs.append("chrome_trace")
    return backends, outputs


def plan_matrix(info: InterpreterInfo, *, gpu: int = 0, size: int = DOCTOR_SIZE, iters: int = DOCTOR_ITERS,
                output: Path = DEFAULT_OUTPUT, timeout: float | None = CELL_TIMEOUT_S,
                environ: Mapping[str, str] | None = None, backend: str | None = None, context: str | None = None,
                mode: str | None = None) -> list[Cell]:
    """Every cell the interpreter's Triton offers on GPU ``gpu`` (narrowed by ``backend``, ``context``, ``mode``),
    each expected to work or refused with the rules' reasons. Empty without a GPU. Pure: nothing runs."""
    if not info.gpu_count:
        return []
    environ = {} if environ is None else environ
    backends, outputs = offered(info)
    cells = []
    for backend_ in backends:
        for context_ in CONTEXTS:
            for output_ in outputs:
                for mode_ in MODES:
                    if (backend, context, mode) != (None, None, None) and (
                            backend not in (None, backend_) or context not in (None, context_)
                            or mode not in (None, mode_)):
                        continue
                    data, tree_format = OUTPUTS[output_]
                    name = f"{backend_}-{context_}-{output_.replace('_', '-')}-{mode_}"
                    params = RunParams(size=size, iters=iters, backend=backend_, context=context_, mode=mode_,
                                       data=data, output_format=tree_format, python=info.python, device=gpu,
                                       output=output, name=name, timeout=timeout)
                    refusals = tuple(f.message for f in check_rules(params, info, environ) if f.refuses)
                    metric = None if refusals else "cycles" if backend_ == "instrumentation" else "time (ns)"
                    cells.append(Cell(backend_, context_, data, output_, mode_, "refused" if refusals else "works",
                                      metric, refusals, resolve_backend(backend_, info), params))
    return cells


def cpu_cell(info: InterpreterInfo, output: Path = DEFAULT_OUTPUT, timeout: float | None = CELL_TIMEOUT_S,
             environ: Mapping[str, str] | None = None) -> Cell:
    """The payload through the Triton interpreter, unprofiled: what runs without a GPU."""
    params = RunParams(size=CPU_SIZE, iters=CPU_ITERS, python=info.python, device="cpu", profile=False,
                       output=output, name="cpu-check", timeout=timeout)
    refusals = tuple(f.message for f in check_rules(params, info, {} if environ is None else environ) if f.refuses)
    return Cell("none", "-", "-", "-", "-", "refused" if refusals else "works", None, refusals, None, params,
                kind=CPU_CHECK)


# --- judging a finished cell (pure) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Judgement:
    proved: str  # "PASS", an Outcome value, "wrong metric"
    ok: bool
    message: str
    metric: str | None  # the metric the capture holds, as its key
    remedy: str | None


OUTCOME_REMEDIES = {
    Outcome.NO_CAPTURE: "Proton wrote no file: the cell's log shows where it stopped",
    Outcome.PAYLOAD_ERROR: "the payload failed under this configuration: the cell's log has the error",
    Outcome.BAD_CAPTURE: "Proton wrote a file proton-tui cannot read: the cell's log and the file show why",
    Outcome.TIMED_OUT: "the run did not end in time: raise --timeout, or look at the cell's log for a hang",
    Outcome.FAIL: "the kernel's result is wrong under this configuration: the cell's log has max_abs_err",
}


def judge_cell(cell: Cell, verdict: Verdict, unit: str | None) -> Judgement:
    """A run's verdict and its capture's unit ("ns", "cycles", None without a capture) against what the cell
    expects."""
    metric = METRIC_OF_UNIT.get(unit or "")
    if not verdict.passed:
        remedy = "; ".join(verdict.hints) or OUTCOME_REMEDIES.get(verdict.outcome)
        return Judgement(verdict.outcome.value, False, verdict.message, metric, remedy)
    if cell.metric is not None and metric != cell.metric:
        held = f"`{metric}`" if metric else "neither time nor cycles"
        return Judgement("wrong metric", False, f"the capture holds {held}, not `{cell.metric}`", metric,
                         f"Proton recorded with another backend than {cell.resolved or cell.backend}: the cell's "
                         "log says which")
    return Judgement("PASS", True, verdict.message, metric, None)


# --- the environment facts (pure over recorded readings) --------------------------------------------------------
@dataclass(frozen=True)
class HostReadings:
    """What the host says, read in proton-tui's own process: no interpreter needed."""

    nvidia_version: str | None  # /proc/driver/nvidia/version
    nvidia_params: str | None  # /proc/driver/nvidia/params
    amdgpu_version: str | None  # /sys/module/amdgpu/version; "" when the module is loaded without one
    euid: int


@dataclass(frozen=True)
class Fact:
    """One thing that decides whether Proton works here: ``state`` ok, warn, fail or info; a remedy when wrong."""

    name: str
    state: str
    value: str
    remedy: str | None = None


def read_host() -> HostReadings:
    def text(path: str) -> str | None:
        try:
            return Path(path).read_text(errors="replace")
        except OSError:
            return None

    amd = text("/sys/module/amdgpu/version")
    if amd is None and Path("/sys/module/amdgpu").is_dir():
        amd = ""
    return HostReadings(text("/proc/driver/nvidia/version"), text("/proc/driver/nvidia/params"),
                        None if amd is None else amd.strip(), os.geteuid())


HIDING_VALUES = ("", "-1")
VISIBLE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
TRUE_WORDS = ("1", "true", "yes", "on", "y")
ADMIN_ONLY = re.compile(r"^RmProfilingAdminOnly:\s*(\d+)", re.M)
NVIDIA_MODULE = re.compile(r"Kernel Module\b.*?\s(\d+(?:\.\d+)+)(?:\s|$)")
CACHE_FACTS = {
    "fresh": ("ok", "answered from its cache (no interpreter started)", None),
    "stale": ("info", "probed again: the interpreter or its packages changed since the last probe", None),
    "absent": ("info", "first probe of this interpreter on this host and boot: cached now", None),
    "unreadable": ("warn", "its cache entry could not be read: probed again",
                   "make $XDG_CACHE_HOME/proton-tui (default ~/.cache/proton-tui) readable and writable"),
    "unwritable": ("warn", "its answer could not be cached: every start probes again (seconds)",
                   "make $XDG_CACHE_HOME/proton-tui (default ~/.cache/proton-tui) writable"),
}


def environment_facts(info: InterpreterInfo, libraries: dict, host: HostReadings, environ: Mapping[str, str],
                      cache: str) -> list[Fact]:
    """Every fact, in the order a person checks them. ``libraries`` is the interpreter's answer to
    ``LIBRARY_SCRIPT``; ``cache`` a ``probe.cache_state`` (or "unwritable")."""
    facts = [_interpreter_fact(info), _gpu_fact(info, host, environ), _driver_fact(info, host)]
    facts += _library_facts(info, libraries)
    if (counters := _counters_fact(info, host)) is not None:
        facts.append(counters)
    facts.append(_visible_fact(info, environ))
    if environ.get("TRITON_PROTON_DISABLE", "").strip().lower() in TRUE_WORDS:
        facts.append(Fact("TRITON_PROTON_DISABLE", "fail",
                          f"TRITON_PROTON_DISABLE={environ['TRITON_PROTON_DISABLE']}: Proton records nothing",
                          "unset TRITON_PROTON_DISABLE"))
    state, value, remedy = CACHE_FACTS.get(cache, ("info", cache, None))
    facts.append(Fact("probe cache", state, value, remedy))
    return facts


def _interpreter_fact(info: InterpreterInfo) -> Fact:
    python = f"Python {info.python_version}" if info.python_version else info.python
    if info.triton_version is None:
        return Fact("interpreter", "fail", f"{python}: triton does not import: {info.triton_error}",
                    f"install triton in {info.python}, or name another interpreter (--python)")
    if not info.has_proton:
        return Fact("interpreter", "fail", f"{python}: Triton {info.triton_version} was built without Proton "
                                           "(triton.profiler does not import)",
                    "install a Triton wheel from PyPI (it ships Proton), or a build with TRITON_BUILD_PROTON=ON")
    if info.torch_version is None:
        return Fact("interpreter", "fail", f"{python}: torch does not import: {info.torch_error}",
                    f"install torch in {info.python}: the payload needs it")
    return Fact("interpreter", "ok", f"{python} · Triton {info.triton_version} with Proton · torch "
                                     f"{info.torch_version}")


def _gpu_fact(info: InterpreterInfo, host: HostReadings, environ: Mapping[str, str]) -> Fact:
    if info.gpu_count:
        names = Counter(info.gpu_names)
        listed = ", ".join(f"{count} × {name}" if count > 1 else name for name, count in names.items())
        return Fact("GPU", "ok", f"{info.gpu_vendor.upper()}: {listed}")
    hidden = [var for var in VISIBLE_VARIABLES if environ.get(var, "unset").strip() in HIDING_VALUES]
    torch = info.torch_version or ""
    if info.torch_version is None:
        remedy = "torch does not import, so no GPU can be seen: install torch"
    elif hidden:
        remedy = f"{hidden[0]}={environ[hidden[0]]!r} hides every GPU: unset it"
    elif "+cpu" in torch:
        remedy = f"torch {torch} is a CPU build: install a CUDA or ROCm build of torch in {info.python}"
    elif host.nvidia_version is not None or host.amdgpu_version is not None:
        remedy = ("a GPU driver is loaded but torch sees no GPU: check that torch's CUDA/ROCm version suits the "
                  "driver and that the device files (/dev/nvidia*, /dev/kfd) are there")
    else:
        remedy = ("no GPU driver is loaded: on a GPU box install the NVIDIA or ROCm driver (nvidia-smi or "
                  "rocm-smi lists the GPUs)")
    return Fact("GPU", "warn", "none visible to the interpreter: Proton profiles only on a GPU", remedy)


def _driver_fact(info: InterpreterInfo, host: HostReadings) -> Fact:
    if host.nvidia_version is not None and info.gpu_vendor != "amd":
        found = NVIDIA_MODULE.search(host.nvidia_version)
        first = found[1] if found else (host.nvidia_version.strip().splitlines() or [""])[0]
        return Fact("driver", "ok", f"NVIDIA {first}".strip())
    if host.amdgpu_version is not None and info.gpu_vendor != "nvidia":
        return Fact("driver", "ok", f"amdgpu {host.amdgpu_version}" if host.amdgpu_version else
                    "amdgpu (the kernel's own: no version file)")
    if info.gpu_vendor == "nvidia":
        return Fact("driver", "info", "/proc/driver/nvidia/version is not readable here (a container?)")
    if info.gpu_vendor == "amd":
        return Fact("driver", "info", "/sys/module/amdgpu is not readable here (a container?)")
    return Fact("driver", "info", "no NVIDIA or AMD GPU driver loaded")


def _library_facts(info: InterpreterInfo, libraries: dict) -> list[Fact]:
    if libraries.get("error") and not libraries.get("libraries"):
        return [Fact("libraries", "fail", f"could not be checked: {libraries['error']}",
                     f"run {info.python} -c 'import triton' to see why")]
    entries = {entry["name"]: entry for entry in libraries.get("libraries", [])}
    wanted = []
    if info.gpu_vendor in ("nvidia", None):
        wanted.append(("cupti", "CUPTI"))
    if info.gpu_vendor == "amd":
        wanted.append(("roctracer", "roctracer"))
        if info.triton_at_least(BACKEND_SINCE["rocprofiler"]):
            wanted.append(("rocprofiler-sdk", "rocprofiler-sdk"))
    facts = []
    for key, name in wanted:
        entry = entries.get(key)
        if entry is None:
            if key == "cupti" and info.gpu_vendor is None and libraries.get("triton_dir") is None:
                continue  # no Triton, no GPU: nothing to say about CUPTI
            facts.append(Fact(name, "fail" if info.gpu_vendor else "info", "not looked for: Triton's folder was "
                                                                           "not found",
                              f"install Triton for that interpreter: {info.python} -m pip install triton"
                              if info.gpu_vendor else None))
            continue
        facts.append(_library_fact(info, name, entry))
    return facts


def _library_fact(info: InterpreterInfo, name: str, entry: dict) -> Fact:
    source = {"bundled": "bundled with Triton", "default": "by its name, as Proton loads it"}.get(
        entry["source"], f"from {entry['source']}")
    where = f"{entry['path']} ({source})"
    if entry["loads"]:
        return Fact(name, "ok", f"{where} loads")
    missing = entry.get("exists") is False
    problem = f"{where} {'is missing' if missing else 'does not load: ' + str(entry.get('error'))}"
    if name == "CUPTI":
        remedy = ("Proton loads libcupti.so from that folder: set TRITON_CUPTI_LIB_PATH to a folder that has it "
                  "(a CUDA toolkit's extras/CUPTI/lib64), or reinstall the Triton wheel")
    else:
        variable = "TRITON_ROCTRACER_LIB_PATH" if name == "roctracer" else "TRITON_ROCPROFILER_SDK_LIB_PATH"
        remedy = f"{LIBRARY_REMEDY}; or set {variable} to the folder that has it"
    if not info.gpu_vendor:
        state = "info"
    elif name == "rocprofiler-sdk":
        state, problem = "warn", problem + ": backend auto falls back to roctracer; backend rocprofiler fails"
    else:
        state = "fail"
    return Fact(name, state, problem, remedy)


def _counters_fact(info: InterpreterInfo, host: HostReadings) -> Fact | None:
    if info.gpu_vendor == "amd" or (host.nvidia_params is None and info.gpu_vendor != "nvidia"):
        return None
    if host.nvidia_params is None:
        return Fact("profiling counters", "info", "/proc/driver/nvidia/params could not be read: whether profiling "
                                                  "counters are restricted to admins is unknown")
    found = ADMIN_ONLY.search(host.nvidia_params)
    if found is None:
        return Fact("profiling counters", "info", "/proc/driver/nvidia/params has no RmProfilingAdminOnly here")
    if found[1] == "0":
        return Fact("profiling counters", "ok", "open to every user (RmProfilingAdminOnly: 0)")
    if host.euid == 0:
        return Fact("profiling counters", "ok", "restricted to admins (RmProfilingAdminOnly: 1); running as root")
    return Fact("profiling counters", "warn",
                f"restricted to admins (RmProfilingAdminOnly: {found[1]}) and this user is uid {host.euid}: kernel "
                "times (cupti) are unaffected; PC sampling and hardware counters fail "
                "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)",
                "as root: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' > "
                "/etc/modprobe.d/nvidia-profiling.conf, then reload the nvidia module (or reboot); or profile as root")


def _visible_fact(info: InterpreterInfo, environ: Mapping[str, str]) -> Fact:
    set_ = {var: environ[var] for var in VISIBLE_VARIABLES if var in environ}
    if info.gpu_vendor == "amd":
        wrong = [var for var in ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") if var in set_]
        if wrong:
            return Fact("visible devices", "warn",
                        f"{', '.join(f'{var}={set_[var]}' for var in wrong)}: Triton raises ValueError with it on "
                        "AMD (proton-tui removes it for its runs)",
                        f"unset {' and '.join(wrong)}; pin GPUs with ROCR_VISIBLE_DEVICES")
    # CUDA reads only its own variable; the HIP runtime all three; without a GPU any of them may be why
    hiding = [var for var, value in set_.items() if value.strip() in HIDING_VALUES
              and (info.gpu_vendor != "nvidia" or var == "CUDA_VISIBLE_DEVICES")]
    if hiding:
        return Fact("visible devices", "warn", f"{hiding[0]}={set_[hiding[0]]!r} hides every GPU",
                    f"unset {hiding[0]}")
    if not set_:
        return Fact("visible devices", "info", "none set: the interpreter sees every GPU")
    return Fact("visible devices", "info", ", ".join(f"{var}={value}" for var, value in set_.items()))


def probe_libraries(python: str, timeout: float = LIBRARY_TIMEOUT_S) -> dict:
    """The interpreter's answer to LIBRARY_SCRIPT; {"error": …} when it gave none."""
    try:
        result = subprocess.run([python, "-c", LIBRARY_SCRIPT], stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, errors="replace", timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"error": f"{type(error).__name__}: {error}", "libraries": []}
    answer = read_answer(result.stdout)
    if answer is None or not isinstance(answer.get("libraries"), list):
        last = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[-1]
        return {"error": last, "libraries": []}
    answer["libraries"] = [entry for entry in answer["libraries"] if isinstance(entry, dict)
                           and {"name", "path", "source", "loads"} <= entry.keys()]
    return answer


# --- planning and running -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DoctorPlan:
    info: InterpreterInfo
    facts: tuple[Fact, ...]
    cells: tuple[Cell, ...]  # the matrix, or the CPU check alone without a GPU
    gpu: int | None  # the GPU the cells run on; None without one
    output: Path
    jobs: int

    @property
    def has_gpu(self) -> bool:
        return self.gpu is not None


def plan_doctor(python: str, *, gpu: str | int = 0, jobs: str | int | None = None,
                output: str | Path = DEFAULT_OUTPUT, timeout: str | float | None = CELL_TIMEOUT_S,
                backend: str | None = None, context: str | None = None, mode: str | None = None,
                environ: Mapping[str, str] | None = None, host: HostReadings | None = None) -> DoctorPlan:
    """Check the options, probe the interpreter, read the host and the libraries, plan the cells. Nothing is
    captured. Raises ParamError (a bad option, named) or ProbeError."""
    environ = os.environ if environ is None else environ
    index = whole_number(str(gpu))
    if index is None:
        raise ParamError("--gpu", f"{gpu!r} is not a GPU index (0, 1, …)")
    count = parse_count("--jobs", jobs if jobs is not None else min(os.cpu_count() or 1, DEFAULT_JOBS))
    if count > MAX_JOBS:
        raise ParamError("--jobs", f"{count} is more than {MAX_JOBS}")
    timeout = parse_timeout(timeout)
    for flag, value, allowed in (("--backend", backend, BACKENDS), ("--context", context, CONTEXTS),
                                 ("--mode", mode, MODES)):
        if value is not None and value not in allowed:
            raise ParamError(flag, f"{value!r} is not one of {', '.join(allowed)}")
    before = cache_state(python)
    info = probe_interpreter(python)
    cache = "unwritable" if before != "fresh" and cache_state(python) != "fresh" and not _writable(cache_dir()) \
        else before
    facts = environment_facts(info, probe_libraries(python), host or read_host(), environ, cache)
    output = Path(output)
    if not info.gpu_count:
        return DoctorPlan(info, tuple(facts), (cpu_cell(info, output, timeout, environ),), None, output, count)
    if index >= info.gpu_count:
        raise ParamError("--gpu", f"GPU {index} is not visible: {python} sees {counted(info.gpu_count, 'GPU')}, "
                                  f"0..{info.gpu_count - 1}")
    cells = plan_matrix(info, gpu=index, output=output, timeout=timeout, environ=environ, backend=backend,
                        context=context, mode=mode)
    chosen = [(flag, value) for flag, value in (("--backend", backend), ("--context", context), ("--mode", mode))
              if value is not None]
    filters = " ".join(f"{flag} {value}" for flag, value in chosen)
    if not cells:  # the filters left nothing of what this Triton offers
        raise ParamError(chosen[0][0] if chosen else "--backend",
                         f"{filters} leaves no cell of Triton {info.triton_version}'s matrix (its backends: "
                         f"{', '.join(b for b, since in BACKEND_SINCE.items() if info.triton_at_least(since))})")
    if chosen and all(cell.expected == "refused" for cell in cells):  # nothing would be proved
        reasons = sorted({reason for cell in cells for reason in cell.reasons})
        raise ParamError(chosen[0][0], f"{filters} leaves only cells the rules refuse: {'; '.join(reasons)}")
    return DoctorPlan(info, tuple(facts), tuple(cells), index, output, count)


def _writable(folder: Path) -> bool:
    """Whether ``folder``, or the nearest folder above it that exists, can be written."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return os.access(candidate, os.W_OK)
    return False


@dataclass
class CellResult:
    """A cell and what proved it (or "not run" for a refused one)."""

    cell: Cell
    proved: str  # "PASS", an Outcome value, "wrong metric", "not run", "error", "cancelled"
    ok: bool
    message: str = ""
    metric: str | None = None
    remedy: str | None = None
    run_dir: str | None = None
    wall_s: float | None = None
    run: RunResult | None = field(default=None, repr=False, compare=False)

    @property
    def cancelled(self) -> bool:
        return self.proved == "cancelled"

    @property
    def failed(self) -> bool:
        """Proved not to work (a cell cancelled before it proved anything has not failed)."""
        return not self.ok and not self.cancelled

    @property
    def said(self) -> str:
        """What it proved and the message, without saying the outcome twice."""
        if not self.message or self.message.startswith(self.proved):
            return self.message or self.proved
        return f"{self.proved}: {self.message}"

    @property
    def log(self) -> str | None:
        return str(Path(self.run_dir) / STDOUT_LOG) if self.run_dir else None

    def to_json(self) -> dict:
        cell = self.cell
        return {"cell": cell.key, "kind": cell.kind, "backend": cell.backend, "backend_resolved": cell.resolved,
                "context": cell.context, "data": cell.data, "format": cell.format, "mode": cell.mode,
                "expected": cell.expected, "expected_metric": cell.metric, "reasons": list(cell.reasons),
                "proved": self.proved, "metric": self.metric, "ok": self.ok, "message": self.message,
                "remedy": self.remedy, "run_dir": self.run_dir, "stdout_log": self.log, "wall_s": self.wall_s}

    @classmethod
    def from_json(cls, record: dict) -> CellResult:
        cell = Cell(record["backend"], record["context"], record["data"], record["format"], record["mode"],
                    record["expected"], record.get("expected_metric"), tuple(record.get("reasons") or ()),
                    record.get("backend_resolved"), None, record.get("kind", "capture"))
        return cls(cell, record["proved"], bool(record["ok"]), record.get("message") or "", record.get("metric"),
                   record.get("remedy"), record.get("run_dir"), record.get("wall_s"))


def not_run(cell: Cell) -> CellResult:
    """A refused cell: as expected, the rules stop it before anything runs."""
    return CellResult(cell, "not run", True, "refused: " + "; ".join(cell.reasons))


@dataclass
class DoctorReport:
    python: str
    interpreter: dict
    facts: list[Fact]
    results: list[CellResult]
    gpu: int | None
    doctor_dir: str | None = None
    cancelled: bool = False

    @property
    def has_gpu(self) -> bool:
        return self.gpu is not None

    @property
    def failed_facts(self) -> list[Fact]:
        return [fact for fact in self.facts if fact.state == "fail"]

    @property
    def failed(self) -> list[CellResult]:
        return [result for result in self.results if result.failed]

    @property
    def ran(self) -> list[CellResult]:
        return [result for result in self.results if result.cell.expected == "works"]

    @property
    def exit_code(self) -> int:
        """0 all works, 1 something failed or the doctor was cancelled before the end, 3 no GPU (profiling not
        checked) with nothing failed."""
        if self.failed or self.failed_facts or self.cancelled:
            return 1
        return 0 if self.has_gpu else NO_GPU_EXIT

    def verdict(self) -> str:
        """The report in one line."""
        triton = self.interpreter.get("triton_version")
        ran, failed = self.ran, self.failed
        refused = len(self.results) - len(ran)
        if self.cancelled:
            proved = sum(result.ok for result in ran)
            fails = f", {len(failed)} failed" if failed else ""
            return f"CANCELLED: {proved} of {counted(len(ran), 'cell')} proved before the cancel{fails}"
        if not self.has_gpu:
            cpu = next(iter(ran), None)
            check = ("the interpreter check passed" if cpu is not None and cpu.ok else
                     "the interpreter check FAILED" if cpu is not None else "the interpreter check was refused")
            facts = f"; {counted(len(self.failed_facts), 'fact')} failed" if self.failed_facts else ""
            return f"no GPU: profiling not checked; {check}{facts}"
        parts = []
        if failed:
            parts.append(f"{len(failed)} of {counted(len(ran), 'cell')} failed")
        if self.failed_facts:
            parts.append(f"{counted(len(self.failed_facts), 'fact')} failed")
        if parts:
            return "FAIL: " + ", ".join(parts)
        return (f"PASS: {len(ran)} of {counted(len(ran), 'cell')} work as Triton {triton} promises; "
                f"{refused} refused by its rules")

    def to_json(self) -> dict:
        counts = Counter("refused" if r.cell.expected == "refused" else "passed" if r.ok else
                         "cancelled" if r.cancelled else "failed" for r in self.results)
        return {
            "schema": JSON_SCHEMA,
            "tool": f"proton-tui {__version__}",
            "python": self.python,
            "interpreter": self.interpreter,
            "gpu": self.gpu,
            "doctor_dir": self.doctor_dir,
            "facts": [asdict(fact) for fact in self.facts],
            "cells": [result.to_json() for result in self.results],
            "passed": counts["passed"],
            "failed": counts["failed"],
            "refused": counts["refused"],
            "cancelled_cells": counts["cancelled"],
            "cancelled": self.cancelled,
            "verdict": self.verdict(),
            "exit_code": self.exit_code,
        }

    @classmethod
    def from_json(cls, record: dict) -> DoctorReport:
        """A report read back from its doctor.json (the TUI shows it as it ended). Raises KeyError, TypeError."""
        return cls(record["python"], dict(record.get("interpreter") or {}),
                   [Fact(**fact) for fact in record["facts"]], [CellResult.from_json(c) for c in record["cells"]],
                   record.get("gpu"), record.get("doctor_dir"), bool(record.get("cancelled")))


def interpreter_record(info: InterpreterInfo) -> dict:
    return InterpreterRecord.of(info).to_json("python")


StartCallback = Callable[[Cell, Path, Command], None]
LinesCallback = Callable[[Cell, list[str]], None]
DoneCallback = Callable[[CellResult], None]


async def execute_doctor(plan: DoctorPlan, *, on_start: StartCallback | None = None,
                         on_lines: LinesCallback | None = None, on_done: DoneCallback | None = None,
                         stop: asyncio.Event | None = None, environ: Mapping[str, str] | None = None) -> DoctorReport:
    """Run every cell expected to work, at most ``plan.jobs`` at once, each in its own run folder under
    ``<output>/<timestamp>-doctor/`` (which also receives doctor.json). Refused cells are reported at once, not run.
    ``stop`` ends the runs under way and starts no other; cancelling the task ends them too and re-raises."""
    doctor_dir = create_run_dir(plan.output, "doctor")
    gate = asyncio.Semaphore(plan.jobs)
    stop = stop or asyncio.Event()

    async def one(cell: Cell) -> CellResult:
        if cell.expected == "refused":
            result = not_run(cell)
        else:
            async with gate:
                result = await _prove(cell, plan.info, doctor_dir, on_start, on_lines, stop, environ)
        if on_done:
            on_done(result)
        return result

    results = list(await asyncio.gather(*(one(cell) for cell in plan.cells)))
    report = DoctorReport(plan.info.python, interpreter_record(plan.info), list(plan.facts), results, plan.gpu,
                          str(doctor_dir), any(result.cancelled for result in results))
    write_json(doctor_dir / DOCTOR_JSON, report.to_json())
    return report


async def _prove(cell: Cell, info: InterpreterInfo, doctor_dir: Path, on_start: StartCallback | None,
                 on_lines: LinesCallback | None, stop: asyncio.Event,
                 environ: Mapping[str, str] | None) -> CellResult:
    if stop.is_set():
        return CellResult(cell, "cancelled", False, "cancelled before it started")
    params = replace(cell.params, output=doctor_dir)
    run_plan = RunPlan(params, info, (), cell.resolved, payload_path())
    try:
        run = await execute_run(run_plan, (lambda lines: on_lines(cell, lines)) if on_lines else None, stop=stop,
                                on_start=(lambda run_dir, command: on_start(cell, run_dir, command)) if on_start
                                else None, environ=environ)
    except asyncio.CancelledError:
        raise
    except Exception as error:  # a cell that could not start is that cell's failure, not the doctor's
        return CellResult(cell, "error", False, f"{type(error).__name__}: {error}")
    judged = judge_cell(cell, run.verdict, run.profile.unit if run.profile is not None else None)
    return CellResult(cell, judged.proved, judged.ok, judged.message, judged.metric, judged.remedy, str(run.run_dir),
                      round(run.process.wall_s, 3), run)


def read_cell_run(result: CellResult) -> RunResult | None:
    """A cell's run, in memory or read back from its run folder (for its log); None when it has none."""
    if result.run is not None or not result.run_dir:
        return result.run
    from .history import StoredRun

    path = Path(result.run_dir)
    try:
        record = json.loads((path / RUN_JSON).read_text())
    except (OSError, ValueError):
        return None
    return StoredRun(path, "run", record if isinstance(record, dict) else None).run_result()


# --- text -------------------------------------------------------------------------------------------------------
TABLE_COLUMNS = ("BACKEND", "CONTEXT", "FORMAT", "MODE", "EXPECTED", "PROVED")  # the format says the data
STATE_WORDS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "info": "info"}


def table_rows(results: list[CellResult]) -> list[tuple[str, ...]]:
    """The cells that run, as plain strings: the table the CLI prints and the TUI shows."""
    return [cell_cells(result) for result in results]


def cell_cells(result: CellResult) -> tuple[str, ...]:
    cell = result.cell
    proved = "-" if result.proved == "not run" else result.proved
    if result.proved == "PASS" and result.metric:
        proved = f"PASS {result.metric}"
    return (cell.backend_text, cell.context, cell.format, cell.mode, cell.expected_text, proved)


def fact_lines(facts: list[Fact]) -> list[str]:
    width = max((len(fact.name) for fact in facts), default=0)
    lines = []
    for fact in facts:
        lines.append(f"  {STATE_WORDS.get(fact.state, fact.state):<4}  {fact.name:<{width}}  {fact.value}")
        if fact.remedy:
            lines.append(f"  {'':<4}  {'':<{width}}  → {fact.remedy}")
    return lines


def refusal_lines(results: list[CellResult]) -> list[str]:
    """Each reason the rules gave, once, with how many cells it refused."""
    reasons = Counter(reason for result in results if result.cell.expected == "refused"
                      for reason in result.cell.reasons)
    return [f"  {counted(count, 'cell')}: {reason}" for reason, count in reasons.items()]


def failure_lines(results: list[CellResult]) -> list[str]:
    lines = []
    for result in results:
        if result.failed:
            lines.append(f"  {result.cell.key}: {result.said}")
            if result.remedy:
                lines.append(f"    → {result.remedy}")
            if result.log:
                lines.append(f"    log: {result.log}")
    return lines


def format_report(report: DoctorReport) -> str:
    """The plain-text report: the facts, the matrix (or the CPU check), refusals, failures, the verdict."""
    info = report.interpreter
    lines = [f"doctor: {report.python}", "", "environment", *fact_lines(report.facts), ""]
    running = [result for result in report.results if result.cell.expected == "works"]
    if report.has_gpu:
        lines.append(f"captures on GPU {report.gpu} ({DOCTOR_SIZE} elements × {DOCTOR_ITERS + 1} launches each), "
                     f"expected from Triton {info.get('triton_version')}'s rules")
        cells = [TABLE_COLUMNS, *table_rows(running)]
        widths = [max(len(row[i]) for row in cells) for i in range(len(TABLE_COLUMNS))]
        lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in cells]
        if refused := refusal_lines(report.results):
            lines += ["", f"refused by the rules for Triton {info.get('triton_version')} (not run):", *refused]
    else:
        lines.append("no GPU: profiling not checked")
        for result in report.results:
            lines.append("CPU check (the payload through the Triton interpreter, no profile): "
                         + (result.proved if result.ok else result.said))
    if failures := failure_lines(report.results):
        lines += ["", "failures:", *failures]
    lines += ["", f"doctor: {report.verdict()}"]
    if report.doctor_dir:
        lines.append(f"doctor folder: {report.doctor_dir}")
    return "\n".join(printable(line) for line in lines) + "\n"  # paths and library errors are data
