"""``proton-tui diff``: compare two captures kernel by kernel, as aligned text or JSON. Exit 0, or 2 with a one-line
error for a bad file, a bad option or captures in different units."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .cli_common import fail, regex_option


def register(app: typer.Typer) -> None:
    """Add the ``diff`` command to ``app``."""
    app.command("diff")(diff)


def diff(
    file_a: Annotated[Path, typer.Argument(metavar="A.hatchet", help="The capture before.", show_default=False)],
    file_b: Annotated[Path, typer.Argument(metavar="B.hatchet", help="The capture after.", show_default=False)],
    plain: Annotated[bool, typer.Option("--plain", help="Print the comparison as text (the default).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    include: Annotated[Optional[str], typer.Option("--include", help="Keep nodes matching REGEX.")] = None,
    exclude: Annotated[Optional[str], typer.Option("--exclude", help="Drop nodes matching REGEX.")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=0, help="Show the N largest changes.")] = None,
) -> None:
    """Compare two Proton captures per kernel: time in A and B, delta, ratio, launches, new and gone kernels."""
    from .diff import DiffError, diff_json, diff_profiles, diff_text
    from .hatchet import CaptureError, load_profile

    include_re, exclude_re = regex_option("--include", include), regex_option("--exclude", exclude)
    if plain and as_json:
        fail("--plain and --json are exclusive: pick one")
    try:
        a, b = load_profile(file_a), load_profile(file_b)
        comparison = diff_profiles(a.filtered(include_re, exclude_re), b.filtered(include_re, exclude_re))
    except (CaptureError, DiffError) as error:
        fail(str(error))
    if as_json:
        import orjson

        sys.stdout.write(orjson.dumps(diff_json(comparison, limit), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(diff_text(comparison, limit))
