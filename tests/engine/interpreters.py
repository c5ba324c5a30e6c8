"""Interpreters described by hand (InterpreterInfo) for the builder and rules tests: no GPU needed."""

from __future__ import annotations

from pathlib import Path

from proton_tui.engine.params import RunParams
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.engine.rules import check_rules

PY = "/opt/venv/bin/python"

PAYLOAD = Path("/pkg/proton_tui/payload/vecadd.py")

RUN_DIR = Path("/runs/20260101-120000-vecadd")

VERSIONS = ("3.6.0", "3.7.1", "3.8.0")

BACKENDS = ("auto", "cupti", "roctracer", "rocprofiler", "instrumentation")

PAYLOAD_ARGS = ["--size", "1048576", "--iters", "20", "--block-size", "1024", "--device", "auto"]

def interpreter(version: str = "3.6.0", vendor: str | None = "nvidia", gpus: int = 1) -> InterpreterInfo:
    names = {"nvidia": "NVIDIA H200", "amd": "AMD Instinct MI300X", None: ""}[vendor]
    return InterpreterInfo(python=PY, executable=PY, python_version="3.11.7", triton_version=version,
                           has_proton=True, torch_version="2.11.0", gpu_vendor=vendor,
                           gpu_names=(names,) * gpus if vendor else ())

def refusals(params: RunParams, info: InterpreterInfo, environ=None) -> list[str]:
    return [f.message for f in check_rules(params, info, environ or {}) if f.refuses]
