"""The CSV outputs: the kernel summary and the tree, one row each, exact values."""

from __future__ import annotations

import csv
import io

from proton_tui.console import printable
from proton_tui.output.document import json_unit, kernel_records, tree_records
from proton_tui.view.display import Display


def csv_text(display: Display, records: list[dict], fields: list[str], terminal: bool = False) -> str:
    """Records as CSV with a header row: names under the display's rule, exact (quoted where CSV needs it) into a
    file or pipe; for a terminal every control and invisible character written as an escape (console.printable), as
    the text outputs do. A list as space-separated words."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    unit = json_unit(display.profile)
    for record in records:
        row = {**record, "name": display.names.exact(record["name"]), "unit": unit}
        if isinstance(row.get("devices"), list):
            row["devices"] = " ".join(row["devices"])
        writer.writerow({key: _csv_cell(value, terminal) for key, value in row.items()})
    return out.getvalue()


def _csv_cell(value, terminal: bool):
    """One number format: a whole number as an integer (39661509, not 39661509.0), any other float exactly as
    Python writes it; text exact, or printable for a terminal."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and terminal:
        return printable(value)
    return value


def kernel_csv(display: Display, terminal: bool = False) -> str:
    """The kernel summary as CSV (printable for a terminal)."""
    fields = ["name", "value", "unit", "percent", "launches", "avg", "bytes", "gbps", "peak_percent", "devices"]
    return csv_text(display, kernel_records(display), fields, terminal)


def tree_csv(display: Display) -> str:
    """The tree's shown rows as CSV."""
    fields = ["depth", "path", "name", "value", "unit", "percent", "launches", "avg", "gbps", "peak_percent",
              "device"]
    return csv_text(display, tree_records(display), fields)
