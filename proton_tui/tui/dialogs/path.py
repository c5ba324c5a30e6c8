"""A dialog that asks for a file path and acts on it; the viewer's two: export (where the view is written) and
compare (which capture is B)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from proton_tui.console import near_path, printable
from proton_tui.hatchet import CaptureError, pending_capture
from proton_tui.output.diff import DiffError, compare_candidates
from proton_tui.output.export import export_text, format_for_path, fresh_path, write_export
from proton_tui.tui.opening import Opening
from proton_tui.tui.widgets.key_bar import KeyBar
from proton_tui.view.display import Display


class PathDialog(ModalScreen):
    """Ask for a file path and act on it; a failure stays in the dialog as one line, the path still editable."""

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, prompt: str, value: str, act, choices: list[str] | None = None, *,
                 empty: str = "Enter a path") -> None:
        """`choices`: paths offered under the field, shown relative to the working folder when under it (Enter on
        one acts on it; typing still works). `empty`: what Enter on an empty field says (it acts on nothing)."""
        super().__init__()
        self.prompt, self.value, self.act, self.choices, self.empty = prompt, value, act, choices or [], empty

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Text(self.prompt))
            yield Input(self.value, id="path")
            yield Label("", id="path-error", classes="error")
            if self.choices:
                yield Label(Text(f"or pick one ({len(self.choices)}, down to reach them):"))
                yield OptionList(*[Option(Text(printable(near_path(choice))), id=str(i))
                                   for i, choice in enumerate(self.choices)], id="choices")
        yield KeyBar()

    def on_key(self, event) -> None:
        if event.key == "down" and self.focused is self.query_one("#path", Input) and self.choices:
            self.query_one("#choices", OptionList).focus()
            event.stop()

    @on(OptionList.OptionSelected, "#choices")
    def picked(self, event: OptionList.OptionSelected) -> None:
        path = self.choices[int(event.option.id)]
        field = self.query_one("#path", Input)
        field.value = path
        self.submitted(Input.Submitted(field, path))

    @on(Input.Submitted, "#path")
    def submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#path-error", Label).update(Text(self.empty))
            return
        try:
            result = self.act(event.value.strip())
        except (OSError, ValueError, CaptureError, DiffError) as error:
            self.query_one("#path-error", Label).update(Text(str(error)))
            return
        self.dismiss(result if result is not None else event.value.strip())


class ExportDialog(PathDialog):
    """Write the table's `view` ("kernels" or "tree") as shown to a .csv, .json or .md file; it suggests a name not
    taken yet in the working folder and is dismissed with the path written."""

    def __init__(self, display: Display, view: str, stem: str) -> None:
        suggested = fresh_path(Path("."), f"{stem}-{view}", ".csv").name
        super().__init__(f"Export the {view} view (as shown) to .csv, .json or .md", suggested,
                         lambda path: write_export(path, export_text(display, view=view, fmt=format_for_path(path))),
                         empty="Enter the path of a file to export to")


class CompareDialog(PathDialog):
    """Which capture B the capture at `a` is compared with: typed, or picked among the others beside it and in the
    `output` folder's runs. Dismissed with B's `Opening` (opened as every capture is: the run.json beside it
    completes it), for the viewer to read on the reading thread."""

    def __init__(self, a: Path, output: Path) -> None:
        super().__init__("Compare with another capture (B); this one is A", "", self.opening,
                         [str(path) for path in compare_candidates(a, output)],
                         empty="Enter the path of a capture to compare with")

    @staticmethod
    def opening(path: str) -> Opening:
        return Opening.of(pending_capture(Path(path)), fatal=False, owned=True)
