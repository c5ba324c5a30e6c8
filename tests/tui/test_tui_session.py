"""The interactive session driven through Textual's pilot: the form, a real CPU run, cancel, runs, sample."""

from __future__ import annotations

import pytest
from textual.widgets import Button, Input, Switch

from proton_tui.engine.params import RunParams
from proton_tui.hatchet import load_profile
from proton_tui.tui.app import ProtonApp, sample_capture
from proton_tui.tui.screens.form import FormScreen
from proton_tui.tui.screens.profile import ProfileScreen
from proton_tui.tui.screens.run import RunScreen
from proton_tui.tui.screens.runs import RunsScreen
from proton_tui.tui.widgets.profile_table import ProfileTable
from tests.helpers import SCRIPTS, TRITON_VERSION, payload_processes, wait_for

SIZE = (120, 40)


async def detected_launch(pilot) -> FormScreen:
    screen = pilot.app.screen
    assert isinstance(screen, FormScreen)
    await wait_for(lambda: screen.info is not None or screen.probe_error is not None)
    await pilot.pause()
    return screen


async def set_input(pilot, screen, field: str, value: str) -> None:
    screen.query_one(f"#{field}", Input).value = value
    await pilot.pause()


@pytest.mark.slow
async def test_form_validates_inline_and_disables_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        assert f"Triton {TRITON_VERSION}" in str(screen.query_one("#detection").render())
        await set_input(pilot, screen, "size", "[red]1M[/]")  # what is typed is shown as typed, never as markup
        assert screen.query_one("#run", Button).tooltip.plain.startswith("Run can't start: Size: '[red]1M[/]'")
        await set_input(pilot, screen, "size", "1M")
        await set_input(pilot, screen, "block_size", "1000")
        assert screen.query_one("#run", Button).disabled
        assert str(screen.query_one("#run-reason").render()).startswith("Run can't start: Block size: 1000 is not a power of two")
        assert "not a power of two" in str(screen.query_one("#block_size-error").render())
        findings = str(screen.query_one("#findings").render())
        assert findings.startswith("✗ Block size: 1000 is not a power of two") and "--" not in findings
        await set_input(pilot, screen, "block_size", "2^10")
        await set_input(pilot, screen, "size", "1M")
        assert str(screen.query_one("#block_size-error").render()) == ""
        assert screen.form_params(profile=False).size == 2**20 and screen.form_params().block_size == 1024


@pytest.mark.slow
async def test_no_gpu_form_offers_cpu_check_and_marks_backends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        if screen.info.gpu_count:
            pytest.skip("this machine has a GPU: the no-GPU launch screen does not apply")
        assert "no GPU found" in str(screen.query_one("#detection").render())
        assert screen.query_one("#profile", Switch).value is False  # nothing to profile without a GPU
        screen.query_one("#profile", Switch).value = True
        await pilot.pause()
        findings = str(screen.query_one("#findings").render())
        assert "sees no GPU, and Proton profiles only on one: the CPU check (F2)" in findings
        run = screen.query_one("#run", Button)
        assert run.disabled and run.tooltip.plain.startswith("Run can't start: ") and "sees no GPU" in run.tooltip.plain
        reason = screen.query_one("#run-reason")  # said where the eye is, under the buttons
        assert reason.display and str(reason.render()) == run.tooltip.plain and reason.region.y > run.region.y
        if not screen.info.triton_at_least("3.8.0"):  # the version's own reason comes first for that backend
            assert "rocprofiler unavailable: backend rocprofiler needs Triton >= 3.8.0" in findings
        buttons = {button.name: button for button in screen.query("#backend RadioButton")}
        # disabled for a reason of its own (the version), not for the one every backend shares (no GPU here)
        assert buttons["rocprofiler"].disabled == (not screen.info.triton_at_least("3.8.0"))
        assert not buttons["auto"].disabled and not buttons["cupti"].disabled


