"""What every front end says the same way: the one-line error, and a file's size in words."""

from __future__ import annotations

from pathlib import Path


def error_line(message: str) -> str:
    """The one line a failed command prints on stderr."""
    return f"proton-tui: error: {message}"


def size_text(path: Path) -> str:
    """A file's size as people read it: "86 MB", "3 kB"."""
    size = path.stat().st_size
    return f"{size / 1e6:,.0f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"
