"""What a capture run is asked to do, validated before anything runs: the one table of run parameters (`PARAMS`),
which `RunParams`, the options of `proton-tui run` and the fields of the form all read."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proton_tui.engine.rundir import DEFAULT_OUTPUT
from proton_tui.engine.sizes import CPU_ITERS, CPU_SIZE, GPU_ITERS, RUN_SIZE

BACKENDS = ("auto", "cupti", "roctracer", "rocprofiler", "instrumentation")
CONTEXTS = ("shadow", "python")
MODES = ("cli", "env")
DATA = ("tree", "trace")  # Proton's data: the call tree, or a Chrome trace (a timeline)
FORMATS = ("hatchet", "hatchet_msgpack")  # how a tree is written
# Proton's instrumentation granularities (triton.profiler.mode); the measured Tritons compile only "warp".
GRANULARITIES = ("warp", "cta", "warp_2", "warp_4", "warp_8", "warp_group", "warp_group_2", "warp_group_4",
                 "warp_group_8")
SUFFIXES = {"trace": ".chrome_trace", "hatchet": ".hatchet", "hatchet_msgpack": ".hatchet_msgpack"}
MAX_SIZE = 2**31 - 1  # the kernel's offsets are int32
MAX_BLOCK_SIZE = 2**20  # Triton's largest tensor (triton.language.TRITON_MAX_TENSOR_NUMEL), which tl.arange makes
MAX_ITERS = 2**31 - 1  # launches of one run, kept to the int32 range the other counts have
MAX_BUFFER_SIZE = 2**30  # the largest power of two Proton's compiler pass takes (2^31 raised a TypeError there)
SIZE_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# Digits (leading zeros aside) of the longest whole number an option reads: Python refuses to read or print one of
# over 4,300, so a longer value is refused as no number at all; a shorter one out of range says so.
MAX_DIGITS = 100
PLAIN_COUNT = re.compile(r"^0*([0-9]{1,100})([KMG]?)$", re.IGNORECASE)
POWER_COUNT = re.compile(r"^0*([0-9]{1,18})\s*(<<|\*\*|\^)\s*0*([0-9]{1,3})$")  # at most 18 × 64 digits


class ParamError(ValueError):
    """A parameter the run cannot take; ``flag`` names the option, the message says why."""

    def __init__(self, flag: str, reason: str):
        super().__init__(f"{flag}: {reason}")
        self.flag = flag
        self.reason = reason


def parse_size(text: str | int) -> int:
    """Element count from ``1048576``, ``1_048_576``, ``1M`` (binary: 2^20), ``2^20``, ``2**20`` or ``1<<20``."""
    value = _parse_count(str(text).strip().replace("_", ""))
    if value is None:
        raise ParamError("--size", f"{text!r} is not a size (try 1048576, 1M, 2^20 or 1<<20)")
    if not 1 <= value <= MAX_SIZE:
        raise ParamError("--size", f"{_said(value, text)} is out of range 1..{MAX_SIZE}")
    return value


def _parse_count(text: str) -> int | None:
    if match := PLAIN_COUNT.match(text):
        return int(match[1]) * SIZE_SUFFIXES[match[2].upper()]
    if match := POWER_COUNT.match(text):
        base, exponent = int(match[1]), int(match[3])
        if exponent > 64 and base > 1:  # past any limit: not worked out (it could have thousands of digits)
            return BEYOND
        return base << exponent if match[2] == "<<" else base**exponent
    return None


BEYOND = 1 << 128  # a count written as a power past 2^64: beyond every limit, and said as it was written


def _said(value: int, text: str | int) -> str:
    """A count as the message says it: its value, or as written where it is beyond every limit."""
    return repr(str(text).strip()) if value == BEYOND else str(value)


def parse_count(flag: str, text: str | int, *, power_of_two: bool = False, most: int = MAX_SIZE,
                why: str = "a 32-bit integer") -> int:
    """A positive integer option (``--iters``, ``--block-size``) of at most `most` (`why` says whose limit),
    optionally a power of two."""
    value = _parse_count(str(text).strip().replace("_", ""))
    if value is None or value < 1:
        raise ParamError(flag, f"{text!r} is not a positive integer")
    if power_of_two and value & (value - 1):
        raise ParamError(flag, f"{value} is not a power of two (tl.arange requires one)")
    if value > most:
        raise ParamError(flag, f"{_said(value, text)} is more than {most} ({why})")
    return value


def whole_number(text: str) -> int | None:
    """``text`` (spaces around it aside) as a whole number of ASCII digits, at most MAX_DIGITS of them; else None."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= MAX_DIGITS else None


