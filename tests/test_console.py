"""No byte of a name reaches a person's terminal as a control sequence: every text output writes control
characters as visible escapes and keeps its columns aligned; JSON keeps the exact names."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from proton_tui.console import printable
from tests.helpers import CONTROL_BYTES, HOSTILE_NAMES, hostile_tree

CLI = shutil.which("proton-tui", path=os.path.dirname(sys.executable)) or "proton-tui"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_printable_escapes_every_control_character():
    assert printable("a\x1b[2J\x1b]0;T\x07b\nc\u202ed\x9b\x00\x7f") == "a\\x1b[2J\\x1b]0;T\\x07b\\nc\\u202ed\\x9b\\x00\\x7f"
    assert printable("add_kernel<n=4096>  µs ▸") == "add_kernel<n=4096>  µs ▸"


@pytest.mark.parametrize("option", ["--plain", "--kernels"])
def test_text_outputs_escape_control_characters(write_capture, option):
    path = write_capture(hostile_tree())
    result = run_cli("view", str(path), option)
    assert result.returncode == 0, result.stderr
    assert not [byte for byte in CONTROL_BYTES if byte in result.stdout]
    for name in HOSTILE_NAMES:
        assert printable(name) in result.stdout
    rows = [line for line in result.stdout.splitlines()[2:] if "\\x" in line or "\\n" in line or "\\u" in line]
    assert len(rows) == len(HOSTILE_NAMES) + (option == "--plain")  # the kernels (and their scope)
    time_column = {line.index(" µs") for line in rows}
    assert len(time_column) == 1  # aligned: every row's time ends at the same column


def test_csv_keeps_names_exact_but_never_a_raw_escape(write_capture):
    result = subprocess.run([CLI, "view", str(write_capture(hostile_tree())), "--csv"], capture_output=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    text = result.stdout.decode()  # as written: a \r inside a quoted name stays one
    assert result.returncode == 0 and "\x1b" not in text and "\x9b" not in text
    names = [row["name"] for row in csv.DictReader(io.StringIO(text, newline=""))]
    assert sorted(names) == sorted(name.replace("\x1b", "\\x1b").replace("\x9b", "\\x9b") for name in HOSTILE_NAMES)


def test_markdown_export_and_diff_escape_control_characters(write_capture, tmp_path):
    path = write_capture(hostile_tree())
    markdown = tmp_path / "view.md"
    assert run_cli("view", str(path), "--export", str(markdown)).returncode == 0
    diff = run_cli("diff", str(path), str(path))
    for text in (markdown.read_text(), diff.stdout):
        assert not [byte for byte in CONTROL_BYTES if byte in text]
    assert printable(HOSTILE_NAMES[0]) in diff.stdout


def test_json_keeps_the_exact_names(write_capture):
    path = write_capture(hostile_tree())
    document = json.loads(run_cli("view", str(path), "--json").stdout)
    assert sorted(kernel["name"] for kernel in document["kernels"]) == sorted(HOSTILE_NAMES)
