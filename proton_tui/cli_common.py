"""What every command shares: one-line errors with exit code 2, and regex options."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer

from .launch import error_line

if TYPE_CHECKING:
    import asyncio


def fail(message: str) -> NoReturn:
    """Print a one-line error and exit with code 2."""
    typer.echo(error_line(message), err=True)
    raise typer.Exit(2)


def regex_option(flag: str, pattern: str | None) -> re.Pattern | None:
    """Compile a regex option; a bad one is a one-line error naming the flag."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as error:
        fail(f"{flag} {pattern!r} is not a valid regular expression: {error}")


Result = TypeVar("Result")


def run_until_signalled(start: Callable[[asyncio.Event], Awaitable[Result]]) -> Result:
    """Run ``start(stop)`` on a fresh event loop; Ctrl-C or SIGTERM sets ``stop`` so the runs end their process
    groups and report, rather than dying mid-way."""
    import asyncio
    import signal

    async def main() -> Result:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, stop.set)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # not the main thread: Ctrl-C keeps its default meaning
        return await start(stop)

    return asyncio.run(main())
