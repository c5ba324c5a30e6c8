"""What a capture run is asked to do, validated before anything runs."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .rundir import DEFAULT_OUTPUT
from .sizes import RUN_SIZE

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
        raise ParamError("--size", f"{value} is out of range 1..{MAX_SIZE}")
    return value


def _parse_count(text: str) -> int | None:
    if match := PLAIN_COUNT.match(text):
        return int(match[1]) * SIZE_SUFFIXES[match[2].upper()]
    if (match := POWER_COUNT.match(text)) and int(match[3]) <= 64:
        base, exponent = int(match[1]), int(match[3])
        return base << exponent if match[2] == "<<" else base**exponent
    return None


def parse_count(flag: str, text: str | int, *, power_of_two: bool = False) -> int:
    """A positive integer option (``--iters``, ``--block-size``), optionally a power of two."""
    value = _parse_count(str(text).strip().replace("_", ""))
    if value is None or value < 1:
        raise ParamError(flag, f"{text!r} is not a positive integer")
    if power_of_two and value & (value - 1):
        raise ParamError(flag, f"{value} is not a power of two (tl.arange requires one)")
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
    if not value > 0:
        raise ParamError("--timeout", f"{text!r} must be positive")
    return value


@dataclass(frozen=True)
class RunParams:
    """One capture run. Construction validates every field and raises ParamError naming the option."""

    size: int = RUN_SIZE
    iters: int = 20
    block_size: int = 1024
    backend: str = "auto"
    context: str = "shadow"
    mode: str = "cli"
    hook: bool = True  # Proton's triton hook: launch_metadata names, bytes and flops
    data: str = "tree"  # "tree" or "trace"
    output_format: str = "hatchet"  # a tree's file format: "hatchet" or "hatchet_msgpack"
    python: str = field(default_factory=lambda: sys.executable)  # the workload's interpreter
    device: str | int = "auto"  # "auto", "cpu" or a GPU index
    output: Path = DEFAULT_OUTPUT
    name: str = "vecadd"
    profile: bool = True  # False runs the payload alone
    timeout: float | None = None
    inject_bug: bool = False  # test only: the payload's kernel drops the last element
    payload: Path | None = None  # None: the bundled vecadd.py
    # the instrumentation backend's options: the warps recorded (empty: all), its buffer (0: Proton sizes it)
    warps: tuple[int, ...] = ()
    buffer_size: int = 0
    granularity: str = "warp"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "size", parse_size(self.size))
        set_(self, "iters", parse_count("--iters", self.iters))
        set_(self, "block_size", parse_count("--block-size", self.block_size, power_of_two=True))
        set_(self, "device", parse_device(self.device))
        set_(self, "timeout", parse_timeout(self.timeout))
        set_(self, "warps", parse_warps(self.warps))
        set_(self, "buffer_size", parse_buffer_size(self.buffer_size))
        for flag, value, allowed in (("--backend", self.backend, BACKENDS), ("--context", self.context, CONTEXTS),
                                     ("--mode", self.mode, MODES), ("--data", self.data, DATA),
                                     ("--format", self.output_format, FORMATS),
                                     ("--granularity", self.granularity, GRANULARITIES)):
            if value not in allowed:
                raise ParamError(flag, f"{value!r} is not one of {', '.join(allowed)}")
        name = self.name
        for suffix in SUFFIXES.values():  # Proton appends the suffix itself
            name = name.removesuffix(suffix)
        if not NAME_PATTERN.match(name):
            raise ParamError("--name", f"{self.name!r} must be letters, digits, '.', '_' or '-'")
        set_(self, "name", name)
        if not str(self.python).strip():
            raise ParamError("--python", "no interpreter given")
        set_(self, "output", Path(self.output))
        if self.payload is not None:
            set_(self, "payload", Path(self.payload))
            if not self.payload.is_file():
                raise ParamError("--payload", f"{self.payload}: no such file")


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
