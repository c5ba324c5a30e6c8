"""The shape the box check and doctor share: a typed plan, result rows that carry a ``RowVerdict``, their runs
under way at once, and the report step that writes the job's record. Never imports Textual."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from proton_tui.engine.probe import InterpreterInfo
from proton_tui.records import Outcome, RowVerdict, UnwrittenError, row_verdict  # noqa: F401  (the job's vocabulary)


@dataclass(frozen=True)
class JobPlan:
    """What every job is planned with: the interpreter, the folder its job folder goes in, how many runs at once."""

    info: InterpreterInfo
    output: Path
    jobs: int


class JobReport(Protocol):
    unwritten: list[str]

    @property
    def exit_code(self) -> int: ...


Item = TypeVar("Item")
Row = TypeVar("Row")


async def run_rows(items: Iterable[Item], prove: Callable[[Item], Awaitable[Row]], jobs: int,
                   gated: Callable[[Item], bool] = lambda item: True,
                   on_done: Callable[[Row], None] | None = None) -> list[Row]:
    """``prove`` every item, at most ``jobs`` of the ``gated`` ones at once (the others at once), in order;
    ``on_done`` with each row as it is proved. One failing or the whole cancelled: every other is cancelled and
    awaited (no run is left going unwatched), then the error is raised."""
    gate = asyncio.Semaphore(jobs)

    async def one(item: Item) -> Row:
        if gated(item):
            async with gate:
                row = await prove(item)
        else:
            row = await prove(item)
        if on_done:
            on_done(row)
        return row

    tasks = [asyncio.ensure_future(one(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


ReportT = TypeVar("ReportT", bound=JobReport)


def report(result: ReportT, path: Path, write: Callable[[Path, ReportT], None]) -> ReportT:
    """The job's last step: its record written at ``path`` (whole or not at all: one line in ``unwritten`` when it
    cannot be), the report returned."""
    try:
        write(path, result)
    except UnwrittenError as error:
        result.unwritten.append(str(error))
    return result
