"""Locate the bundled payload, ``vecadd.py``: in an installed wheel (package ``proton_tui.payload``) or in a
checkout (the top-level ``payload/`` folder next to ``proton_tui/``)."""

from __future__ import annotations

import shlex
from importlib import resources
from pathlib import Path

PAYLOAD_FILE = "vecadd.py"
# What the payload imports when the package's metadata cannot be read (a checkout run without installing it): the
# `payload` extra of pyproject.toml, which `payload_requirements` reads when it can.
PAYLOAD_EXTRA = ("torch", "triton", "numpy")
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


def payload_requirements() -> tuple[str, ...]:
    """What the payload needs, as the installed package's `payload` extra names it."""
    from importlib.metadata import PackageNotFoundError, requires  # read here: its import is most of this module's

    try:
        declared = requires("proton-tui") or []
    except PackageNotFoundError:
        declared = []
    extra = tuple(line.split(";")[0].strip() for line in declared
                  if line.partition(";")[2].replace(" ", "").replace("'", '"') == 'extra=="payload"')
    return extra or PAYLOAD_EXTRA


def install_command(python: str) -> str:
    """The one shell line that installs what the payload needs into `python`."""
    return " ".join([shlex.quote(python), "-m", "pip", "install", *map(shlex.quote, payload_requirements())])
