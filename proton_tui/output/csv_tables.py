"""The CSV outputs: the kernel summary and the tree, one row each, exact values."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from proton_tui.console import without_escapes
from proton_tui.view.display import Display

if TYPE_CHECKING:
    pass
from proton_tui.output.document import json_unit, kernel_records, tree_records


def csv_text(display: Display, records: list[dict], fields: list[str]) -> str:
    """Records as CSV with a header row: names under the display's rule and exact (quoted where CSV needs it) but
    for what could start a terminal control sequence (ESC), a list as space-separated words."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    unit = json_unit(display.profile)
    for record in records:
        row = {**record, "name": display.names.exact(record["name"]), "unit": unit}
        if isinstance(row.get("devices"), list):
            row["devices"] = " ".join(row["devices"])
        writer.writerow({key: _csv_cell(value) for key, value in row.items()})
    return out.getvalue()


def _csv_cell(value):
    """One number format: a whole number as an integer (39661509, not 39661509.0), any other float exactly as
    Python writes it; text exact but for what could start a terminal control sequence."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return without_escapes(value) if isinstance(value, str) else value


def kernel_csv(display: Display) -> str:
    """The kernel summary as CSV."""
    fields = ["name", "value", "unit", "percent", "launches", "avg", "bytes", "gbps", "peak_percent", "devices"]
    return csv_text(display, kernel_records(display), fields)


def tree_csv(display: Display) -> str:
    """The tree's shown rows as CSV."""
    fields = ["depth", "path", "name", "value", "unit", "percent", "launches", "avg", "gbps", "peak_percent",
              "device"]
    return csv_text(display, tree_records(display), fields)
