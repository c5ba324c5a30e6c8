"""What the screens that run a job (a capture, the box check, the doctor) share: a stop event that ends every process
group, running until a report or a problem arrives, Cancel while running and Back once ended."""

from __future__ import annotations

import asyncio

from textual.screen import Screen


class JobScreen(Screen):
    """A screen whose worker runs a job until it posts a report or the problem that stopped it."""

    CANCEL_NOTICE = "Cancelling: ending every process group…"

    def __init__(self) -> None:
        super().__init__()
        self.report = None
        self.problem: str | None = None
        self.stop = asyncio.Event()

    def on_unmount(self) -> None:
        self.stop.set()  # a backstop: the worker's cancellation already ends every process group

    @property
    def running(self) -> bool:
        return self.report is None and self.problem is None

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "cancel":
            return self.running and not self.stop.is_set()  # hidden once there is nothing to cancel
        if action == "back":
            return (not self.running) or None
        return True

    def action_cancel(self) -> None:
        if self.running and not self.stop.is_set():
            self.stop.set()
            self.notify(self.CANCEL_NOTICE, timeout=2)
            self.cancelling()
            self.refresh_bindings()

    def cancelling(self) -> None:
        """Show that the cancel is under way."""

    def action_back(self) -> None:
        if not self.running:
            self.dismiss()
