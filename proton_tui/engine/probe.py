"""Probe the workload's interpreter (not the TUI's): Python, Triton, torch and GPU, asked once and cached.

The full probe imports torch (seconds). Its answer is also kept on disk, keyed by the interpreter's path, the
host, its boot and the GPU-pinning variables, together with the modification times of what it depends on (the
interpreter, torch's and Triton's packages, every folder on its sys.path). Checking those times is a few stat
calls, no process: a change to any of them (an upgrade, a new install) probes again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from proton_tui.cache import cache_home

PROBE_SCRIPT = r"""
import json, os, sys
info = {"executable": sys.executable, "python_version": sys.version.split()[0]}
try:
    import triton
    info["triton_version"] = triton.__version__
except Exception as error:
    info["triton_error"] = f"{type(error).__name__}: {error}"
try:
    import triton.profiler
    info["has_proton"] = True
except Exception:
    info["has_proton"] = False
try:
    import torch
    info["torch_version"] = torch.__version__
    if torch.cuda.is_available():
        info["gpu_vendor"] = "amd" if torch.version.hip else "nvidia"
        info["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        try:  # how NVML can find each device: its UUID, else its PCI bus id (older torch has neither)
            props = [torch.cuda.get_device_properties(i) for i in range(len(info["gpu_names"]))]
            info["gpu_uuids"] = [str(getattr(p, "uuid", "") or "") for p in props]
            info["gpu_pci_bus_ids"] = [f"{p.pci_domain_id:08X}:{p.pci_bus_id:02X}:{p.pci_device_id:02X}.0"
                                       if hasattr(p, "pci_bus_id") else "" for p in props]
        except Exception:
            pass
except Exception as error:
    info["torch_error"] = f"{type(error).__name__}: {error}"
depends_on = [sys.executable, *(getattr(sys.modules.get(name), "__file__", None) for name in ("triton", "torch"))]
depends_on += [path for path in sys.path if path and os.path.isdir(path)]
info["stamps"] = {path: os.stat(path).st_mtime_ns for path in depends_on if path}
print("proton-tui-answer " + json.dumps(info))
"""
# The line that carries a script's answer: a wrapper around the interpreter may print before or after it.
ANSWER_MARK = "proton-tui-answer "
CACHE_KEY_ENV = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "PYTHONPATH")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")


class ProbeError(Exception):
    """The interpreter could not be run or did not answer; the message is one line."""


@dataclass(frozen=True)
class InterpreterInfo:
    """What the workload's interpreter has. Versions are None where the module does not import."""

    python: str  # the interpreter as given
    executable: str = ""
    python_version: str = ""
    triton_version: str | None = None
    triton_error: str | None = None
    has_proton: bool = False
    torch_version: str | None = None
    torch_error: str | None = None
    gpu_vendor: str | None = None  # "nvidia", "amd", or None when no GPU is visible
    gpu_names: tuple[str, ...] = ()
    gpu_uuids: tuple[str, ...] = ()  # per device as torch gives it ("" where unknown); NVML finds a GPU by it
    gpu_pci_bus_ids: tuple[str, ...] = ()  # "00000000:18:00.0" ("" where unknown)

    @property
    def gpu_count(self) -> int:
        return len(self.gpu_names)

    def triton_at_least(self, version: str) -> bool:
        """Compare the release part only, so ``3.6.0+git1a2b`` counts as 3.6.0."""
        return self.triton_version is not None and version_tuple(self.triton_version) >= version_tuple(version)


def version_tuple(version: str) -> tuple[int, int, int]:
    """``3.8.0``, ``3.6.0+git1a2b``, ``3.7`` -> (3, 8, 0); an unparsable version sorts lowest."""
    match = VERSION_PATTERN.match(version.strip())
    if not match:
        return (0, 0, 0)
    return (int(match[1]), int(match[2]), int(match[3] or 0))


_cache: dict[str, InterpreterInfo] = {}
_stamps: dict[str, dict[str, int]] = {}  # what each cached answer depended on: a change there asks again
_probing: dict[str, threading.Lock] = {}  # one probe at a time per interpreter: a second caller waits, then reuses
_probing_guard = threading.Lock()


def probe_interpreter(python: str, *, timeout: float = 120.0, refresh: bool = False) -> InterpreterInfo:
    """Run ``python -c PROBE_SCRIPT`` once per interpreter path and cache the answer, asked again once what it
    depended on changed (a package installed in the interpreter since: torch or Triton). Raises ProbeError."""
    key = os.path.abspath(python) if os.sep in python else python
    with _probing_guard:
        lock = _probing.setdefault(key, threading.Lock())
    with lock:
        if refresh or key not in _cache or (key in _stamps and not _unchanged(_stamps[key])):
            _cache[key], stamps = _probe_via_disk_cache(python, timeout, refresh)
            if stamps:
                _stamps[key] = stamps
            else:
                _stamps.pop(key, None)
        return _cache[key]


def cache_dir() -> Path:
    return cache_home() / "probe"


def cache_entry(python: str) -> Path | None:
    """Where the probe of this interpreter, on this host, boot and GPU pinning, is kept; None when not found."""
    executable = shutil.which(python)
    if executable is None:
        return None
    boot = BOOT_ID.read_text().strip() if BOOT_ID.exists() else ""
    # unset and empty differ: CUDA_VISIBLE_DEVICES="" hides every GPU, unset shows them all
    pins = "\n".join(f"{var}={os.environ[var]}" if var in os.environ else f"{var} unset" for var in CACHE_KEY_ENV)
    script = hashlib.sha256(PROBE_SCRIPT.encode()).hexdigest()[:12]  # a changed probe asks again
    text = "\n".join([os.path.abspath(executable), socket.gethostname(), boot, pins, script])
    return cache_dir() / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"


def cache_state(python: str) -> str:
    """What the disk cache holds for this interpreter now, before any probe: "fresh" (a probe would be answered
    from it), "stale" (something it depends on changed: a probe runs again), "absent" (never probed here), or
    "unreadable" (an entry that cannot be read: probed again and rewritten)."""
    stored = cache_entry(python)
    if stored is None or not stored.is_file():
        return "absent"
    try:
        stamps = json.loads(stored.read_text())["stamps"]
    except (OSError, ValueError, TypeError, KeyError):
        return "unreadable"
    return "fresh" if _unchanged(stamps) else "stale"


def _unchanged(stamps: dict[str, int]) -> bool:
    """Whether every file and folder the probe depended on still has the modification time it had then."""
    try:
        return bool(stamps) and all(os.stat(path).st_mtime_ns == stamp for path, stamp in stamps.items())
    except OSError:
        return False


def _probe_via_disk_cache(python: str, timeout: float, refresh: bool) -> tuple[InterpreterInfo, dict[str, int]]:
    stored = cache_entry(python)
    if stored is not None and not refresh and stored.is_file():
        try:
            entry = json.loads(stored.read_text())
            if _unchanged(entry["stamps"]):
                fields = entry["info"]
                return InterpreterInfo(**{**fields, **_tuples(fields), "python": python}), entry["stamps"]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            pass  # an unreadable entry is probed again and rewritten
    info, stamps = _run_probe(python, timeout)
    if stored is not None:
        try:
            stored.parent.mkdir(parents=True, exist_ok=True)
            temporary = stored.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps({"info": dataclasses.asdict(info), "stamps": stamps}))
            temporary.replace(stored)
        except OSError:
            pass  # a read-only home still works, only slower
    return info, stamps


