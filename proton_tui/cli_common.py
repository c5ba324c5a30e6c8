"""What every command shares: one-line errors with exit code 2, and regex options."""

from __future__ import annotations

import re
from typing import NoReturn

import typer


def fail(message: str) -> NoReturn:
    """Print a one-line error and exit with code 2."""
    typer.echo(f"proton-tui: error: {message}", err=True)
    raise typer.Exit(2)


def regex_option(flag: str, pattern: str | None) -> re.Pattern | None:
    """Compile a regex option; a bad one is a one-line error naming the flag."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as error:
        fail(f"{flag} {pattern!r} is not a valid regular expression: {error}")
