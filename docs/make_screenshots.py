"""Make the README's screenshots (SVG, from the app itself): the kernel-time table with its share bars and the flame
view, on a real GPT-2 capture from an H200 (tests/fixtures), and the form of a new capture. `python
docs/make_screenshots.py` from the repository root rewrites docs/images/."""

from __future__ import annotations

import asyncio
from pathlib import Path

from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp

IMAGES = Path(__file__).parent / "images"
SIZE = (120, 34)


GPT2 = Path(__file__).parent.parent / "tests" / "fixtures" / "gpt2_shadow.hatchet"


async def viewer(name: str, *keys: str) -> None:
    app = ProtonApp(load_profile(GPT2))
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one("#table")
        while table.display_spec.names.readable is None:
            await pilot.pause(0.05)
        await pilot.press(*keys)
        await pilot.pause()
        app.save_screenshot(str(IMAGES / name))


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
    asyncio.run(viewer("viewer.svg", "down", "down", "enter", "down"))
    asyncio.run(viewer("flame.svg", "down", "down", "g"))
    asyncio.run(form())