@pytest.mark.slow
async def test_run_the_real_payload_on_cpu_streams_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        await set_input(pilot, screen, "size", "4096")
        await set_input(pilot, screen, "iters", "2")
        screen.query_one("#profile", Switch).value = False
        await pilot.pause()
        await pilot.press("ctrl+r")
        await wait_for(lambda: isinstance(app.screen, RunScreen))
        run_screen = app.screen
        await wait_for(lambda: run_screen.result is not None or run_screen.problem is not None)
        await pilot.pause()
        assert run_screen.result.verdict.passed, run_screen.result.verdict.message
        status = run_screen.status_text()
        assert status.count("PASS") == 1 and "max_abs_err=0.000e+00" in status
        offered = [key[2] for key in run_screen.query_one("KeyBar").keys]
        assert "Back" in offered and not {"Cancel run", "View capture"} & set(offered)  # nothing to cancel or view
        log_text = "\n".join(run_screen.query_one("#run-log").lines)
        assert "vecadd: size=4096 iters=2 block_size=1024" in log_text and "vecadd: PASS" in log_text
        assert (run_screen.result.run_dir / "run.json").exists()
        assert app.runs == [run_screen.result]
        await pilot.press("f4")
        assert isinstance(app.screen, RunsScreen)
        (label,) = [label for label, _, _ in app.screen.entries]
        assert label.startswith("● ") and "unprofiled" in label  # made by this process
        await pilot.press("enter")  # reopen the run: no capture, so its log and verdict
        assert isinstance(app.screen, RunScreen) and app.screen.result is run_screen.result
        await pilot.pause()
        assert "vecadd: PASS" in "\n".join(app.screen.query_one("#run-log").lines)  # its log, read back


@pytest.mark.slow
async def test_cancel_and_quit_leave_no_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = "4194301"  # a size no other test uses, to find this run's processes
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(RunScreen(RunParams(size=marker, iters=100000, device="cpu", profile=False, output=tmp_path)))
        await wait_for(lambda: bool(payload_processes(marker)))
        run_screen = app.screen
        await wait_for(lambda: "vecadd: size=" in "\n".join(run_screen.query_one("#run-log").lines))
        await pilot.press("x")
        await wait_for(lambda: run_screen.result is not None, 30)
        assert run_screen.result.verdict.outcome.value == "cancelled"
        assert payload_processes(marker) == []
        # Quitting during a run ends it too.
        app.push_screen(RunScreen(RunParams(size=marker, iters=100000, device="cpu", profile=False, output=tmp_path)))
        await wait_for(lambda: bool(payload_processes(marker)))
    await wait_for(lambda: payload_processes(marker) == [], 30)


async def test_sample_capture_opens_a_real_table():
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        assert isinstance(app.screen, ProfileScreen)
        table = app.screen.query_one(ProfileTable)
        assert table.profile.path == sample_capture()
        assert "add_kernel<n=268435456>" in table.model.text(1, 120)


async def test_a_flood_of_output_streams_in_batches_and_the_ui_answers(tmp_path):
    """100,000 lines reach the log (the newest LOG_LINES kept, all of them in stdout.log) while keys still work."""
    from proton_tui.tui.dialogs.help import HelpScreen
    from proton_tui.tui.widgets.batched_log import LOG_LINES

    flood = SCRIPTS / "flood.py"
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        params = RunParams(size=100_000, iters=1, profile=False, device="cpu", output=tmp_path, payload=flood)
        app.push_screen(RunScreen(params))
        await pilot.pause()
        run_screen = app.screen
        await wait_for(lambda: run_screen.query_one("#run-log").line_count > 0, 60)
        await pilot.press("f1")  # the UI answers while lines pour in
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await wait_for(lambda: run_screen.result is not None, 120)
        await pilot.pause()
        log = run_screen.query_one("#run-log")
        assert log.line_count == LOG_LINES and log.lines[-1] == "vecadd: PASS"
        assert run_screen.result.verdict.passed
        assert (run_screen.result.run_dir / "stdout.log").read_text().count("\n") == 100_000 + 3


async def test_a_refused_run_gets_a_panel_with_its_remedy_in_the_forms_words(tmp_path):
    """Profiling the Triton interpreter is refused: the panel says why and what to do, naming the form's controls
    (not command-line flags)."""
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(RunScreen(RunParams(size=1024, iters=1, device="cpu", profile=True, output=tmp_path)))
        await pilot.pause()
        run_screen = app.screen
        await wait_for(lambda: run_screen.result is not None or run_screen.problem is not None, 120)
        await pilot.pause()
        panel = str(run_screen.query_one("#verdict-panel").render())
        assert run_screen.query_one("#verdict-panel").has_class("fail")
        assert panel.startswith("refused configuration: Device cpu runs the Triton interpreter")
        assert "'profile with Proton' switched off" in panel and "the CPU check (F2)" in panel and "--" not in panel
        assert isinstance(app.screen, RunScreen)  # no table to open: the log and the panel stay


