"""``proton-tui diff``: compare two captures kernel by kernel, as aligned text or JSON. Exit 0, or 2 with a one-line
error for a bad file, a scope that names no frame or several, a bad option or captures in different units."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from proton_tui.cli.common import (
    ExcludeOption,
    IncludeOption,
    NamesOption,
    RawNamesOption,
    command,
    fail,
    load_scoped,
    names_for,
    shown,
    view_filter,
)


def register(app: typer.Typer) -> None:
    """Add the ``diff`` command to ``app``."""
    command(app, "diff", diff)


def diff(
    file_a: Annotated[str, typer.Argument(
        metavar="A.hatchet[:SCOPE]", help="The capture before, or one scope's subtree of it (step, step/forward).",
        show_default=False)],
    file_b: Annotated[str, typer.Argument(
        metavar="B.hatchet[:SCOPE]", help="The capture after, or one scope's subtree of it (the same file may be A).",
        show_default=False)],
    plain: Annotated[bool, typer.Option("--plain", help="Print the comparison as text (the default).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    include: IncludeOption = None,
    exclude: ExcludeOption = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Show the N largest changes.")] = None,
    names_form: NamesOption = None,
    raw_names: RawNamesOption = False,
) -> None:
    """Compare two Proton captures per kernel: time in A and B, delta, ratio, launches, new and gone kernels. FILE:SCOPE
    compares the kernels under one scope (step, or step/forward for a nested one), say two steps of one capture."""
    from proton_tui.output.diff import DiffError, diff_json, diff_profiles, diff_text
    from proton_tui.output.document import json_text

    chosen = view_filter(include, exclude)
    if plain and as_json:
        fail("--plain and --json are exclusive: pick one")
    a, b = load_scoped(file_a, file_b)
    names = names_for([*a.names, *b.names], names_form, raw_names)
    try:
        comparison = diff_profiles(chosen.apply(a, names)[0], chosen.apply(b, names)[0])
    except DiffError as error:
        fail(str(error))
    if as_json:
        sys.stdout.write(json_text(diff_json(comparison, limit, names)))
    else:
        sys.stdout.write(shown(diff_text(comparison, limit, names)))
