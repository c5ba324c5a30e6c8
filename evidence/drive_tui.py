"""Drive the real TUI headless through one capture per backend, as a user would: fill the form, Run, wait for
the kernel table. Saves an SVG screenshot of the run screen and of the table, and the table's rows as text.

    python evidence/drive_tui.py OUT_DIR --backend auto --backend cupti [--size 1048576 --iters 20]
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from textual.widgets import Input

from proton_tui.tui.app import ProtonApp
from proton_tui.tui.profile_table import ProfileTable
from proton_tui.tui.run_screen import RunScreen
from proton_tui.tui.screens import ProfileScreen

SIZE = (140, 44)


async def wait_for(predicate, seconds: float) -> None:
    for _ in range(int(seconds * 10)):
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise TimeoutError("the TUI did not get there in time")


async def capture(out: Path, backend: str, size: str, iters: str) -> str:
    app = ProtonApp(output=out / f"runs-tui-{backend}")
    async with app.run_test(size=SIZE) as pilot:
        form = app.screen
        await wait_for(lambda: form.info is not None or form.probe_error is not None, 180)
        form.query_one("#size", Input).value = size
        form.query_one("#iters", Input).value = iters
        for button in form.query("#backend RadioButton"):
            if button.name == backend:
                button.value = True
        await pilot.pause()
        app.save_screenshot(str(out / f"tui-{backend}-form.svg"))
        await pilot.press("ctrl+r")
        await wait_for(lambda: isinstance(app.screen, (RunScreen, ProfileScreen)), 30)
        run_screen = next(s for s in app.screen_stack if isinstance(s, RunScreen))
        await wait_for(lambda: run_screen.result is not None or run_screen.problem is not None, 300)
        await pilot.pause(0.5)
        lines = [f"backend={backend}", run_screen.status_text()]
        if isinstance(app.screen, ProfileScreen):
            app.save_screenshot(str(out / f"tui-{backend}-table.svg"))
            table = app.screen.query_one(ProfileTable)
            lines += [table.header_text(140)] + [table.row_text(row, 140) for row in range(len(table.rows))]
            await pilot.press("l")
            await pilot.pause()
        app.save_screenshot(str(out / f"tui-{backend}-run.svg"))
        lines.append(run_screen.result.verdict.message if run_screen.result else run_screen.problem)
    text = "\n".join(lines) + "\n"
    (out / f"tui-{backend}.txt").write_text(text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--backend", action="append", default=[])
    parser.add_argument("--size", default="1048576")
    parser.add_argument("--iters", default="20")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for backend in args.backend or ["auto"]:
        print(asyncio.run(capture(args.out, backend, args.size, args.iters)))


if __name__ == "__main__":
    main()
