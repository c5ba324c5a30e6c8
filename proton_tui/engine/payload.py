"""Locate the bundled payload, ``vecadd.py``: in an installed wheel (package ``proton_tui.payload``) or in a
checkout (the top-level ``payload/`` folder next to ``proton_tui/``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

PAYLOAD_FILE = "vecadd.py"
CHECKOUT_PAYLOAD = Path(__file__).resolve().parents[2] / "payload" / PAYLOAD_FILE


def payload_path() -> Path:
    """The absolute path of vecadd.py. Raises FileNotFoundError naming both places looked at."""
    try:
        installed = Path(str(resources.files("proton_tui.payload") / PAYLOAD_FILE))
    except ModuleNotFoundError:
        installed = None
    for candidate in (installed, CHECKOUT_PAYLOAD):
        if candidate is not None and candidate.is_file():
            return candidate.resolve()
    raise FileNotFoundError(f"{PAYLOAD_FILE} not found in package proton_tui.payload nor at {CHECKOUT_PAYLOAD}")
