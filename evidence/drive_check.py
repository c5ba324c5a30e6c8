"""Drive the TUI's box check (F5 on the launch form) headless on every visible GPU; save a screenshot and the table.

    python evidence/drive_check.py OUT_DIR
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from textual.widgets import DataTable

from proton_tui.tui.app import ProtonApp
from proton_tui.tui.check_screen import CheckScreen

SIZE = (150, 40)


async def drive(out: Path) -> str:
    app = ProtonApp(output=out / "runs")
    async with app.run_test(size=SIZE) as pilot:
        form = app.screen
        for _ in range(1800):
            if form.info is not None or form.probe_error is not None:
                break
            await asyncio.sleep(0.1)
        await pilot.press("f5")
        screen = app.screen
        assert isinstance(screen, CheckScreen)
        for _ in range(3000):
            if not screen.running:
                break
            await asyncio.sleep(0.1)
        await pilot.pause(0.5)
        app.save_screenshot(str(out / "tui-check.svg"))
        table = screen.query_one(DataTable)
        rows = [" | ".join(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]
        status = str(screen.query_one("#check-status").render())
    return "\n".join([status, *rows]) + "\n"


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    text = asyncio.run(drive(out))
    (out / "tui-check.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
