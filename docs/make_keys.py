"""Write docs/keys.md from the app's own key bindings: every App, Screen and Widget class defined in a module of
`proton_tui.tui` that declares BINDINGS gets a table of its keys. `python docs/make_keys.py` from the repository
root rewrites the page; `render()` returns it (tests/architecture/test_docs_keys.py compares the two)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

KEYS = Path(__file__).parent / "keys.md"
ROOT = Path(__file__).resolve().parents[1]

KEY_NAMES = {"slash": "/", "question_mark": "?", "plus": "+", "minus": "-", "equals_sign": "=", "full_stop": ".",
             "left_square_bracket": "[", "right_square_bracket": "]", "space": "space"}


def classes_with_bindings() -> list[type]:
    """The classes of `proton_tui.tui`'s modules that declare BINDINGS of their own, by module and name."""
    from textual.dom import DOMNode

    import proton_tui.tui as package

    found = {}
    for module_info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, DOMNode) and cls.__dict__.get("BINDINGS"):
                found[(cls.__module__, cls.__qualname__)] = cls
    return [found[key] for key in sorted(found)]


def key_label(keys: str) -> str:
    """`f1,question_mark` as `` `f1` `` or `` `?` ``."""
    return " or ".join(f"`{KEY_NAMES.get(key.strip(), key.strip())}`" for key in keys.split(","))


def table(cls: type) -> list[str]:
    from textual.binding import Binding

    summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
    inherited = [base.__qualname__ for base in cls.__mro__[1:] if base.__module__.startswith("proton_tui.")
                 and base.__dict__.get("BINDINGS")]
    lines = [f"## {cls.__qualname__}", "", f"`{cls.__module__}`" + (f": {summary}" if summary else ""), ""]
    if inherited:
        lines += [f"Also the keys of {', '.join(inherited)}.", ""]
    lines += ["| key | does | action | in the key bar |", "|---|---|---|---|"]
    rows: dict[tuple[str, str, bool], list[str]] = {}  # keys of one action, in the order they are declared
    for binding in Binding.make_bindings(cls.__dict__["BINDINGS"]):
        rows.setdefault((binding.action, binding.description or binding.action, binding.show), []).append(binding.key)
    for (action, description, shown), keys in rows.items():
        description = description.replace("|", "\\|")
        lines.append(f"| {key_label(','.join(keys))} | {description} | `{action}` | {'yes' if shown else 'no'} |")
    return lines + [""]


def render() -> str:
    from proton_tui.tui.driver import ESCAPE_DELAY

    lines = ["# Keys", "",
             "Every key binding of the app, as its code declares it, one table per screen or widget that has keys",
             "of its own; a key bound twice on one screen (`q`: back, or quit where there is nothing to go back to)",
             "does what the screen allows at the time. `F1` in the app says what each does where you are.", "",
             f"A lone `Escape` is the Escape key once {ESCAPE_DELAY * 1000:.0f} ms have passed with nothing after it "
             "(the start of another",
             "key's sequence otherwise); `ESCDELAY` (milliseconds) sets another wait, as for curses programs.", "",
             "This page is written by `python docs/make_keys.py`; a test fails when it differs from the code.", ""]
    for cls in classes_with_bindings():
        lines += table(cls)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    KEYS.write_text(render())
    print(f"wrote {KEYS.relative_to(ROOT)}")
