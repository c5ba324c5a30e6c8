"""Make the README's screenshots (SVG, from the app itself): the viewer on the shipped H200 sample capture, and the
form of a new capture. `python docs/make_screenshots.py` from the repository root rewrites docs/images/."""

from __future__ import annotations

import asyncio
from pathlib import Path

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp, sample_capture

IMAGES = Path(__file__).parent / "images"
SIZE = (120, 34)


async def viewer() -> None:
    app = ProtonApp(load_profile(sample_capture()))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one("#table")
        while table.display_spec.names.readable is None:
            await pilot.pause(0.05)
        await pilot.press("down")
        await pilot.pause()
        app.save_screenshot(str(IMAGES / "viewer.svg"))


async def form() -> None:
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        while screen.info is None and screen.probe_error is None:
            await pilot.pause(0.1)
        await pilot.pause()
        app.save_screenshot(str(IMAGES / "form.svg"))


if __name__ == "__main__":
    IMAGES.mkdir(exist_ok=True)
    asyncio.run(viewer())
    asyncio.run(form())
