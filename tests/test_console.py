"""No byte of a name reaches a person's terminal as a control sequence: every text output writes control
characters as visible escapes and keeps its columns aligned; JSON keeps the exact names."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import unicodedata

import pytest

from proton_tui.console import printable
from tests.helpers import CLI, CONTROL_BYTES, HOSTILE_NAMES, hostile_tree, kernel, on_a_terminal, scope


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


def test_csv_into_a_pipe_keeps_the_exact_names(write_capture):
    result = subprocess.run([CLI, "view", str(write_capture(hostile_tree())), "--csv"], capture_output=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    text = result.stdout.decode()  # as written: a \r inside a quoted name stays one
    assert result.returncode == 0
    names = [row["name"] for row in csv.DictReader(io.StringIO(text, newline=""))]
    assert sorted(names) == sorted(HOSTILE_NAMES)




C1_NAMES = ("bell\x07back\bspace\rover", "nel\x85dcs\x90st\x9cosc\x9dend")


def test_csv_on_a_terminal_escapes_every_control_character(write_capture):
    names = (*HOSTILE_NAMES, *C1_NAMES)
    tree = [scope("ROOT", *[kernel(name, 1000 * (index + 1)) for index, name in enumerate(names)]), {}]
    text = on_a_terminal("view", str(write_capture(tree)), "--csv")
    assert not [char for char in ("\x1b", "\r", "\b", "\x07", "\u202e", "\x9b", "\x85", "\x90", "\x9c", "\x9d")
                if char in text]
    shown = [row["name"] for row in csv.DictReader(io.StringIO(text, newline=""))]
    assert sorted(shown) == sorted(printable(name) for name in names)


def test_printable_escapes_every_invisible_format_character():
    invisible = [chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) in ("Cf", "Zl", "Zp")]
    assert len(invisible) > 150
    for char in invisible:
        assert char not in printable(f"a{char}b"), hex(ord(char))
    assert printable("add\u200b_kernel\u200d\ufeff\u2028\u2029") == "add\\u200b_kernel\\u200d\\ufeff\\u2028\\u2029"
    assert printable("tag\U000e0041") == "tag\\U000e0041"


def test_zero_width_characters_tell_two_kernels_apart(write_capture):
    path = write_capture([scope("ROOT", kernel("add_kernel", 1000), kernel("add\u200b_kernel", 2000)), {}])
    for option in ("--plain", "--kernels"):
        text = run_cli("view", str(path), option).stdout
        assert "add\\u200b_kernel" in text and "\u200b" not in text
    other = write_capture([scope("ROOT", kernel("add_kernel", 1500), kernel("add\ufeff_kernel", 2000)), {}],
                          name="other.hatchet")
    diff = run_cli("diff", str(path), str(other)).stdout
    assert "add\\u200b_kernel" in diff and "add\\ufeff_kernel" in diff
    assert "\u200b" not in diff and "\ufeff" not in diff


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