async def test_a_viewer_reached_from_the_form_goes_back_to_it(tmp_path, monkeypatch):
    """From the form's sample capture: q, b and Escape (with no bar open) go back to the form, Escape with the
    filter bar open closes the bar only; the key bar offers Back on q and Quit only on ctrl+q, which quits from the
    viewer."""
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        await detected_launch(pilot)
        for key in ("q", "b", "escape"):
            await pilot.press("f3")
            await pilot.pause()
            assert isinstance(app.screen, ProfileScreen)
            bar = app.screen.query_one("KeyBar")
            assert ("q", "q", "Back", True) in bar.keys
            assert [key for key in bar.keys if key[2] == "Quit"] == [("ctrl+q", "^q", "Quit", True)]
            if key == "escape":
                await pilot.press("f")
                await pilot.pause()
                await pilot.press("escape")
                await pilot.pause()
                assert isinstance(app.screen, ProfileScreen) and not app.screen.query_one("#filter-bar").display
                app.screen.query_one(ProfileTable).focus()
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, FormScreen), key
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_a_capture_opened_on_its_own_quits_with_q_and_offers_no_run_keys():
    app = ProtonApp(load_profile(sample_capture()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.screen.query_one("KeyBar")
        descriptions = [key[2] for key in bar.keys]
        assert "Quit" in descriptions and not {"Back", "Run log", "Runs"} & set(descriptions)
        await pilot.press("b", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ProfileScreen) and app.is_running
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


async def test_the_form_is_usable_at_80_by_24(tmp_path, monkeypatch):
    """Every control is whole within 80 columns (the device choice on one line, both switches there), and one
    that is below the fold scrolls into view when focused."""
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await detected_launch(pilot)
        for selector in ("#size", "#iters", "#block_size", "#device", "#python", "#profile", "#hook", "#backend",
                         "#context", "#mode", "#run", "#cpu-check", "#sample"):
            widget = screen.query_one(selector)
            assert widget.region.width > 0 and widget.region.right <= 80, (selector, widget.region)
        assert screen.query_one("#device").region.height == 3  # "auto" on one line, not split over two
        for selector in ("#hook", "#mode"):
            screen.query_one(selector).focus()
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()  # the form scrolls to the focused control
            region = screen.query_one(selector).region
            assert region.y >= 0 and region.bottom <= 23, (selector, region)  # above the key bar
        bar = [key[2] for key in screen.query_one("KeyBar").keys]
        assert "Help" in bar and "Run" in bar


@pytest.mark.slow
async def test_the_cpu_check_runs_at_the_interpreters_size_unless_told_otherwise(tmp_path, monkeypatch):
    """F2 with the form's (GPU) defaults: 4096 × 2, said so, done in seconds. With a size typed in: that size (and
    the interpreter's launches), and a larger one says up front about how long the interpreter takes."""
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await detected_launch(pilot)
        await pilot.press("f2")
        await wait_for(lambda: isinstance(app.screen, RunScreen))
        run_screen = app.screen
        assert (run_screen.params.size, run_screen.params.iters, run_screen.params.device) == (4096, 2, "cpu")
        assert any("CPU check through the Triton interpreter at 4,096 elements × 2 launches, about " in n.message
                   and "(Size: the interpreter's 4,096, not the form's 1,048,576, Iterations: the interpreter's 2, not "
                   "the form's 20; change them to run another)" in n.message for n in app._notifications)
        await wait_for(lambda: run_screen.result is not None, 120)
        assert run_screen.result.verdict.passed
        await pilot.press("b")
        await pilot.pause()
        form = app.screen
        await set_input(pilot, form, "size", "4M")
        await pilot.press("f2")
        await wait_for(lambda: isinstance(app.screen, RunScreen) and app.screen is not run_screen)
        # the size typed is kept; the launches left at their default are the interpreter's, as `run` has them
        assert app.screen.params.size == 4 * 2**20 and app.screen.params.iters == 2
        assert any(f"at {4 * 2**20:,} elements × 2 launches, about " in n.message and
                   "(Iterations: the interpreter's 2, not the form's 20; change it to run another)" in n.message
                   for n in app._notifications)
        assert " s of about " in app.screen.status_text()
        await pilot.press("escape")  # cancel it
        await wait_for(lambda: app.screen.result is not None, 60)


async def test_the_form_shows_the_parameter_tables_defaults_and_choices(tmp_path, monkeypatch):
    """Each field of the form starts at the table's default, under the table's label, and offers its choices."""
    from textual.widgets import Label, RadioSet, Select

    from proton_tui.engine.params import PARAMS
    from proton_tui.tui.screens.form import CHOICES, FIELDS, INSTRUMENTATION_FIELDS

    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        labels = {str(label.render()) for label in screen.query(Label)}
        for field in (*FIELDS, *INSTRUMENTATION_FIELDS):
            assert screen.query_one(f"#{field}", Input).value == PARAMS[field].text, field
            assert PARAMS[field].label in labels, field
        for radio_id, field in CHOICES.items():
            param = PARAMS[field]
            radio = screen.query_one(f"#{radio_id}", RadioSet)
            assert [button.name for button in radio.query("RadioButton")] == list(param.offered or param.choices)
            assert radio.pressed_button.name == param.default and param.label in labels, field
        assert screen.query_one("#device", Select).value == PARAMS["device"].default
        assert screen.query_one("#hook", Switch).value is PARAMS["hook"].default
        params = screen.form_params(profile=True)
        for field in (*FIELDS, *CHOICES.values(), "device", "hook"):
            assert getattr(params, field) == getattr(RunParams(), field), field


@pytest.mark.slow
async def test_run_without_a_gpu_is_sized_for_the_interpreter_as_on_the_command_line(tmp_path, monkeypatch):
    """Run with no GPU (so unprofiled) and Size and Iterations left alone: 4096 × 2, as `run --no-profile` has it."""
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await detected_launch(pilot)
        if screen.info.gpu_count:
            pytest.skip("this machine has a GPU: the payload would not run through the interpreter")
        await set_input(pilot, screen, "iters", "3")
        await pilot.press("ctrl+r")
        await wait_for(lambda: isinstance(app.screen, RunScreen))
        assert (app.screen.params.size, app.screen.params.iters, app.screen.params.profile) == (4096, 3, False)
        # said up front: why Proton is off, what runs, how long it should take; the status counts towards it
        assert any(n.message.startswith("No GPU here, so Proton is off: Run through the Triton interpreter at "
                                        "4,096 elements × 3 launches, about ") for n in app._notifications)
        assert " s of about " in app.screen.status_text()
        await wait_for(lambda: app.screen.result is not None, 120)
        assert app.screen.result.verdict.passed


async def test_help_on_the_form_explains_each_control_and_lists_no_scroll_keys(tmp_path, monkeypatch):
    """F1 on the form: a line for each control (backend, context, mode, hook, device, interpreter) and each of F2-F5,
    then the form's keys, not Textual's scrolling ones; the palette offers one "Keys" entry."""
    monkeypatch.chdir(tmp_path)
    app = ProtonApp()
    async with app.run_test(size=SIZE) as pilot:
        form = await detected_launch(pilot)
        await pilot.press("f1")
        await pilot.pause()
        help_screen = app.screen
        about = dict(help_screen.about)
        for control in ("Backend", "Context", "Mode", "triton hook", "Device", "Interpreter", "F2 CPU check",
                        "F3 Sample capture", "F4 Runs", "F5 Box check"):
            assert about.get(control), control
        actions = [action for _, action in help_screen.keys]
        assert "Run" in actions and "CPU check" in actions
        assert not {"Scroll Up", "Scroll Down", "Page Up", "Page Down"} & set(actions), actions
        await pilot.press("escape")
        titles = [command.title for command in app.get_system_commands(form)]
        assert titles.count("Keys") == 1


async def test_a_line_wider_than_the_log_is_folded_and_refolded_on_resize(tmp_path):
    """The run log folds a long line onto the next rows (each marked ↪), nothing cut at the panel's edge, and
    folds it again when the terminal is resized."""
    from proton_tui.tui.widgets.batched_log import CONTINUED

    line = "begin " + " ".join(f"word{i:03d}" for i in range(60)) + " end"
    app = ProtonApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(RunScreen(RunParams(device="cpu", profile=False, output=tmp_path,
                                            payload=str(SCRIPTS / "long_line.py"))))
        run_screen = app.screen
        await wait_for(lambda: run_screen.result is not None, 60)
        await pilot.pause()
        log = run_screen.query_one("#run-log")

        def rows_of_the_line() -> list[str]:
            start = next(i for i, row in enumerate(log.lines) if row.startswith("begin "))
            rows = [log.lines[start]]
            rows += [row for row in log.lines[start + 1:] if row.startswith(CONTINUED)]
            return rows

        width = log.scrollable_content_region.width
        rows = rows_of_the_line()
        assert len(rows) > 1 and all(len(row) <= width for row in rows)
        assert rows[0] + "".join(row[len(CONTINUED):] for row in rows[1:]) == line
        await pilot.resize_terminal(140, 30)
        await pilot.pause()
        wider = rows_of_the_line()
        assert len(wider) < len(rows) and all(len(row) <= log.scrollable_content_region.width for row in wider)
        assert wider[0] + "".join(row[len(CONTINUED):] for row in wider[1:]) == line
        assert "vecadd: PASS" in log.lines


async def test_the_form_offers_data_and_format_where_the_interpreters_triton_writes_them(monkeypatch, tmp_path):
    """With the H200's interpreter (Triton 3.6.0, its probe answer recorded there): Data trace is offered and
    builds a -d trace run; Format hatchet_msgpack is disabled, its tooltip saying why (Triton >= 3.7)."""
    app = form_on_the_h200(monkeypatch, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        buttons = {button.name: button for button in screen.query("#data RadioButton, #format RadioButton")}
        assert not buttons["trace"].disabled and buttons["hatchet_msgpack"].disabled
        tooltip = buttons["hatchet_msgpack"].tooltip.plain
        assert "needs Triton >= 3.7.0" in tooltip and "Format hatchet" in tooltip
        buttons["trace"].value = True
        await pilot.pause()
        params = screen.form_params()
        assert params.data == "trace" and not screen.query_one("#run", Button).disabled


async def test_the_instrumentation_options_on_the_form(monkeypatch, tmp_path):
    """With the H200's interpreter (Triton 3.6.0): the Instrumentation panel is live only under backend
    instrumentation; warps and buffer size reach the run; a too-small buffer is warned of, a granularity Proton does
    not compile is disabled with why, and options in Mode cli stop Run with the remedy in the form's words."""
    app = form_on_the_h200(monkeypatch, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await detected_launch(pilot)
        panel = screen.query_one("#instrumentation-panel")
        assert panel.disabled and screen.form_params().warps == ()
        backends = {button.name: button for button in screen.query("#backend RadioButton")}
        backends["instrumentation"].value = True
        await pilot.pause()
        assert not panel.disabled
        granularity = {button.name: button for button in screen.query("#granularity RadioButton")}
        assert not granularity["warp"].disabled and granularity["cta"].disabled
        assert "Proton compiles only granularity warp" in granularity["cta"].tooltip.plain
        screen.query_one("#warps", Input).value = "0,2"
        screen.query_one("#buffer_size", Input).value = "64"
        await pilot.pause()
        findings = str(screen.query_one("#findings").render())
        assert "drops events" in findings and "at least 128 bytes" in findings
        modes = {button.name: button for button in screen.query("#mode RadioButton")}
        assert screen.query_one("#run", Button).disabled  # Mode cli: Proton 3.6's command line ignores -m
        assert "Mode env" in str(screen.query_one("#run-reason").render())
        modes["env"].value = True
        await pilot.pause()
        params = screen.form_params()
        assert params.warps == (0, 2) and params.buffer_size == 64
        assert not screen.query_one("#run", Button).disabled
        screen.query_one("#buffer_size", Input).value = "1000"
        await pilot.pause()
        assert "not a power of two" in str(screen.query_one("#buffer_size-error").render())
        assert screen.query_one("#run", Button).disabled


async def test_the_backend_choices_are_the_gpu_flows_tabs_from_the_forms_start(monkeypatch, tmp_path):
    """The GPU flow in a real terminal reaches Backend with this many Tabs."""
    from tests.e2e.test_gpu_flow import BACKEND_FIELD_TABS

    app = form_on_the_h200(monkeypatch, tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await detected_launch(pilot)
        for _ in range(BACKEND_FIELD_TABS):
            await pilot.press("tab")
        assert app.focused.id == "backend"


def form_on_the_h200(monkeypatch, tmp_path) -> ProtonApp:
    """The form as it opens with the H200's interpreter: its recorded probe answer stands for the probe."""
    from tests.helpers import H200_PYTHON, h200_probe, plant_probe

    plant_probe(monkeypatch, H200_PYTHON, h200_probe())
    monkeypatch.chdir(tmp_path)
    return ProtonApp(python=H200_PYTHON)
