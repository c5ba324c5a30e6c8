"""Proton's other formats: `.hatchet_msgpack` (Triton >= 3.7), read like its JSON twin in every view, with the same
checks and the same one-line errors."""

from __future__ import annotations

import json
import subprocess

import msgspec
import pytest

from proton_tui.hatchet import CaptureError, load_profile
from proton_tui.tui.widgets.table_rows import TableRows
from proton_tui.view.display import Display
from tests.helpers import BAD_INPUTS, CLI, FIXTURES

MSGPACK = FIXTURES / "triton390_two_streams.hatchet_msgpack"
TWIN = FIXTURES / "triton390_two_streams.msgpack_decoded.hatchet"  # the same file decoded and written as JSON


def cli(*args: str) -> str:
    done = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("args", [["--plain"], ["--kernels"], ["--json"], ["--csv"], ["--plain", "--raw-names"],
                                  ["--plain", "--sort", "name", "--include", "add"]])
def test_a_msgpack_capture_reads_as_its_json_twin(args):
    msgpack, twin = cli("view", str(MSGPACK), *args), cli("view", str(TWIN), *args)
    assert msgpack.replace(MSGPACK.name, "FILE").replace(str(MSGPACK), "FILE") == \
        twin.replace(TWIN.name, "FILE").replace(str(TWIN), "FILE")
    assert "add_kernel<n=4194304>" in msgpack


def test_the_tables_rows_are_the_same():
    a, b = TableRows(Display(load_profile(MSGPACK))), TableRows(Display(load_profile(TWIN)))
    a.expand_all()
    b.expand_all()
    assert [a.text(row, 140) for row in range(len(a.rows))] == [b.text(row, 140) for row in range(len(b.rows))]


@pytest.mark.parametrize("case", ["string metric", "negative time", "negative count", "no frame name",
                                  "device info list", "three elements"])
def test_a_bad_msgpack_capture_is_refused_as_its_json_twin_is(tmp_path, case):
    """The same document as MessagePack gets the same one-line error."""
    content, words = BAD_INPUTS[case]
    path = tmp_path / "capture.hatchet_msgpack"
    path.write_bytes(msgspec.msgpack.encode(json.loads(content)))
    with pytest.raises(CaptureError) as raised:
        load_profile(path)
    assert words.replace("JSON list", "MessagePack array") in str(raised.value)


def test_a_truncated_msgpack_capture_is_one_line_exit_2(tmp_path):
    path = tmp_path / "cut.hatchet_msgpack"
    path.write_bytes(MSGPACK.read_bytes()[:1000])
    done = subprocess.run([CLI, "view", str(path), "--plain"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"proton-tui: error: {path}: truncated: the MessagePack data ends early\n"
