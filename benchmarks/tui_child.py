"""One measured TUI session, run by bench_view.py in a fresh interpreter (start-up and imports count).

    python benchmarks/tui_child.py FILE [--profile OUT.prof]

Follows `proton-tui view FILE` on a terminal: imports the entry point (`proton_tui.entry`, which opens `view FILE`
without the command line's typer), checks and maps FILE (as `view` does before the TUI starts), makes the
viewer as the command does (the TUI imported meanwhile) and opens it
headless with Textual's `App.run_test(size=(120, 40))`: its first screen says the capture is being read and then
finishes the load. Waits for the table to paint, presses `down` and, once it has been handled and repainted,
prints `INTERACTIVE` on stdout (the parent times spawn -> that line). Then it times `enter` on a collapsed scope,
`e` (expand all) and `K` (kernel summary) and prints one JSON line of phase times (seconds since this script
started) and ru_maxrss. Waiting is done without sleeps (see `settled`). With --profile, cProfile covers everything
up to INTERACTIVE and the stats go to OUT.prof.
"""

import time

T0 = time.perf_counter()

import importlib  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402


def now() -> float:
    return time.perf_counter() - T0


def maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def main() -> int:
    path = sys.argv[1]
    profiler = None
    if "--profile" in sys.argv:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    out: dict = {}
    importlib.import_module("proton_tui.entry")  # `proton-tui view FILE` starts here
    viewer = importlib.import_module("proton_tui.tui.launch")
    from proton_tui.hatchet import PendingLoad

    out["import"] = now()
    pending = PendingLoad(Path(path), False)  # as `open_viewer` does: the file checked and mapped
    app = viewer.viewer_app(pending)  # the TUI imported meanwhile
    import asyncio  # here, not first: the command gets it with Textual

    from textual import events

    from proton_tui.tui.widgets.profile_table import ProfileTable

    out["tui_imported"] = now()
    finish = app.opening.finish

    read: list = []  # the event loop that waits for the read, and its event

    def timed_finish():
        profile = finish()
        out["loaded"] = now()
        out["nodes_loaded"] = profile.node_count
        out["rss_after_load"] = maxrss()
        if read:
            read[0].call_soon_threadsafe(read[1].set)
        return profile

    app.opening.finish = timed_finish

    first_render: list[float] = []
    original = ProfileTable.render_line

    def render_line(self, y):
        if not first_render:
            first_render.append(now())
        return original(self, y)

    ProfileTable.render_line = render_line
    actions_done: list[str] = []  # every action a key ran, once it has returned
    original_dispatch = app._dispatch_action

    async def dispatch_action(*args, **kwargs):
        handled = await original_dispatch(*args, **kwargs)
        actions_done.append(args[1] if len(args) > 1 else "")
        return handled

    app._dispatch_action = dispatch_action

    async def settled(pilot, done) -> None:
        """Until `done()` holds and every message queued in the app and the screen's widgets has been handled, then
        paint what changed (as the next refresh tick would). No sleeps: Textual's `pilot.pause()` and `press()` wait
        for idle in steps of at least 20 ms (three of them per key), which is the harness's time, not the app's."""
        give_up = time.perf_counter() + 60
        while True:
            await pilot._wait_for_screen()
            if done():
                break
            if app._exception is not None:
                raise RuntimeError(f"the app failed: {app._exception!r}")
            if time.perf_counter() > give_up:
                raise TimeoutError("not handled within 60 s")
            await asyncio.sleep(0)
        await pilot._wait_for_screen()  # what handling it posted (the detail pane's update)
        app.screen._on_timer_update()

    async def key(pilot, name: str) -> float:
        """Seconds from posting key `name` (as the terminal driver does) until its action has run, what that posted
        has been handled, and the result is painted."""
        start, ran = time.perf_counter(), len(actions_done)
        app.post_message(events.Key(name, None))
        await settled(pilot, lambda: len(actions_done) > ran)
        return time.perf_counter() - start

    async def drive() -> None:
        read.extend([asyncio.get_running_loop(), asyncio.Event()])
        async with app.run_test(size=(120, 40)) as pilot:
            out["app_ready"] = now()
            await asyncio.wait_for(read[1].wait(), 600)  # the read runs on its own thread: no spinning that takes the GIL
            await settled(pilot, lambda: bool(first_render))
            table = app.screen.query_one(ProfileTable)
            out["first_paint"] = now()
            out["table_first_render_line"] = first_render[0]
            out["rows_initial"] = len(table.model.rows)
            out["key_down"] = await key(pilot, "down")
            if table.cursor != 1:
                raise SystemExit(f"down was not handled: cursor {table.cursor}")
            out["interactive"] = now()
            out["cpu_interactive"] = time.process_time()  # user+sys of this process since it started
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(sys.argv[sys.argv.index("--profile") + 1])
            print("INTERACTIVE", flush=True)
            out["rss_interactive"] = maxrss()
            try:
                await after_interactive(pilot, table)
            except Exception as error:  # a broken key must not hide the time to interactive
                out["error_after_interactive"] = f"{type(error).__name__}: {error}"

    async def after_interactive(pilot, table) -> None:
        while table.current_node in table.model.expanded and table.cursor + 1 < len(table.model.rows):  # auto-expanded
            await pilot.press("down")
        before = len(table.model.rows)
        out["key_enter"] = await key(pilot, "enter")
        out["enter_rows_added"] = len(table.model.rows) - before
        out["key_expand_all"] = await key(pilot, "e")
        out["rows_expanded_all"] = len(table.model.rows)
        out["key_summary"] = await key(pilot, "K")
        out["summary_rows"] = len(table.model.rows)
        failed = getattr(app, "_exception", None)
        if failed is not None or not table.show_kernels:  # the app crashed: that time is not a keypress's
            out["key_summary"] = None
            raise RuntimeError(f"k (kernel summary) failed: {type(failed).__name__}: {failed}")
        out["done"] = now()
        out["rss_end"] = maxrss()

    try:
        asyncio.run(drive())
    except Exception as error:  # e.g. an exception inside the app, re-raised by run_test on exit
        out.setdefault("error_after_interactive", f"{type(error).__name__}: {error}")
    print(json.dumps(out), flush=True)
    return 0 if "interactive" in out else 1


if __name__ == "__main__":
    sys.exit(main())