def _run_probe(python: str, timeout: float) -> tuple[InterpreterInfo, dict[str, int]]:
    """The interpreter's answer, and the modification times of what that answer depends on."""
    try:
        result = subprocess.run([python, "-c", PROBE_SCRIPT], stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, errors="replace", timeout=timeout)
    except FileNotFoundError:
        raise ProbeError(f"interpreter {python!r} not found") from None
    except PermissionError:
        raise ProbeError(f"interpreter {python!r} is not executable") from None
    except subprocess.TimeoutExpired:
        raise ProbeError(f"interpreter {python!r} did not answer within {timeout:.0f} s") from None
    fields = read_answer(result.stdout)
    if fields is None:
        last_error = (result.stderr.strip().splitlines() or [f"exit code {result.returncode}"])[-1]
        raise ProbeError(f"interpreter {python!r} is not a working Python: {last_error}")
    stamps = fields.pop("stamps", {})
    return InterpreterInfo(python=python, **{**fields, **_tuples(fields)}), stamps


def read_answer(stdout: str) -> dict | None:
    """The JSON object on the last ``ANSWER_MARK`` line a script printed; None without one."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(ANSWER_MARK):
            try:
                answer = json.loads(line[len(ANSWER_MARK):])
            except json.JSONDecodeError:
                return None
            return answer if isinstance(answer, dict) else None
    return None


def _tuples(fields: dict) -> dict:
    return {key: tuple(fields.get(key) or ()) for key in ("gpu_names", "gpu_uuids", "gpu_pci_bus_ids")}
