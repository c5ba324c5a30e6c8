"""Export the current view (the tree as filtered, folded and sorted, or the flat kernel summary) as CSV, JSON or a
GitHub Markdown table. Writing never replaces an existing file."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from proton_tui import JSON_SCHEMA
from proton_tui.console import path_text
from proton_tui.hatchet import Profile
from proton_tui.output.csv_tables import kernel_csv, tree_csv
from proton_tui.output.details import header_line
from proton_tui.output.document import json_text, json_unit, kernel_records, tree_records
from proton_tui.view.display import Display
from proton_tui.view.formatting import columns, kernel_cells, node_cells

FORMATS = {".csv": "csv", ".json": "json", ".md": "md"}
TRACE_SUFFIXES = (".json", ".chrome_trace")  # the names of a merged trace: a Chrome trace's JSON
VIEWS = ("tree", "kernels")
# What Markdown could read as markup or as a cell border; a backslash makes each literal. A run of underscores
# between letters or digits cannot start emphasis, so mangled names keep theirs unescaped.
MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<|~&$]|_+")


def format_for_path(path: str | Path) -> str:
    """The export format a file name asks for: "csv", "json" or "md". Raises ValueError for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{path_text(Path(path))}: unknown export format ({_suffix_found(suffix)}): use .csv, .json "
                         "or .md")
    return FORMATS[suffix]


def check_trace_path(path: str | Path) -> None:
    """Refuse (ValueError, naming the path) a file name for a merged trace that does not say it holds a Chrome
    trace's JSON: .json, or .chrome_trace as Proton names its own."""
    suffix = Path(path).suffix.lower()
    if suffix not in TRACE_SUFFIXES:
        raise ValueError(f"{path_text(Path(path))}: the merged trace is a Chrome trace in JSON "
                         f"({_suffix_found(suffix)}): name it .json or .chrome_trace")


def _suffix_found(suffix: str) -> str:
    return f"suffix {suffix!r}" if suffix else "no suffix"


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


def export_text(display: Display, *, view: str = "tree", fmt: str) -> str:
    """The view as a CSV, JSON or Markdown document, exactly as the display shows it (names, order, hidden rows).
    view: "tree" (the shown rows in display order) or "kernels" (the flat summary). Raises ValueError for an
    unknown view or format."""
    for what, value, allowed in (("view", view, VIEWS), ("format", fmt, FORMATS.values())):
        if value not in allowed:
            raise ValueError(f"unknown export {what} {value!r}: use one of {', '.join(allowed)}")
    profile = display.profile
    if fmt == "json":
        records = tree_records(display) if view == "tree" else kernel_records(display)
        document = {"schema": JSON_SCHEMA, "file": path_text(profile.path), "view": view, "unit": json_unit(profile),
                    "sort": display.sort.key, "descending": display.descending, "total": profile.total,
                    "rows": records}
        if view == "tree":
            document["hidden_empty_rows"] = display.hidden_empty
        return json_text(document)
    if fmt == "csv":
        return tree_csv(display) if view == "tree" else kernel_csv(display)
    titles = [column.title for column in columns(profile)]
    if view == "tree":
        rows = [[str(profile.depths[node]), *node_cells(profile, node), display.name(node)]
                for node in display.walk()]
        return _markdown(profile, ["depth", *titles, "name"], rows)
    rows = [[*kernel_cells(profile, kernel), display.names.shown(kernel.name)] for kernel in display.kernels()]
    return _markdown(profile, [*titles, "kernel"], rows)


def fresh_path(folder: Path, stem: str, suffix: str) -> Path:
    """`folder/stem+suffix`, or with -2, -3, … before the suffix when that name is taken: a name nothing has yet."""
    path, number = folder / f"{stem}{suffix}", 1
    while path.exists() or path.is_symlink():
        number += 1
        path = folder / f"{stem}-{number}{suffix}"
    return path


def write_export(path: str | Path, text: str) -> Path:
    """Write an export to a new file, whole or not at all: written to a hidden file beside it, then linked into
    place, which fails rather than replace anything. Raises FileExistsError when the path exists and OSError for
    any other failure, each with a one-line message that names the path."""
    path = Path(path)
    shown = path_text(path)
    if path.exists() or path.is_symlink():
        raise FileExistsError(f"{shown}: already exists; not overwritten")
    try:
        data = text.encode("utf-8")
        handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False)
    except UnicodeEncodeError as error:
        raise OSError(f"{shown}: cannot write: the text is not UTF-8 ({error.reason})") from None
    except OSError as error:
        raise OSError(f"{shown}: cannot write: {error.strerror or error}") from None
    try:
        with handle:
            handle.write(data)
        os.chmod(handle.name, 0o666 & ~_umask())
        os.link(handle.name, path)
    except FileExistsError:
        raise FileExistsError(f"{shown}: already exists; not overwritten") from None
    except OSError as error:
        raise OSError(f"{shown}: cannot write: {error.strerror or error}") from None
    finally:
        Path(handle.name).unlink(missing_ok=True)
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
