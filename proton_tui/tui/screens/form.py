"""The form of a new capture: the payload's and Proton's parameters, checked as they are typed."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.validation import ValidationResult, Validator
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Select, Static, Switch

from proton_tui.console import printable
from proton_tui.engine.params import (
    PARAMS,
    ParamError,
    RunParams,
    interpreter_sized,
    label_of,
    runs_interpreted,
)
from proton_tui.engine.payload import install_command
from proton_tui.engine.probe import InterpreterInfo, ProbeError, probe_interpreter
from proton_tui.engine.rules import Finding, check_rules
from proton_tui.engine.sizes import interpreter_seconds
from proton_tui.engine.workload import WorkloadError
from proton_tui.tui.screens import over_another_screen
from proton_tui.tui.widgets.form_controls import CutInput, MarkedRadioButton, SwitchLabel
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.tui.widgets.workload_panel import COMMAND, WorkloadPanel
from proton_tui.view.formatting import counted


class ParamValidator(Validator):
    """Validate an Input with the capture engine's own parser, so the form and the CLI agree."""

    def __init__(self, parse) -> None:
        super().__init__()
        self.parse = parse

    def validate(self, value: str) -> ValidationResult:
        try:
            self.parse(value)
        except ParamError as error:
            return self.failure(error.reason)
        return self.success()


FIELDS = ("size", "iters", "block_size")  # the payload's typed fields (ids: RunParams' fields)
INSTRUMENTATION_FIELDS = ("warps", "buffer_size")
CHOICES = {"backend": "backend", "context": "context", "mode": "mode", "data": "data", "format": "output_format",
           "granularity": "granularity"}  # radio set id: RunParams' field
# the form's controls as F1 explains them, in the form's order
CONTROLS = ("size", "iters", "block_size", "device", "python", "profile", "hook", "backend", "context", "mode",
            "data", "output_format", "warps", "buffer_size", "granularity")
SIZING = ("size", "iters")  # what the Triton interpreter sizes itself where these are left at their defaults

DEVICES = (("auto", "auto"), ("cpu (Triton interpreter)", "cpu"))  # then a row per GPU the interpreter sees
# Run's reason when the interpreter lacks Triton or torch: the top line has the error and the install command
IMPORTS_MISSING = "the interpreter lacks what the payload imports (the top line says how to install it)"
SLOW_CHECK_S = 10.0  # a CPU check expected to take longer than this is announced with its estimate


def field_input(field: str, **extra) -> Input:
    """A typed field of the form: its default, checks and tooltip from the parameter table."""
    param = PARAMS[field]
    widget = Input(param.text, id=field, validators=[ParamValidator(param.check)], **extra)
    widget.tooltip = param.tooltip
    return widget


def radio_set(radio_id: str) -> RadioSet:
    """The choices the form offers for a parameter, its default pressed."""
    param = PARAMS[CHOICES[radio_id]]
    return RadioSet(*(MarkedRadioButton(choice, value=choice == param.default, name=choice)
                      for choice in param.offered or param.choices), id=radio_id)


class Detected(Message):
    """The workload's interpreter answered the probe (or failed to)."""

    def __init__(self, python: str, info: InterpreterInfo | None, error: str | None) -> None:
        super().__init__()
        self.python, self.info, self.error = python, info, error


