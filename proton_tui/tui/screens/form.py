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

from ...capture.check import CPU_ITERS, CPU_SIZE, interpreter_seconds
from ...capture.params import (
    BACKENDS,
    CONTEXTS,
    DATA,
    FORMATS,
    MODES,
    ParamError,
    RunParams,
    parse_buffer_size,
    parse_count,
    parse_size,
    parse_warps,
)
from ...capture.probe import InterpreterInfo, ProbeError, probe_interpreter
from ...capture.rules import Finding, check_rules
from ...console import printable
from ...formatting import counted
from ..widgets.key_bar import KeyBar


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


FIELDS = {  # id: (label, default, parser, tooltip)
    "size": ("Size", "1048576", lambda v: parse_size(v), "Elements per vector: 1048576, 1M (2^20), 2^20 or 1<<20"),
    "iters": ("Iterations", "20", lambda v: parse_count("--iters", v), "Timed launches after the first (compile)"),
    "block_size": ("Block size", "1024", lambda v: parse_count("--block-size", v, power_of_two=True),
                   "Elements per program: a power of two (tl.arange requires one)"),
}

INSTRUMENTATION_FIELDS = {  # id: (label, default, parser, tooltip)
    "warps": ("Warps", "", parse_warps, "Record only these warps of each CTA (0,2); empty: every warp"),
    "buffer_size": ("Buffer", "0", parse_buffer_size,
                    "The profile buffer per CTA in bytes, a power of two; 0 lets Proton size it"),
}
# Granularities offered (one of each family): Proton compiles only "warp"; the others are shown disabled with why.
GRANULARITY_CHOICES = ("warp", "cta", "warp_group")