def parse_device(text: str | int) -> str | int:
    """``auto``, ``cpu`` (the Triton interpreter) or a GPU index."""
    value = str(text).strip().lower()
    if value in ("auto", "cpu"):
        return value
    if (index := whole_number(value)) is not None:
        return index
    raise ParamError("--device", f"{text!r} is not auto, cpu or a GPU index")


def parse_warps(text: str | tuple[int, ...] | list[int]) -> tuple[int, ...]:
    """Warp indices to record (``0,2``), sorted and without repeats; empty: every warp."""
    if isinstance(text, (tuple, list)):
        text = ",".join(str(item) for item in text)
    items = [item.strip() for item in str(text).split(",")]
    if items == [""]:
        return ()
    if any(whole_number(item) is None for item in items):
        raise ParamError("--warps", f"{text!r} is not a list of warp indices (0,2)")
    return tuple(sorted({int(item) for item in items}))


def parse_buffer_size(text: str | int) -> int:
    """The instrumentation profile buffer in bytes: 0 lets Proton size it, otherwise a power of two (Proton splits
    it into one segment per recorded warp, and a segment's size must be a power of two)."""
    value = _parse_count(str(text).strip().replace("_", ""))
    if value is None:
        raise ParamError("--buffer-size", f"{text!r} is not a number of bytes (0, 4096, 64K)")
    if value & (value - 1):
        raise ParamError("--buffer-size", f"{value} is not a power of two (Proton splits the buffer into one segment "
                                          "per warp, each a power of two)")
    if value > MAX_BUFFER_SIZE:
        raise ParamError("--buffer-size", f"{value} is more than {MAX_BUFFER_SIZE} (Proton's compiler takes the size "
                                          "as a 32-bit integer)")
    return value


