"""``proton-tui view FOLDER`` of a fleet's reports (``check --report-dir``, ``doctor --report-dir``): every GPU of
every node against the fleet's median, and the doctors side by side, as text or JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from proton_tui.cli.common import fail, shown


def view_fleet(folder: Path, as_json: bool) -> None:
    """The fleet as text or JSON; exit 1 when a GPU failed or is flagged, or a doctor failed."""
    from proton_tui.engine.fleet import FleetError, fleet_json, fleet_text, open_fleet

    try:
        fleet = open_fleet(folder)
    except FleetError as error:
        fail(str(error))
    if as_json:
        from proton_tui.output.document import json_text

        sys.stdout.write(json_text(fleet_json(fleet)))
    else:
        sys.stdout.write(shown(fleet_text(fleet)))
    sys.stdout.flush()
    raise typer.Exit(fleet.exit_code)

