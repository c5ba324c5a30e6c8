"""A dialog that asks for a file path and acts on it; the viewer's two: export (where the view is written) and
compare (which capture, or which scope of one, is B; which scope of the open capture is A)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from proton_tui.console import near_path, printable
from proton_tui.hatchet import CaptureError, Profile, pending_capture
from proton_tui.hatchet.scope import split_target, within
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
            yield from self.leading()
            yield Label(Text(self.prompt))
            yield Input(self.value, id="path")
            yield Label("", id="path-error", classes="error")
            if self.choices:
                yield Label(Text(f"or pick one ({len(self.choices)}, down to reach them):"))
                yield OptionList(*[Option(Text(printable(near_path(choice))), id=str(i))
                                   for i, choice in enumerate(self.choices)], id="choices")
        yield KeyBar()

    def leading(self) -> list[Widget]:
        """What the dialog asks for before the path (nothing, unless a dialog asks for more)."""
        return []

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


@dataclass(frozen=True)
class CompareRequest:
    """What compare's dialog asks for: A, the open capture or one scope's subtree of it, and B, a scope of the open
    capture (a profile) or another capture to read (an `Opening` that restricts it to its scope as it is read)."""

    a: Profile
    b: Profile | Opening


class CompareDialog(PathDialog):
    """What the open capture (`profile`) is compared with. A: the capture, or the scope typed as `:SCOPE` (offered:
    `scope`, the scope the cursor is on). B: a capture typed or picked among the others beside it and in the
    `output` folder's runs, `FILE:SCOPE` for one scope of it, or `:SCOPE` for one scope of the open capture.
    Dismissed with a CompareRequest; a scope of the open capture that names no frame, or several, stays in the
    dialog as one line. B's file is read on the reading thread (the run.json beside it completes it)."""

    AUTO_FOCUS = "#path"

    def __init__(self, profile: Profile, output: Path, scope: str | None = None) -> None:
        super().__init__("B: a capture, FILE:SCOPE for one scope of it, or :SCOPE for a scope of this one", "",
                         self.request, [str(path) for path in compare_candidates(profile.path, output)],
                         empty="Enter the path of a capture to compare with")
        self.profile, self.scope = profile, scope

    def leading(self) -> list[Widget]:
        return [Label(Text("A: this capture, or :SCOPE for one scope of it (step, step/forward)")),
                Input(f":{self.scope}" if self.scope else "", id="scope-a")]

    @on(Input.Submitted, "#scope-a")
    def a_submitted(self) -> None:
        self.query_one("#path", Input).focus()

    def request(self, b: str) -> CompareRequest:
        a = within(self.profile, self.query_one("#scope-a", Input).value.strip().removeprefix(":") or None)
        if this_scope(b) is not None:
            return CompareRequest(a, within(self.profile, this_scope(b)))
        path, scope = split_target(b)
        return CompareRequest(a, Opening.of(pending_capture(path), fatal=False, owned=True, scope=scope))


def this_scope(text: str) -> str | None:
    """The scope `:SCOPE` names in the open capture (None: the text names a file; an existing file wins)."""
    return text[1:] if text.startswith(":") and not Path(text).exists() else None
