"""The JSON of a trace written as it is made: its lanes and launches one at a time (an instrumentation trace has a
lane per warp and line of every CTA), laid out exactly as the whole document dumped at once."""

from __future__ import annotations

import io
import subprocess
import sys

import orjson

from proton_tui.hatchet import load_profile
from proton_tui.output.document import Streamed, summary_json, write_json
from proton_tui.view.display import Display
from tests.helpers import FIXTURES, REPO


def held(value):
    """The document with every streamed list made whole."""
    if isinstance(value, Streamed):
        return [held(item) for item in value]
    if isinstance(value, dict):
        return {key: held(item) for key, item in value.items()}
    return value


class Writes(io.StringIO):
    """Output that keeps how many lane records each write found made so far."""

    def __init__(self, made: list) -> None:
        super().__init__()
        self.made, self.seen = made, []

    def write(self, text: str) -> int:
        self.seen.append(len(self.made))
        return super().write(text)


def test_a_traces_lanes_and_launches_are_written_one_at_a_time(tmp_path):
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_instr_trace.py"), "--ctas", "24", "--launches",
                    "3", "--out", str(tmp_path)], check=True, capture_output=True, timeout=120)
    (path,) = tmp_path.glob("*.chrome_trace")
    profile = load_profile(path)
    document = summary_json(Display(profile))
    trace = document["trace"]
    assert isinstance(trace["lanes"], Streamed) and isinstance(trace["warps"]["launches"], Streamed)
    made: list = []
    lanes = trace["lanes"].items
    trace["lanes"] = Streamed(lambda: (made.append(lane) or lane for lane in lanes()))
    out = Writes(made)
    write_json(document, out)
    assert len(made) == len(profile.trace.lanes) > 192 and len(set(out.seen)) == len(made) + 1  # written between one lane made and the next
    expected = orjson.dumps(held(summary_json(Display(load_profile(path)))), option=orjson.OPT_INDENT_2) + b"\n"
    assert out.getvalue().encode() == expected


def test_a_small_traces_json_is_the_whole_document_dumped():
    path = FIXTURES / "triton390_two_streams.chrome_trace"
    out = io.StringIO()
    write_json(summary_json(Display(load_profile(path))), out)
    whole = held(summary_json(Display(load_profile(path))))
    assert out.getvalue().encode() == orjson.dumps(whole, option=orjson.OPT_INDENT_2) + b"\n"


def test_a_list_made_a_batch_at_a_time_is_laid_out_as_one_item_at_a_time():
    items = [{"name": f"warp {at}", "cycles": at * 7, "nested": {"list": [at, None]}} for at in range(7)]
    items.append({"name": "past 64 bits", "cycles": 2**70})  # dumped by the standard library's encoder
    for count in range(len(items) + 1):
        for batch in (1, 2, 3, 4096):
            out = io.StringIO()
            write_json({"a": {"b": Streamed(lambda: iter(items[:count]), batch)}, "c": 1}, out)
            single = io.StringIO()
            write_json({"a": {"b": Streamed(lambda: iter(items[:count]))}, "c": 1}, single)
            assert out.getvalue() == single.getvalue(), (count, batch)


def test_an_instrumentation_traces_stragglers_are_made_a_batch_at_a_time(tmp_path):
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_instr_trace.py"), "--ctas", "24", "--launches",
                    "3", "--out", str(tmp_path)], check=True, capture_output=True, timeout=120)
    (path,) = tmp_path.glob("*.chrome_trace")
    warps = summary_json(Display(load_profile(path)))["trace"]["warps"]
    (launch, *_) = warps["launches"]
    lists = [scope["stragglers"] for scope in launch["scopes"]]
    lists += [scope["stragglers"] for scopes in warps["across_launches"].values() for scope in scopes]
    assert lists and all(isinstance(found, Streamed) and found.batch > 1 for found in lists)
