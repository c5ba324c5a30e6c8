"""Export the current view (the tree as filtered, folded and sorted, or the flat kernel summary) as CSV, JSON or a
GitHub Markdown table. Writing never replaces an existing file."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import orjson

from .hatchet import Profile
from .report import columns, header_line, kernel_cells, kernel_records, node_cells, record_value_key

FORMATS = {".csv": "csv", ".json": "json", ".md": "md"}
VIEWS = ("tree", "kernels")
SORT_KEYS = ("time", "launches", "avg", "name")
# What Markdown could read as markup or as a cell border; a backslash makes each literal. A run of underscores
# between letters or digits cannot start emphasis, so mangled names keep theirs unescaped.
MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<|~&$]|_+")


def format_for_path(path: str | Path) -> str:
    """The export format a file name asks for: "csv", "json" or "md". Raises ValueError for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        found = f"suffix {suffix!r}" if suffix else "no suffix"
        raise ValueError(f"{path}: unknown export format ({found}): use .csv, .json or .md")
    return FORMATS[suffix]


def tree_order(profile: Profile, shown: list[bool] | None = None, sort_key: str = "time") -> list[int]:
    """Node ids in display order (ROOT first, children by sort_key); a node `shown` hides is left out with its
    subtree."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        kids = [kid for kid in profile.sorted_children(node, sort_key) if shown is None or shown[kid]]
        stack.extend(reversed(kids))
    return order


def tree_records(profile: Profile, shown: list[bool] | None = None, sort_key: str = "time") -> list[dict]:
    """The tree rows in display order as plain records (JSON and CSV)."""
    value_key = record_value_key(profile)
    return [
        {
            "depth": profile.depths[node],
            "path": profile.path_of(node),
            "name": profile.names[node],
            value_key: profile.inclusive[node],
            "percent": round(profile.percent(profile.inclusive[node]), 4),
            "launches": profile.launches[node],
            f"avg_{value_key}": profile.avg(node) if profile.launches[node] else None,
            "gbps": profile.gbps(node),
            "peak_percent": profile.peak_percent(node),
            "device": profile.devices[node] or None,
        }
        for node in tree_order(profile, shown, sort_key)
    ]


def _kernel_rows(profile: Profile, sort_key: str) -> list[dict]:
    return kernel_records(profile, profile.kernels_sorted(sort_key))


def _csv(fields: list[str], records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def markdown_escape(text: str) -> str:
    """Text as it must appear in a Markdown table cell to show literally: markup characters and `|` escaped, line
    breaks (which would end the row) as spaces."""
    return MARKDOWN_SPECIAL.sub(_escape, text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def _escape(match: re.Match) -> str:
    text, start, end, whole = match.group(), match.start(), match.end(), match.string
    if text[0] == "_" and start > 0 and end < len(whole) and whole[start - 1].isalnum() and whole[end].isalnum():
        return text
    return "".join("\\" + char for char in text)


def _markdown(profile: Profile, titles: list[str], rows: list[list[str]]) -> str:
    """A heading line and a GitHub table: every column right-aligned but the last (the name)."""
    lines = [
        markdown_escape(header_line(profile)),
        "",
        "| " + " | ".join(titles) + " |",
        "|" + "---:|" * (len(titles) - 1) + ":---|",
    ]
    lines += ["| " + " | ".join(markdown_escape(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def export_text(
    profile: Profile, *, view: str = "tree", fmt: str, shown: list[bool] | None = None, sort_key: str = "time"
) -> str:
    """The view as a CSV, JSON or Markdown document. view: "tree" (rows in display order, `shown` from
    Profile.shown hiding rows and their subtrees) or "kernels" (the flat summary); sort_key: time, launches, avg
    or name. Raises ValueError for an unknown view, format or sort key."""
    for what, value, allowed in (("view", view, VIEWS), ("format", fmt, FORMATS.values()),
                                 ("sort key", sort_key, SORT_KEYS)):
        if value not in allowed:
            raise ValueError(f"unknown export {what} {value!r}: use one of {', '.join(allowed)}")
    if fmt == "json":
        records = tree_records(profile, shown, sort_key) if view == "tree" else _kernel_rows(profile, sort_key)
        document = {"file": str(profile.path), "view": view, "unit": profile.unit, "sort": sort_key,
                    "total": profile.total, "rows": records}
        return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
    value_key = record_value_key(profile)
    if fmt == "csv" and view == "tree":
        fields = ["depth", "path", "name", value_key, "percent", "launches", f"avg_{value_key}", "gbps",
                  "peak_percent", "device"]
        return _csv(fields, tree_records(profile, shown, sort_key))
    if fmt == "csv":
        fields = ["name", value_key, "percent", "launches", f"avg_{value_key}", "bytes", "gbps", "devices"]
        records = [{**record, "devices": " ".join(record["devices"])} for record in _kernel_rows(profile, sort_key)]
        return _csv(fields, records)
    titles = [column.title for column in columns(profile)]
    if view == "tree":
        rows = [[str(profile.depths[node]), *node_cells(profile, node), profile.names[node]]
                for node in tree_order(profile, shown, sort_key)]
        return _markdown(profile, ["depth", *titles, "name"], rows)
    rows = [[*kernel_cells(profile, kernel), kernel.name] for kernel in profile.kernels_sorted(sort_key)]
    return _markdown(profile, [*titles, "kernel"], rows)


def write_export(path: str | Path, text: str) -> Path:
    """Write an export to a new file. Raises FileExistsError when the path exists (nothing is ever replaced) and
    OSError for any other failure, each with a one-line message that names the path."""
    path = Path(path)
    try:
        handle = open(path, "x", encoding="utf-8", newline="")
    except FileExistsError:
        raise FileExistsError(f"{path}: already exists; not overwritten") from None
    except OSError as error:
        raise OSError(f"{path}: cannot write: {error.strerror or error}") from None
    try:
        with handle:
            handle.write(text)
    except OSError as error:
        path.unlink(missing_ok=True)  # created above, so ours: a half-written export goes too
        raise OSError(f"{path}: cannot write: {error.strerror or error}") from None
    return path