SLOW_CHECK_S = 10.0  # a CPU check expected to take longer than this is announced with its estimate
FORM_LABELS = {"--size": "Size", "--iters": "Iterations", "--block-size": "Block size", "--python": "Interpreter",
               "--device": "Device", "--timeout": "Timeout", "--data": "Data", "--format": "Format",
               "--warps": "Warps", "--buffer-size": "Buffer", "--granularity": "Granularity"}


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
        Binding("f1", "app.help", "Help"),
        Binding("ctrl+q", "app.quit", "Quit", show=False),
    ]

    HELP_ABOUT = (
        ("Size", "elements per vector: 1048576, 1M (2^20), 2^20 or 1<<20"),
        ("Iterations", "timed launches after the first one, which compiles the kernel"),
        ("Block size", "elements per program, a power of two (tl.arange requires one)"),
        ("Device", "auto: the GPU the interpreter sees; cpu: the Triton interpreter, which Proton cannot profile"),
        ("Interpreter", "the Python that runs the payload: its torch and Triton decide what runs (Enter re-detects)"),
        ("profile with Proton", "off: the payload alone, checked for correctness, no capture"),
        ("triton hook", "Proton's -k triton: kernel names with their sizes, plus bytes and flops (GB/s, % of peak)"),
        ("Backend", "what Proton records with: auto lets it choose (cupti on NVIDIA; roctracer or rocprofiler on "
                    "AMD); instrumentation times proton.language scopes inside a kernel"),
        ("Context", "shadow: the scopes the program opens; python: Python call stacks"),
        ("Mode", "cli: python -m triton.profiler.proton runs the payload; env: the payload starts Proton itself"),
        ("Data", "tree: the call tree (table, flame view); trace: a Chrome trace, each launch on a timeline"),
        ("Format", "how a tree is written: hatchet (JSON), or hatchet_msgpack (Triton >= 3.7, in Mode env)"),
        ("Warps", "instrumentation: record only these warps of each CTA (0,2), fewer records and less overhead; "
                  "empty records every warp"),
        ("Buffer", "instrumentation: the profile buffer per CTA in bytes (a power of two); too small loses events; "
                   "0 lets Proton size it"),
        ("Granularity", "instrumentation: what one record covers; Proton compiles only warp"),
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
                    with Vertical(id="payload-panel", classes="panel") as payload:
                        payload.border_title = "Payload: vecadd"
                        for field, (title, default, parse, hint) in FIELDS.items():
                            with Horizontal(classes="field-row"):
                                yield Label(title, classes="field-label")
                                field_input = Input(default, id=field, validators=[ParamValidator(parse)])
                                field_input.tooltip = hint
                                yield field_input
                            yield Label("", id=f"{field}-error", classes="error")
                        with Horizontal(classes="field-row"):
                            yield Label("Device", classes="field-label")
                            yield Select([("auto", "auto"), ("cpu (Triton interpreter)", "cpu")], value="auto",
                                         allow_blank=False, id="device")
                    with Vertical(id="interpreter-panel", classes="panel") as interpreter:
                        interpreter.border_title = "Interpreter"
                        interpreter.border_subtitle = "Enter re-detects"
                        yield Input(self.python, id="python")
                    with Vertical(id="instrumentation-panel", classes="panel") as instrumentation:
                        instrumentation.border_title = "Instrumentation"
                        for field, (title, default, parse, hint) in INSTRUMENTATION_FIELDS.items():
                            with Horizontal(classes="field-row"):
                                yield Label(title, classes="field-label")
                                field_input = Input(default, id=field, placeholder="all" if field == "warps" else "",
                                                    validators=[ParamValidator(parse)])
                                field_input.tooltip = hint
                                yield field_input
                            yield Label("", id=f"{field}-error", classes="error")
                        yield Label("Granularity", classes="choice-label")
                        with RadioSet(id="granularity"):
                            for choice in GRANULARITY_CHOICES:
                                yield RadioButton(choice, value=choice == "warp", name=choice)
                with Vertical(id="proton-panel", classes="column panel") as proton:
                    proton.border_title = "Proton"
                    with Horizontal(classes="switch-row"):
                        yield Switch(True, id="profile")
                        yield Label("profile with Proton")
                    with Horizontal(classes="switch-row"):
                        yield Switch(True, id="hook")
                        yield Label("triton hook (-k triton)")
                    yield Label("Backend", classes="choice-label")
                    with RadioSet(id="backend"):
                        for backend in BACKENDS:
                            yield RadioButton(backend, value=backend == "auto", name=backend)
                    for pair in ((("context", CONTEXTS), ("mode", MODES)), (("data", DATA), ("format", FORMATS))):
                        with Horizontal(classes="radio-row"):
                            for field, choices in pair:
                                with Vertical(classes="choice"):
                                    yield Label(field.capitalize(), classes="choice-label")
                                    with RadioSet(id=field):
                                        for choice in choices:
                                            yield RadioButton(choice, value=choice == choices[0], name=choice)
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
            devices = [("auto", "auto"), ("cpu (Triton interpreter)", "cpu")]
            devices += [(f"{i}: {name}", str(i)) for i, name in enumerate(self.info.gpu_names)]
            self.query_one("#device", Select).set_options(devices)
            if not self.info.gpu_count:
                self.query_one("#profile", Switch).value = False
        self.refresh_form()

    def detection_text(self) -> str:
        if self.info is None:
            return f"Interpreter {self.python}: {self.probe_error}"
        info = self.info
        triton = f"Triton {info.triton_version}" if info.triton_version else f"no Triton ({info.triton_error})"
        torch = f"torch {info.torch_version}" if info.torch_version else "no torch"
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
            "size": self.query_one("#size", Input).value,
            "iters": self.query_one("#iters", Input).value,
            "block_size": self.query_one("#block_size", Input).value,
            "backend": self._choice("backend"),
            "context": self._choice("context"),
            "mode": self._choice("mode"),
            "data": self._choice("data"),
            "output_format": self._choice("format"),
            "hook": self.query_one("#hook", Switch).value,
            "python": self.query_one("#python", Input).value,
            "device": str(self.query_one("#device", Select).value),
            "profile": self.query_one("#profile", Switch).value,
        }
        if values["profile"] and values["backend"] == "instrumentation":  # the panel's values count only then
            values.update(warps=self.query_one("#warps", Input).value,
                          buffer_size=self.query_one("#buffer_size", Input).value,
                          granularity=self._choice("granularity"))
        if self.output is not None:
            values["output"] = self.output
        return RunParams(**{**values, **overrides})

    def findings_for(self, params: RunParams) -> list[Finding]:
        return check_rules(params, self.info) if self.info is not None else []

    def refresh_form(self) -> None:
        """Re-check everything: field messages, backends this interpreter cannot run, rules, the Run button."""
        try:
            params = self.form_params()
        except ParamError as error:  # named by the form's label for that option, not by its flag
            label = FORM_LABELS.get(error.flag, error.flag)
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
        lines = [printable(f"{'✗' if f.refuses else '!'} {f.form_message}") for f in findings]
        if params.profile:
            lines += [
                f"· {button.name} unavailable: {button.tooltip.plain}"
                for radio, field in choices
                for button in self.query_one(f"#{radio}", RadioSet).query(RadioButton)
                if button.tooltip and button.name != getattr(params, field)
            ]
        self.query_one("#findings", Static).update(Text("\n".join(lines)))
        refusals = [f.form_message for f in findings if f.refuses]
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

    @on(RadioSet.Changed)
    @on(Switch.Changed)
    @on(Select.Changed)
    def choice_changed(self) -> None:
        self.refresh_form()

    # ---- actions ------------------------------------------------------------------------------------------------
    @on(Button.Pressed, "#run")
    def action_run(self) -> None:
        if self.query_one("#run", Button).disabled:
            self.notify("Fix the form first: see the messages above Run.", severity="warning")
            return
        self.post_message(self.RunRequested(self.form_params(), self.info))

    @on(Button.Pressed, "#cpu-check")
    def action_cpu_check(self) -> None:
        """The payload through the Triton interpreter, unprofiled: at the interpreter's own small size while Size and
        Iterations are the form's (GPU) defaults, else at theirs, saying up front about how long that takes."""
        try:
            params = self.form_params(device="cpu", profile=False)
        except ParamError as error:
            self.notify(f"{FORM_LABELS.get(error.flag, error.flag)}: {error.reason}", severity="error")
            return
        typed = {field: self.query_one(f"#{field}", Input).value.strip() for field in ("size", "iters")}
        if typed == {field: FIELDS[field][1] for field in ("size", "iters")}:
            params = replace(params, size=CPU_SIZE, iters=CPU_ITERS)
            self.notify(f"CPU check at {params.size:,} elements × {counted(params.iters, 'launch', 'launches')}, "
                        "the interpreter's size (change Size or Iterations to check another)", timeout=6)
        elif (seconds := interpreter_seconds(params.size, params.iters)) > SLOW_CHECK_S:
            self.notify(f"The Triton interpreter takes about {seconds:,.0f} s at {params.size:,} elements × "
                        f"{counted(params.iters, 'launch', 'launches')} (the elapsed time is on the run screen)",
                        severity="warning", timeout=8)
        self.post_message(self.RunRequested(params, self.info))

    @on(Button.Pressed, "#sample")
    def open_sample(self) -> None:
        self.run_action("app.open_sample")
