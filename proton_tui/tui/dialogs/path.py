"""A dialog that asks for a file path and acts on it; the viewer's two: export (where the view is written) and
compare (which capture, or which scope of one, is B; which scope of the open capture is A)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, OptionList
from textual.widgets.option_list import Option

from proton_tui.console import near_path, printable
from proton_tui.hatchet import CaptureError, Profile, pending_capture
from proton_tui.hatchet.scope import split_target, within
from proton_tui.hatchet.source import file_path
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
        self.said_for: str | None = None  # the path the message under the field is about (a Tab's matches)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield from self.leading()
            yield Label(Text(self.prompt), id="prompt")
            # the suggested path is not selected: a first key edits it rather than replacing it
            yield Input(self.value, id="path", select_on_focus=False)
            error = Label("", id="path-error", classes="error")
            error.display = False  # shown with a message only
            yield error
            yield from self.trailing()
            if self.choices:
                yield Label(Text(f"or pick one ({len(self.choices)}, down to reach them):"), id="choices-label")
                yield OptionList(*[Option(Text(printable(near_path(choice))), id=str(i))
                                   for i, choice in enumerate(self.choices)], id="choices")
        yield KeyBar()

    def leading(self) -> list[Widget]:
        """What the dialog asks for before the path (nothing, unless a dialog asks for more)."""
        return []

    def trailing(self) -> list[Widget]:
        """What the dialog shows under the path (nothing, unless a dialog shows more)."""
        return []

    def on_key(self, event) -> None:
        field = self.query_one("#path", Input)
        if event.key == "down" and self.focused is field and self.choices:
            self.query_one("#choices", OptionList).focus()
            event.stop()
        elif event.key == "tab" and self.focused is field and self.complete(field):
            event.prevent_default()
            event.stop()

    def complete(self, field: Input) -> bool:
        """Tab: the path typed completed from the file system (as far as every match agrees, the matches said when
        several are left); False when there is nothing to complete (Tab then moves on)."""
        typed, scope = field.value, ""
        if ":" in typed and not Path(typed).exists():  # FILE:SCOPE: the file is completed, the scope kept
            typed, scope = typed.split(":", 1)
            scope = ":" + scope
        completed, matches = path_completion(typed)
        if completed == typed and len(matches) < 2:
            return False
        field.value = completed + scope
        field.cursor_position = len(completed)
        shown = ", ".join(printable(name) for name in matches[:MATCHES_SHOWN])
        more = f", … ({len(matches)} in all)" if len(matches) > MATCHES_SHOWN else ""
        self.say(f"matches: {shown}{more}" if len(matches) > 1 else "")
        self.said_for = field.value
        return True

    @on(Input.Changed, "#path")
    def edited(self, event: Input.Changed) -> None:
        """An edit clears what a failed Enter (or a Tab) said: the message was about the path before it."""
        if event.value != self.said_for:
            self.say("")

    def say(self, message: str) -> None:
        """The line under the field: why Enter failed, or a Tab's matches; none when empty."""
        label = self.query_one("#path-error", Label)
        label.update(Text(message))
        label.display = bool(message)

    @on(OptionList.OptionSelected, "#choices")
    def picked(self, event: OptionList.OptionSelected) -> None:
        path = self.choices[int(event.option.id)]
        field = self.query_one("#path", Input)
        field.value = path
        self.submitted(Input.Submitted(field, path))

    @on(Input.Submitted, "#path")
    def submitted(self, event: Input.Submitted) -> None:
        typed = event.value.strip()
        if not typed:
            self.say(self.empty)
            return
        typed = os.path.expanduser(typed) if typed.startswith("~") else typed  # as a shell reads it
        try:
            result = self.act(typed)
        except (OSError, ValueError, CaptureError, DiffError) as error:
            self.say(str(error))
            return
        self.dismiss(result if result is not None else typed)


class ExportDialog(PathDialog):
    """Write the table's `view` ("kernels" or "tree") as shown to a .csv, .json or .md file; it suggests a name not
    taken yet in the working folder and is dismissed with the path written."""

    def __init__(self, display: Display, view: str, stem: str) -> None:
        suggested = fresh_path(Path("."), f"{stem}-{view}", ".csv").name
        super().__init__(f"Export the {view} view (as shown) to .csv, .json or .md: Enter writes, Tab completes a "
                         "path, Escape cancels", suggested,
                         lambda path: write_export(path, export_text(display, view=view, fmt=format_for_path(path))),
                         empty="Enter the path of a file to export to")

    def trailing(self) -> list[Widget]:
        return [Button("Save", id="save", variant="primary", compact=True)]

    @on(Button.Pressed, "#save")
    def save(self) -> None:
        field = self.query_one("#path", Input)
        self.submitted(Input.Submitted(field, field.value))


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
        path, scope = split_target(b, file_path)  # typed here, `-` is a file: standard input is the terminal
        return CompareRequest(a, Opening.of(pending_capture(path), fatal=False, owned=True, scope=scope))


MATCHES_SHOWN = 6  # the matches a Tab that leaves several names under the field


def path_completion(typed: str) -> tuple[str, list[str]]:
    """`typed` completed from the file system as far as the names that start with it agree (a folder's own name
    with a "/" when it is the only one), and those names; hidden names only when the text asks for them."""
    folder_text, _, start = typed.rpartition("/")
    folder = Path(folder_text or ("/" if typed.startswith("/") else ".")).expanduser()
    try:
        names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in folder.iterdir()
                       if entry.name.startswith(start) and (start.startswith(".") or not entry.name.startswith(".")))
    except OSError:
        return typed, []
    if not names:
        return typed, []
    common = os.path.commonprefix(names)
    head = folder_text + "/" if folder_text or typed.startswith("/") else ""
    return head + common, names


def this_scope(text: str) -> str | None:
    """The scope `:SCOPE` names in the open capture (None: the text names a file; an existing file wins)."""
    return text[1:] if text.startswith(":") and not Path(text).exists() else None
