"""The facts that decide whether Proton works here (pure over recorded readings): interpreter, GPU, driver, the
profiler libraries as the interpreter loads them, counters restricted to admins, ``*_VISIBLE_DEVICES``,
``TRITON_PROTON_DISABLE``, the probe's cache; each wrong one with its remedy. ``read_host`` and ``probe_libraries``
take the readings."""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from proton_tui.engine.classify import LIBRARY_REMEDY
from proton_tui.engine.payload import install_command
from proton_tui.engine.probe import InterpreterInfo, read_answer
from proton_tui.engine.rules import BACKEND_SINCE, cli_words
from proton_tui.records import Fact

LIBRARY_TIMEOUT_S = 60.0
LIBRARY_SCRIPT = "libraries.py"  # run by the workload's interpreter: where its profiler libraries load from


@dataclass(frozen=True)
class HostReadings:
    """What the host says, read in proton-tui's own process: no interpreter needed."""

    nvidia_version: str | None  # /proc/driver/nvidia/version
    nvidia_params: str | None  # /proc/driver/nvidia/params
    amdgpu_version: str | None  # /sys/module/amdgpu/version; "" when the module is loaded without one
    euid: int




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
    ``LIBRARY_SCRIPT`` (``probe_libraries``); ``cache`` a ``probe.cache_state`` (or "unwritable")."""
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
                    cli_words(f"{install_command(info.python)}, or name another interpreter («python»)"))
    if not info.has_proton:
        return Fact("interpreter", "fail", f"{python}: Triton {info.triton_version} was built without Proton "
                                           "(triton.profiler does not import)",
                    "install a Triton wheel from PyPI (it ships Proton), or a build with TRITON_BUILD_PROTON=ON")
    if info.torch_version is None:
        return Fact("interpreter", "fail", f"{python}: torch does not import: {info.torch_error}",
                    f"{install_command(info.python)}: the payload needs it")
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
    """The interpreter's answer to ``LIBRARY_SCRIPT`` (this package's libraries.py, run as ``python -c`` with its
    text); {"error": …} when it gave none."""
    script = resources.files(__package__).joinpath(LIBRARY_SCRIPT).read_text()
    try:
        result = subprocess.run([python, "-c", script], stdin=subprocess.DEVNULL, capture_output=True,
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