def parse_timeout(text: str | float | None) -> float | None:
    """Seconds, or None / 0 for no limit."""
    if text is None or str(text).strip() in ("", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise ParamError("--timeout", f"{text!r} is not a number of seconds") from None
    if math.isinf(value):
        raise ParamError("--timeout", f"{text!r} is not a finite number of seconds (0: no limit)")
    if not value > 0:
        raise ParamError("--timeout", f"{text!r} must be positive")
    return value


def parse_name(text: str) -> str:
    """A capture name (the capture file's stem): letters, digits, '.', '_' or '-'; Proton's suffix dropped."""
    name = str(text)
    for suffix in SUFFIXES.values():  # Proton appends the suffix itself
        name = name.removesuffix(suffix)
    if not NAME_PATTERN.match(name):
        raise ParamError("--name", f"{text!r} must be letters, digits, '.', '_' or '-'")
    return name


def parse_python(text: str) -> str:
    """The workload's interpreter: any path but an empty one (the probe says whether it runs)."""
    if not str(text).strip():
        raise ParamError("--python", "no interpreter given")
    return text


def parse_payload(path: str | Path | None) -> Path | None:
    """Another payload script instead of the bundled vecadd.py (None); it must exist."""
    if path is None:
        return None
    if not Path(path).is_file():
        raise ParamError("--payload", f"{path}: no such file")
    return Path(path)


def spoken(choices: Collection[str]) -> str:
    """``a, b or c``."""
    *rest, last = choices
    return f"{', '.join(rest)} or {last}" if rest else last


@dataclass(frozen=True)
class Param:
    """One run parameter: its RunParams field, its option, its default, the values it takes and how they are
    checked, what it means, and what the form calls it."""

    field: str
    flag: str  # the option of `proton-tui run`, which every error about the parameter names
    default: Any  # RunParams' default (python: None, the interpreter running proton-tui)
    help: str  # one line for `run --help` and the form's tooltip; "{choices}" stands for the choices
    label: str | None = None  # the form's name for it; None: not on the form
    about: str | None = None  # the form's F1 line; None: the help
    choices: tuple[str, ...] = ()  # the values taken (empty: any that `parse` takes)
    parse: Callable[[Any], Any] | None = None  # a typed or given value -> the value, or ParamError naming `flag`
    interpreter_default: Any = None  # where the payload runs through the Triton interpreter (`interpreter_sized`)
    offered: tuple[str, ...] | None = None  # the choices the form offers; None: every one

    @property
    def text(self) -> str:
        """The default as it is typed: an option's default, a form field's first value."""
        return "" if self.default in (None, ()) else str(self.default)

    @property
    def tooltip(self) -> str:
        return self.help.format(choices=spoken(self.choices)) if self.choices else self.help

    @property
    def cli_help(self) -> str:
        """The help of its option; a default that depends on where the payload runs is said in it."""
        if self.interpreter_default is None:
            return self.tooltip
        return (f"{self.tooltip} (default: {self.text}; {self.interpreter_default} through the Triton "
                "interpreter)")

    @property
    def form_about(self) -> str:
        return self.about or self.tooltip

    def check(self, value: Any) -> Any:
        """The value validated; ParamError naming the option otherwise."""
        if self.parse is not None:
            value = self.parse(value)
        if self.choices and value not in self.choices:
            raise ParamError(self.flag, f"{value!r} is not one of {', '.join(self.choices)}")
        return value


INSTRUMENTATION = "Instrumentation: "
PARAMS: dict[str, Param] = {param.field: param for param in (  # in the order RunParams checks them
    Param("size", "--size", RUN_SIZE, "Elements per vector: 1048576, 1M (2^20), 2^20 or 1<<20", "Size",
          parse=parse_size, interpreter_default=CPU_SIZE),
    Param("iters", "--iters", GPU_ITERS, "Timed launches after the first (compile) launch", "Iterations",
          "timed launches after the first one, which compiles the kernel",
          parse=lambda value: parse_count("--iters", value, most=MAX_ITERS), interpreter_default=CPU_ITERS),
    Param("block_size", "--block-size", 1024, "Elements per program: a power of two (tl.arange requires one)",
          "Block size", parse=lambda value: parse_count(
              "--block-size", value, power_of_two=True, most=MAX_BLOCK_SIZE,
              why="Triton's largest tensor, TRITON_MAX_TENSOR_NUMEL, which tl.arange makes")),
    Param("device", "--device", "auto", "A GPU index, auto, or cpu (Triton interpreter)", "Device",
          "auto: the GPU the interpreter sees; cpu: the Triton interpreter, which Proton cannot profile",
          parse=parse_device),
    Param("timeout", "--timeout", None, "End the run after this many seconds", parse=parse_timeout),
    Param("warps", "--warps", (), INSTRUMENTATION + "record only these warps of each CTA (0,2); empty: every warp",
          "Warps", "instrumentation: record only these warps of each CTA (0,2), fewer records and less overhead; "
                   "empty records every warp", parse=parse_warps),
    Param("buffer_size", "--buffer-size", 0, INSTRUMENTATION + "the profile buffer per CTA in bytes, a power of "
          "two; 0 lets Proton size it", "Buffer", "instrumentation: the profile buffer per CTA in bytes (a power "
          "of two); too small loses events; 0 lets Proton size it", parse=parse_buffer_size),
    Param("backend", "--backend", "auto", "{choices}; auto lets Proton choose", "Backend",
          "what Proton records with: auto lets it choose (cupti on NVIDIA; roctracer or rocprofiler on AMD); "
          "instrumentation times proton.language scopes inside a kernel", BACKENDS),
    Param("context", "--context", "shadow", "{choices} (python: Python call stacks)", "Context",
          "shadow: the scopes the program opens; python: Python call stacks", CONTEXTS),
    Param("mode", "--mode", "cli", "cli: python -m triton.profiler.proton runs the payload; env: the payload "
          "starts Proton itself", "Mode", choices=MODES),
    Param("data", "--data", "tree", "tree (the call tree: table, flame view) or trace (a Chrome trace: each "
          "launch on a timeline; Triton >= 3.5)", "Data", choices=DATA),
    Param("output_format", "--format", "hatchet", "A tree's file: hatchet (JSON) or hatchet_msgpack (Triton "
          ">= 3.7, --mode env)", "Format", "how a tree is written: hatchet (JSON), or hatchet_msgpack "
          "(Triton >= 3.7, in Mode env)", FORMATS),
    Param("granularity", "--granularity", "warp", INSTRUMENTATION + "what one record covers: {choices}; Proton "
          "compiles only warp", "Granularity", "instrumentation: what one record covers; Proton compiles only warp",
          GRANULARITIES, offered=("warp", "cta", "warp_group")),  # one of each family; the others disabled
    Param("name", "--name", "vecadd", "Capture name (the capture file's stem; default: vecadd, or what the "
          "command runs)", parse=parse_name),
    Param("python", "--python", None, "The workload's interpreter, which needs torch and triton (default: the "
          "one running proton-tui)", "Interpreter",
          "the Python that runs the payload: its torch and Triton decide what runs (Enter re-detects)",
          parse=parse_python),
    Param("output", "--output", DEFAULT_OUTPUT, "Folder that receives the run folders (default: ./proton-runs)",
          parse=Path),
    Param("payload", "--payload", None, "Another payload script instead of the bundled vecadd.py",
          parse=parse_payload),
    Param("hook", "--hook/--no-hook", True, "Proton's triton hook: kernel names with sizes, bytes and flops",
          "triton hook", "Proton's -k triton: kernel names with their sizes, plus bytes and flops (GB/s, % of peak)"),
    Param("profile", "--no-profile", True, "Run the payload alone, without Proton", "profile with Proton",
          "off: the payload alone, checked for correctness, no capture"),
    Param("inject_bug", "--inject-bug", False, "The payload's kernel drops the last element (tests only)"),
)}


def label_of(flag: str) -> str:
    """What the form calls the option `flag` names (the flag itself where the form has no such field)."""
    return next((param.label for param in PARAMS.values() if param.flag == flag and param.label), flag)


@dataclass(frozen=True)
class RunParams:
    """One capture run. Construction validates every field (`PARAMS`) and raises ParamError naming the option."""

    size: int = PARAMS["size"].default
    iters: int = PARAMS["iters"].default
    block_size: int = PARAMS["block_size"].default
    backend: str = PARAMS["backend"].default
    context: str = PARAMS["context"].default
    mode: str = PARAMS["mode"].default
    hook: bool = PARAMS["hook"].default  # Proton's triton hook: launch_metadata names, bytes and flops
    data: str = PARAMS["data"].default  # "tree" or "trace"
    output_format: str = PARAMS["output_format"].default  # a tree's file format: "hatchet" or "hatchet_msgpack"
    python: str = field(default_factory=lambda: sys.executable)  # the workload's interpreter
    device: str | int = PARAMS["device"].default  # "auto", "cpu" or a GPU index
    output: Path = PARAMS["output"].default
    name: str = PARAMS["name"].default
    profile: bool = PARAMS["profile"].default  # False runs the payload alone
    timeout: float | None = PARAMS["timeout"].default
    inject_bug: bool = PARAMS["inject_bug"].default  # test only: the payload's kernel drops the last element
    payload: Path | None = PARAMS["payload"].default  # None: the bundled vecadd.py
    # the instrumentation backend's options: the warps recorded (empty: all), its buffer (0: Proton sizes it)
    warps: tuple[int, ...] = PARAMS["warps"].default
    buffer_size: int = PARAMS["buffer_size"].default
    granularity: str = PARAMS["granularity"].default
    # a user's own command to profile instead of the payload (`engine.workload`), and the folder it runs in
    command: tuple[str, ...] = ()
    cwd: Path | None = None

    def __post_init__(self) -> None:
        for param in PARAMS.values():
            object.__setattr__(self, param.field, param.check(getattr(self, param.field)))
        object.__setattr__(self, "command", tuple(self.command))


def runs_interpreted(params: RunParams, gpu_vendor: str | None) -> bool:
    """Whether the payload runs through the Triton interpreter: on device cpu, or where the interpreter sees no
    GPU (`gpu_vendor` empty)."""
    return params.device == "cpu" or not gpu_vendor


def interpreter_sized(params: RunParams, gpu_vendor: str | None, given: Collection[str]) -> RunParams:
    """The run as it is made: one unprofiled through the Triton interpreter takes the interpreter's size and
    launches (tiny: it runs a block in Python) for each of them not in `given`; any other run is unchanged."""
    if params.profile or not runs_interpreted(params, gpu_vendor):
        return params
    return replace(params, **{param.field: param.interpreter_default for param in PARAMS.values()
                              if param.interpreter_default is not None and param.field not in given})


def instrumentation_mode(params: RunParams) -> str:
    """The instrumentation mode string for Proton (``default:sampling_strategy=selective:…``); "" for its
    defaults."""
    options = []
    if params.warps:
        options += ["sampling_strategy=selective", "sampling_options=" + ",".join(map(str, params.warps))]
    if params.buffer_size:
        options.append(f"buffer_size={params.buffer_size}")
    if params.granularity != "warp":
        options.append(f"granularity={params.granularity}")
    return ":".join(["default", *options]) if options else ""


def capture_suffix(params: RunParams) -> str:
    """The suffix Proton gives the capture of these parameters."""
    return SUFFIXES["trace" if params.data == "trace" else params.output_format]