class FormScreen(Screen):
    """Set the run's parameters; Run is enabled only for a valid configuration this interpreter can run."""

    BINDINGS = [
        Binding("ctrl+r", "run", "Run", priority=True),
        Binding("f2", "cpu_check", "CPU check"),
        Binding("f3", "app.open_sample", "Sample capture"),
        Binding("f4", "app.show_runs", "Runs"),
        Binding("f5", "app.box_check", "Box check"),
        Binding("f6", "app.doctor", "Doctor"),
        Binding("q", "app.quit", "Quit", show=False),  # in a text field, a letter typed
        Binding("escape", "back", "Back"),  # opened over a viewer (the palette's New capture): back to it
    ]

    def action_back(self) -> None:
        if over_another_screen(self):  # a viewer's palette opened it: Escape goes back there
            self.dismiss()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if action == "back":
            return over_another_screen(self)
        return True

    HELP_ABOUT = (
        *((PARAMS[field].label, PARAMS[field].form_about) for field in CONTROLS),
        ("F2 CPU check", "the payload through the Triton interpreter, unprofiled, small: does the kernel pass"),
        ("F3 Sample capture", "an H200 capture shipped with proton-tui, to try the viewer"),
        ("F4 Runs", "every run and box check of the output folder, newest first; Enter reopens one"),
        ("F5 Box check", "vecadd on every visible GPU at once, a row each: is each GPU as fast as its neighbours"),
        ("F6 Doctor", "does Proton work here: the facts that decide it, and every backend, context, output and mode "
                      "the interpreter's Triton offers, proved by a short capture each"),
    )

    class RunRequested(Message):
        """The user asked to run these parameters."""

        def __init__(self, params: RunParams, info: InterpreterInfo | None) -> None:
            super().__init__()
            self.params, self.info = params, info

    def __init__(self, python: str | None = None, output: Path | None = None) -> None:
        super().__init__()
        self.python = python or sys.executable
        self.output = output
        self.info: InterpreterInfo | None = None
        self.probe_error: str | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form"):
            yield Static(Text("Detecting the interpreter…"), id="detection")
            with Horizontal(id="columns"):
                with Vertical(classes="column"):
                    yield WorkloadPanel()
                    with Vertical(id="payload-panel", classes="panel") as payload:
                        payload.border_title = "Payload: vecadd"
                        for field in FIELDS:
                            with Horizontal(classes="field-row"):
                                yield Label(PARAMS[field].label, classes="field-label")
                                yield field_input(field)
                            yield Label("", id=f"{field}-error", classes="error")
                        with Horizontal(classes="field-row"):
                            yield Label(PARAMS["device"].label, classes="field-label")
                            yield Select(DEVICES, value=PARAMS["device"].default, allow_blank=False, id="device")
                    with Vertical(id="interpreter-panel", classes="panel") as interpreter:
                        interpreter.border_title = "Interpreter"
                        interpreter.border_subtitle = "Enter re-detects"
                        yield CutInput(self.python, id="python")
                    with Vertical(id="instrumentation-panel", classes="panel") as instrumentation:
                        instrumentation.border_title = "Instrumentation"
                        for field in INSTRUMENTATION_FIELDS:
                            with Horizontal(classes="field-row"):
                                yield Label(PARAMS[field].label, classes="field-label")
                                yield field_input(field, placeholder="all" if field == "warps" else "")
                            yield Label("", id=f"{field}-error", classes="error")
                        yield Label(PARAMS["granularity"].label, classes="choice-label")
                        yield radio_set("granularity")
                with Vertical(id="proton-panel", classes="column panel") as proton:
                    proton.border_title = "Proton"
                    with Horizontal(classes="switch-row"):
                        yield Switch(PARAMS["profile"].default, id="profile")
                        yield SwitchLabel(PARAMS["profile"].label, PARAMS["profile"].default, id="profile-label")
                    with Horizontal(classes="switch-row"):
                        yield Switch(PARAMS["hook"].default, id="hook")
                        yield SwitchLabel(f"{PARAMS['hook'].label} (-k triton)", PARAMS["hook"].default,
                                          id="hook-label")
                    yield Label(PARAMS["backend"].label, classes="choice-label")
                    yield radio_set("backend")
                    for pair in (("context", "mode"), ("data",), ("format",)):  # hatchet_msgpack: a row of its own
                        with Horizontal(classes="radio-row"):
                            for radio_id in pair:
                                with Vertical(classes="choice"):
                                    yield Label(PARAMS[CHOICES[radio_id]].label, classes="choice-label")
                                    yield radio_set(radio_id)
            yield Static(id="findings")
            with Horizontal(id="buttons"):
                yield Button("Run", id="run", variant="success", disabled=True)
                yield Button("CPU check (no profile)", id="cpu-check")
                yield Button("Open sample capture", id="sample")
            yield Static(id="run-reason")
        yield KeyBar()

    def on_mount(self) -> None:
        self.title = "proton-tui — new capture"
        for error_label in self.query(".error"):
            error_label.display = False
        self.detect(self.python)

    # ---- detection ----------------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="probe", exit_on_error=False)
    def detect(self, python: str) -> None:
        """Probe the workload's interpreter off the UI thread; the answer comes back as a message."""
        try:
            self.post_message(Detected(python, probe_interpreter(python), None))
        except ProbeError as error:
            self.post_message(Detected(python, None, str(error)))

    def on_detected(self, message: Detected) -> None:
        if message.python != self.query_one("#python", Input).value:
            return  # an answer for an interpreter the user has since replaced
        self.info, self.probe_error = message.info, message.error
        self.query_one("#detection", Static).update(Text(self.detection_text()))
        if self.info is not None:
            devices = [*DEVICES, *((f"{i}: {name}", str(i)) for i, name in enumerate(self.info.gpu_names))]
            self.query_one("#device", Select).set_options(devices)
            if not self.info.gpu_count:
                self.query_one("#profile", Switch).value = False
        self.refresh_form()

    def detection_text(self) -> str:
        if self.info is None:
            return f"Interpreter {self.python}: {self.probe_error}"
        info = self.info
        triton = f"Triton {info.triton_version}" if info.triton_version else f"no Triton ({info.triton_error})"
        torch = f"torch {info.torch_version}" if info.torch_version else f"no torch ({info.torch_error})"
        if info.triton_version is None or info.torch_version is None:  # the one place the form says so
            return (f"Python {info.python_version} · {triton} · {torch}. This installs what the payload needs, "
                    f"then F2 runs the CPU check:\n  {install_command(info.python)}")
        if info.gpu_count:
            gpus = f"{counted(info.gpu_count, info.gpu_vendor + ' GPU')}: {', '.join(info.gpu_names)}"
        else:
            gpus = ("no GPU found: Proton needs one. Run the CPU check (payload through the Triton interpreter, "
                    "no profile) or open the sample capture from an H200")
        return f"Python {info.python_version} · {triton} · {torch} · {gpus}"

    # ---- the form -----------------------------------------------------------------------------------------------
    def _choice(self, radio_id: str) -> str:
        pressed = self.query_one(f"#{radio_id}", RadioSet).pressed_button
        return pressed.name if pressed is not None else ""

    def form_params(self, **overrides) -> RunParams:
        """The form as RunParams; raises ParamError naming the first bad field."""
        values = {
            **{field: self.query_one(f"#{field}", Input).value for field in FIELDS},
            **{field: self._choice(radio_id) for radio_id, field in CHOICES.items() if field != "granularity"},
            "hook": self.query_one("#hook", Switch).value,
            "python": self.query_one("#python", Input).value,
            "device": str(self.query_one("#device", Select).value),
            "profile": self.query_one("#profile", Switch).value,
        }
        if values["profile"] and values["backend"] == "instrumentation":  # the panel's values count only then
            values.update({field: self.query_one(f"#{field}", Input).value for field in INSTRUMENTATION_FIELDS},
                          granularity=self._choice("granularity"))
        if self.output is not None:
            values["output"] = self.output
        try:
            workload = self.query_one(WorkloadPanel).workload()
        except WorkloadError as error:
            raise ParamError("Command", str(error)) from None
        if workload is not None:  # a command of the user's: the payload's fields do not apply
            values = {key: value for key, value in values.items() if key not in FIELDS}
            values.update(command=workload.argv, cwd=workload.cwd, name=workload.default_name)
        return RunParams(**{**values, **overrides})

    def findings_for(self, params: RunParams) -> list[Finding]:
        return check_rules(params, self.info) if self.info is not None else []

    def refresh_form(self) -> None:
        """Re-check everything: field messages, backends this interpreter cannot run, rules, the Run button."""
        self.query_one("#payload-panel").disabled = self.query_one(WorkloadPanel).chosen == COMMAND
        try:
            params = self.form_params()
        except ParamError as error:  # named by the form's label for that option, not by its flag
            label = label_of(error.flag)
            self.query_one("#findings", Static).update(Text(f"✗ {label}: {error.reason}", style="bold red"))
            self.show_run_state(f"{label}: {error.reason}")
            return
        instrumented = params.profile and params.backend == "instrumentation"
        panel = self.query_one("#instrumentation-panel")
        panel.disabled = not instrumented
        panel.border_subtitle = "" if instrumented else "with backend instrumentation"
        choices = (("backend", "backend"), ("data", "data"), ("format", "output_format"))
        choices += (("granularity", "granularity"),) if instrumented else ()
        # a choice that would bring a refusal of its own: disabled, with that reason as its tooltip
        shared = {finding.text for finding in self.findings_for(params) if finding.refuses}
        for radio, field in choices:
            for button in self.query_one(f"#{radio}", RadioSet).query(RadioButton):
                refusals = [f for f in self.findings_for(replace(params, **{field: button.name}))
                            if f.refuses and f.text not in shared]
                button.tooltip = Text(printable(refusals[0].form_message)) if refusals and params.profile else None
                button.disabled = button.tooltip is not None and button.name != getattr(params, field)
        findings = self.findings_for(params)
        lines = [printable(f"{'✗' if f.refuses else '!'} {f.form_message}") for f in findings if f.about != "imports"]
        if params.profile:
            lines += [
                f"· {button.name} unavailable: {button.tooltip.plain}"
                for radio, field in choices
                for button in self.query_one(f"#{radio}", RadioSet).query(RadioButton)
                if button.tooltip and button.name != getattr(params, field)
            ]
        self.query_one("#findings", Static).update(Text("\n".join(lines)))
        refusals = [f.form_message if f.about != "imports" else IMPORTS_MISSING for f in findings if f.refuses]
        if self.info is None:
            self.show_run_state(self.probe_error or "the interpreter is being detected")
        else:
            self.show_run_state(refusals[0] if refusals else None)

    def show_run_state(self, reason: str | None) -> None:
        """Run enabled, or disabled with why (in its tooltip and under the buttons)."""
        run = self.query_one("#run", Button)
        run.disabled = reason is not None
        text = printable(f"Run can't start: {reason}") if reason else ""
        run.tooltip = Text(text) if reason else "Run the payload under Proton (ctrl+r)"  # Text: never markup
        note = self.query_one("#run-reason", Static)
        note.update(Text(text))
        note.display = reason is not None

    @on(Input.Changed)
    def field_changed(self, event: Input.Changed) -> None:
        if event.input.id in FIELDS or event.input.id in INSTRUMENTATION_FIELDS:
            result = event.validation_result
            message = "" if result is None or result.is_valid else "; ".join(result.failure_descriptions)
            error_label = self.query_one(f"#{event.input.id}-error", Label)
            error_label.update(Text(message))
            error_label.display = bool(message)
        if event.input.id != "python":
            self.refresh_form()

    @on(Input.Submitted, "#python")
    def interpreter_changed(self, event: Input.Submitted) -> None:
        self.python, self.info = event.value, None
        self.query_one("#detection", Static).update(Text(f"Detecting {event.value}…"))
        self.show_run_state("the interpreter is being detected")
        self.detect(event.value)

    @on(Switch.Changed)
    def switch_changed(self, event: Switch.Changed) -> None:
        self.query_one(f"#{event.switch.id}-label", SwitchLabel).show(event.value)
        self.refresh_form()

    @on(RadioSet.Changed)
    @on(Select.Changed)
    @on(WorkloadPanel.Changed)
    def choice_changed(self) -> None:
        self.refresh_form()

    # ---- actions ------------------------------------------------------------------------------------------------
    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        if self.query_one("#run", Button).disabled:
            self.notify("Fix the form first: see the messages above Run.", severity="warning")
            return
        self.request(self.form_params(), "Run")

    @on(Button.Pressed, "#cpu-check")
    def action_cpu_check(self) -> None:
        """The payload through the Triton interpreter, unprofiled."""
        try:
            params = self.form_params(device="cpu", profile=False, command=(), cwd=None,  # the payload, always
                                      name=PARAMS["name"].default)
        except ParamError as error:
            self.notify(f"{label_of(error.flag)}: {error.reason}", severity="error")
            return
        self.request(params, "CPU check")

    def request(self, params: RunParams, what: str) -> None:
        """Ask for the run: one through the Triton interpreter at the interpreter's own small size and launches
        for Size and Iterations left at their defaults (`interpreter_sized`, as the command line does), saying up
        front what runs, why (no GPU) and about how long the interpreter takes."""
        vendor = self.info.gpu_vendor if self.info is not None else ""
        if not params.profile and runs_interpreted(params, vendor) and not params.command:
            given = {field for field in SIZING
                     if self.query_one(f"#{field}", Input).value.strip() != PARAMS[field].text}
            sized = interpreter_sized(params, vendor, given)
            launches = counted(sized.iters, "launch", "launches")
            seconds = interpreter_seconds(sized.size, sized.iters)
            why = "No GPU here, so Proton is off: " if not vendor else ""
            text = (f"{why}{what} through the Triton interpreter at {sized.size:,} elements × {launches}, about "
                    f"{seconds:,.0f} s")
            taken = [(PARAMS[field].label, getattr(sized, field), getattr(params, field)) for field in SIZING
                     if getattr(sized, field) != getattr(params, field)]
            if taken:  # each field left as it was: the interpreter's value, said beside the form's
                text += " (" + ", ".join(f"{label}: the interpreter's {value:,}, not the form's {shown:,}"
                                         for label, value, shown in taken)
                text += f"; change {'it' if len(taken) == 1 else 'them'} to run another)"
            slow = seconds > SLOW_CHECK_S
            self.notify(text, severity="warning" if slow else "information", timeout=8 if slow else 6)
            params = sized
        self.post_message(self.RunRequested(params, self.info))

    @on(Button.Pressed, "#sample")
    def open_sample(self) -> None:
        self.run_action("app.open_sample")
