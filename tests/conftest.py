"""Shared fixtures: the real H200 captures and a writer for hand-shaped ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def capture_path(name: str) -> Path:
    """A real Proton capture from tests/fixtures (made on an H200, see its README)."""
    return FIXTURES / f"{name}.hatchet"


def kernel(name: str, time_ns: float, count: int = 1, device: str = "0", **extra) -> dict:
    """A kernel node as Proton 3.2+ writes it."""
    metrics = {"count": count, "device_id": device, "device_type": "CUDA", "time (ns)": time_ns, **extra}
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics, "children": []}


def scope(name: str, *children: dict, **metrics) -> dict:
    """A scope or python-frame node: no metrics of its own."""
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics, "children": list(children)}


@pytest.fixture
def write_capture(tmp_path):
    """Write a [tree, device_info] capture (or raw bytes) to a file and return its path."""

    def write(content, name: str = "capture.hatchet") -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(json.dumps(content, indent=4))
        return path

    return write
