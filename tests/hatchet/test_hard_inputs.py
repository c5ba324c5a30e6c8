"""Captures and paths at the edges: very deep trees, very long values, special files, paths that are not UTF-8."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import msgspec
import numpy as np
import pytest

from proton_tui.hatchet import CaptureError, load_profile
from tests.helpers import CLI, capture_path, kernel, scope

H200 = {"CUDA": {"0": {"arch": "90", "num_sms": 132}}}


def run_cli(*args, stdin=subprocess.DEVNULL, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, timeout=120, stdin=stdin, cwd=cwd)


def deep_document(depth: int, as_msgpack: bool) -> bytes:
    """[tree, device_info] with `depth` scopes above one kernel, written level by level (the encoders recurse)."""
    encode = msgspec.msgpack.encode if as_msgpack else json.dumps
    leaf = kernel("leaf", 7, count=3)
    opening, closing = [], []
    for level in range(depth):
        if as_msgpack:
            opening.append(b"\x83" + b"".join(encode(part) for part in (
                "frame", {"name": f"s{level}", "type": "function"}, "metrics", {}, "children")) + b"\x91")
        else:
            opening.append(f'{{"frame": {{"name": "s{level}", "type": "function"}}, "metrics": {{}}, "children": ['
                           .encode())
            closing.append(b"]}")
    if as_msgpack:
        return b"\x92" + b"".join(opening) + encode(leaf) + encode(H200)
    return b"[" + b"".join(opening) + json.dumps(leaf).encode() + b"".join(closing) + b", " + \
        json.dumps(H200).encode() + b"]"


def test_a_5000_deep_tree_reads_the_same_as_json_and_as_messagepack(tmp_path):
    as_json = tmp_path / "deep.hatchet"
    as_json.write_bytes(deep_document(5000, as_msgpack=False))
    as_msgpack = tmp_path / "deep.hatchet_msgpack"
    as_msgpack.write_bytes(deep_document(5000, as_msgpack=True))
    profiles = [load_profile(as_json), load_profile(as_msgpack)]
    for profile in profiles:
        assert profile.node_count == 5001 and profile.total == 7 and profile.kernel_launches == 3
        assert profile.depths[-1] == 5000
    assert profiles[0].names == profiles[1].names


@pytest.mark.parametrize("suffix", ["hatchet", "hatchet_msgpack"])
def test_a_metric_nested_1100_deep_is_named_in_one_short_line(tmp_path, suffix):
    document = [scope("ROOT", kernel("k", 5, flops="NESTED")), H200]
    if suffix.endswith("msgpack"):
        data = msgspec.msgpack.encode(document).replace(msgspec.msgpack.encode("NESTED"), b"\x91" * 1100 + b"\x01")
    else:
        data = json.dumps(document).encode().replace(b'"NESTED"', b"[" * 1100 + b"1" + b"]" * 1100)
    path = tmp_path / f"deep_metric.{suffix}"
    path.write_bytes(data)
    with pytest.raises(CaptureError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert "flops" in message and "\n" not in message and len(message) < 400, message


def test_a_6_mb_metric_value_is_cut_in_the_error_line_with_its_length(tmp_path):
    document = [scope("ROOT", kernel("k", 5, note="x" * 6_000_000)), H200]
    path = tmp_path / "long.hatchet"
    path.write_text(json.dumps(document))
    result = run_cli("view", str(path), "--json")
    assert result.returncode == 2
    line = result.stderr.decode()
    assert "note" in line and len(line) < 400 and line.count("\n") == 1, line[:500]
    assert "6000000" in line.replace(",", "")  # the length of the value cut


def test_a_proc_file_is_a_special_file_not_a_changing_capture():
    result = run_cli("view", "/proc/self/status", "--json")
    assert result.returncode == 2
    line = result.stderr.decode()
    assert "changed while it was read" not in line and "special file" in line, line


def test_a_gzip_capture_on_stdin_gets_advice_that_works_for_stdin():
    import gzip

    packed = gzip.compress(capture_path("vecadd_auto").read_bytes())
    result = run_cli("view", "-", "--json", stdin=None) if False else subprocess.run(
        [CLI, "view", "-", "--json"], input=packed, capture_output=True, timeout=60)
    assert result.returncode == 2
    line = result.stderr.decode()
    assert "gunzip -k -" not in line and "gunzip -c" in line and "| proton-tui view -" in line, line


RAW_NAME = b"raw\xff\x9b31mX.hatchet"


@pytest.fixture
def raw_capture(tmp_path):
    path = os.path.join(os.fsencode(tmp_path), RAW_NAME)
    shutil.copyfile(capture_path("vecadd_auto"), path)
    return path


def test_a_path_that_is_not_utf8_is_carried_in_json_exactly(raw_capture):
    result = run_cli("view", raw_capture, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert os.fsencode(document["file"]).endswith(b"\xff\x9b31mX.hatchet") or \
        document["file"].endswith("raw\\xff\\x9b31mX.hatchet"), document["file"]
    assert b"Traceback" not in result.stderr


def test_a_path_that_is_not_utf8_shows_printable_on_a_terminal(raw_capture):
    result = run_cli("view", raw_capture, "--plain")
    assert result.returncode == 0, result.stderr
    assert b"\x9b" not in result.stdout and b"\xff" not in result.stdout
    assert b"raw\\xff\\x9b31mX.hatchet" in result.stdout


def test_a_diff_of_paths_that_are_not_utf8(raw_capture):
    for flag in ("--json", "--plain"):
        result = run_cli("diff", raw_capture, raw_capture, flag)
        assert result.returncode == 0, result.stderr
        assert b"\x9b" not in result.stdout and b"Traceback" not in result.stderr


@pytest.mark.parametrize("suffix", ["json", "md", "csv"])
def test_an_export_of_a_path_that_is_not_utf8_is_written_whole(raw_capture, tmp_path, suffix):
    out = tmp_path / f"out.{suffix}"
    result = run_cli("view", raw_capture, "--export", str(out))
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0 and b"\x9b" not in out.read_bytes()


def test_a_failed_export_leaves_no_file(tmp_path):
    from proton_tui.output.export import write_export

    out = tmp_path / "out.md"
    with pytest.raises(OSError):
        write_export(out, "text \udcff\udc9b")  # not encodable
    assert not out.exists()
    write_export(out, "fine")
    assert out.read_text() == "fine"
    with pytest.raises(FileExistsError):
        write_export(out, "again")
    assert out.read_text() == "fine"


@pytest.mark.parametrize("key", ["time (ns)", "bytes", "flops32"])
def test_a_whole_number_past_the_largest_float_is_refused_in_one_line_by_every_output(tmp_path, key):
    """A metric written as a whole number too large for any float: no sum or ratio of it could be worked out, so the
    capture is refused, as one whose float values are infinite is (never an OverflowError half-way through)."""
    node = kernel("k", 10**400) if key == "time (ns)" else kernel("k", 5, **{key: 10**400})
    path = tmp_path / "huge.hatchet"
    path.write_text(json.dumps([scope("ROOT", node), H200]))
    for args in (["view", str(path), "--json"], ["view", str(path), "--plain"], ["view", str(path), "--csv"],
                 ["diff", str(path), str(capture_path("vecadd_hook"))]):
        result = run_cli(*args, cwd=tmp_path)
        line = result.stderr.decode()
        assert result.returncode == 2 and line.count("\n") == 1 and "Traceback" not in line, (args, line[-300:])
        assert str(path) in line and result.stdout == b"", (args, line)


def test_a_messagepack_extension_value_is_named_as_one_not_as_an_objects_address(tmp_path):
    node = kernel("k", 5)
    node["metrics"]["time (ns)"] = msgspec.msgpack.Ext(5, b"xy")
    path = tmp_path / "ext.hatchet_msgpack"
    path.write_bytes(msgspec.msgpack.encode([scope("ROOT", node), H200]))
    result = run_cli("view", str(path), "--plain")
    assert result.returncode == 2 and result.stderr.decode() == (
        f"proton-tui: error: {path}: node 'k': metric 'time (ns)' is a MessagePack extension value (type 5), not a "
        "number\n")


def warp_event(pid: str, tid: str, ts: float) -> dict:
    return {"ph": "X", "cat": "k", "name": "s", "pid": pid, "tid": tid, "ts": ts, "dur": 1, "args": {}}


def test_warp_numbers_past_64_bits_name_no_warp(tmp_path):
    """An instrumentation lane whose SM, CTA, warp or line does not fit 64 bits is listed as a lane, not a warp; the
    warps that can be read still make their launch."""
    path = tmp_path / "big.chrome_trace"
    path.write_text(json.dumps({"traceEvents": [
        warp_event("k Core1 CTA99999999999999999999", "warp 0 (line 0)", 1),
        warp_event("k Core1 CTA2", "warp 99999999999999999999 (line 0)", 2),
        warp_event("k Core2 CTA3", "warp 1 (line 0)", 3)]}))
    done = run_cli("view", str(path), "--plain")
    assert done.returncode == 0 and not done.stderr, done.stderr.decode()
    text = done.stdout.decode()
    assert "k Core1 CTA99999999999999999999 warp 0 (line 0)  1 k event" in text
    assert "launch 1 of 1 (k): 1 CTA on 1 SM, 1 warp" in text and "slowest: CTA 3 warp 1 (SM 2)" in text


def test_a_cta_numbered_in_the_billions_takes_no_more_memory_than_its_warps(tmp_path):
    """Launches are split by which warps already ran (one mark per warp): warps numbered from 0 by CTA and warp, not
    by CTA number times warps per CTA, which for CTA 2,000,000,000 asked for gigabytes."""
    path = tmp_path / "far.chrome_trace"
    path.write_text(json.dumps({"traceEvents": [warp_event(f"k Core1 CTA{cta}", f"warp {warp} (line 0)", ts)
                                                for ts, (cta, warp) in enumerate(((2_000_000_000, 3), (1, 0), (1, 1)))]}))
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31)); "  # 2 GiB of address space
    done = subprocess.run([sys.executable, "-c", limit + "from proton_tui.entry import main; main()", "view", str(path),
                           "--plain"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-600:]
    assert "launch 1 of 1 (k): 2 CTAs on 1 SM, 3 warps" in done.stdout.decode()


def test_a_trace_whose_only_warp_lane_has_a_number_past_64_bits_lists_it_as_a_lane(tmp_path):
    path = tmp_path / "only.chrome_trace"
    path.write_text(json.dumps({"traceEvents": [warp_event("k Core1 CTA99999999999999999999", "warp 0 (line 0)", 1)]}))
    done = run_cli("view", str(path), "--plain")
    assert done.returncode == 0 and not done.stderr, done.stderr.decode()
    assert "k Core1 CTA99999999999999999999 warp 0 (line 0)  1 k event" in done.stdout.decode()


def test_ctas_counted_apart_whatever_their_numbers(tmp_path):
    """CTA 0 and CTA 2^62 - 1 on SM 0 and CTA 0 on SM 4: three CTAs (counted as SM × CTA numbers, 2^62 wrapped)."""
    path = tmp_path / "ctas.chrome_trace"
    path.write_text(json.dumps({"traceEvents": [warp_event(f"k Core{sm} CTA{cta}", f"warp {warp} (line 0)", ts)
                                                for ts, (sm, cta, warp) in enumerate(((0, 0, 0), (4, 0, 1),
                                                                                      (0, (1 << 62) - 1, 0)))]}))
    done = run_cli("view", str(path), "--plain")
    assert done.returncode == 0, done.stderr.decode()
    assert "launch 1 of 1 (k): 3 CTAs on 2 SMs, 3 warps" in done.stdout.decode()


def test_a_tid_past_the_largest_float_is_a_lane_of_its_own(tmp_path):
    path = tmp_path / "tid.chrome_trace"
    path.write_bytes(b'{"traceEvents": [{"ph": "X", "pid": 0, "tid": 1' + b"0" * 400 + b', "ts": 1, "dur": 1, '
                     b'"name": "k", "cat": "kernel"}, {"ph": "X", "pid": 0, "tid": 3, "ts": 2, "dur": 1, "name": "k", '
                     b'"cat": "kernel"}]}')
    done = run_cli("view", str(path), "--plain")
    assert done.returncode == 0 and not done.stderr, done.stderr.decode()
    lanes = [line for line in done.stdout.decode().splitlines() if line.startswith("  stream ")]
    assert lanes[0].startswith("  stream 3 ") and lanes[1].startswith("  stream 1000")


def test_lanes_whose_names_would_read_alike_each_say_their_tid_then_their_pid(tmp_path):
    """Two threads of one process named alike, a pid and tid 1 beside "1", and a null pid: every lane's name its
    own, in every output, and a missing pid or tid written as JSON writes it (null), never as Python's None."""
    def kernel(pid, tid, ts):
        return {"ph": "X", "name": "k", "cat": "kernel", "pid": pid, "tid": tid, "ts": ts, "dur": 1}
    meta = [{"ph": "M", "name": "thread_name", "pid": 5, "tid": tid, "args": {"name": "X"}} for tid in (7, 8)]
    events = [*meta, kernel(5, 7, 0), kernel(5, 8, 1), kernel(1, 1, 2), kernel("1", "1", 3), kernel(2, 1, 4),
              kernel(None, 3, 5), kernel(0, 3, 6), kernel(9, None, 7)]
    path = tmp_path / "alike.chrome_trace"
    path.write_text(json.dumps({"traceEvents": events}))
    names = [lane.name for lane in load_profile(path).trace.lanes]
    assert len(set(names)) == len(names) == 8, names
    assert {"X (tid 7)", "X (tid 8)", "pid 1 · stream 1 (tid 1)", 'pid 1 · stream 1 (tid "1")', "pid null · stream 3",
            "stream null"} <= set(names), names
    document = json.loads(subprocess.run([CLI, "view", str(path), "--json"], capture_output=True, timeout=60,
                                         stdin=subprocess.DEVNULL).stdout)
    assert sorted(lane["name"] for lane in document["trace"]["lanes"]) == sorted(names)
    # threads named as the words that would tell them apart: numbered, never two alike
    meta = [{"ph": "M", "name": "thread_name", "pid": 5, "tid": tid, "args": {"name": name}}
            for tid, name in ((7, "X"), (8, "X"), (9, "X (tid 7)"), (10, "X (pid 5, tid 7)"))]
    path.write_text(json.dumps({"traceEvents": [*meta, *(kernel(5, tid, tid) for tid in (7, 8, 9, 10))]}))
    names = [lane.name for lane in load_profile(path).trace.lanes]
    assert len(set(names)) == len(names) == 4, names


def test_a_traces_microseconds_are_the_whole_nanoseconds_they_stand_for(tmp_path):
    """µs written with three decimals (as Proton writes ns) are those ns exactly in every output, not the float
    product (1.001 × 1000 is 1000.9999999999999); a time finer than a ns keeps its fraction."""
    events = [{"ph": "X", "name": name, "cat": "kernel", "pid": 1, "tid": 7, "ts": ts, "dur": dur}
              for name, ts, dur in (("k", 0.077, 1.001), ("k", 3.3, 0.7), ("fine", 5.2, 0.0005))]
    path = tmp_path / "ns.chrome_trace"
    path.write_text(json.dumps({"traceEvents": events}))
    csv = subprocess.run([CLI, "view", str(path), "--csv"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert csv.returncode == 0 and "\nk,1701,ns," in csv.stdout and "\nfine,0.5,ns," in csv.stdout, csv.stdout
    document = json.loads(subprocess.run([CLI, "view", str(path), "--json"], capture_output=True, timeout=60,
                                         stdin=subprocess.DEVNULL).stdout)
    lane = document["trace"]["lanes"][0]
    assert lane["busy"] == 1701.5 and [gap[1] for gap in lane["gaps"]] == [3223.0, 5123.0], lane
    profile = load_profile(path)
    assert profile.trace.columns.start.tolist() == [0.0, 3223.0, 5123.0]
    assert profile.trace.columns.duration.tolist() == [1001.0, 700.0, 0.5]
    from proton_tui.hatchet.chrome_trace import in_ns

    assert in_ns(np.array([1e12 + 0.0005, 1.001, -1.001])).tolist() == [1e15 + 0.5, 1001.0, -1001.0]  # far: kept


@pytest.mark.parametrize("events", [
    [{"ph": "X", "name": "k", "cat": "kernel", "pid": 1, "tid": 0, "ts": 1e306, "dur": 1}],
    [{"ph": "X", "name": "k", "cat": "kernel", "pid": 1, "tid": 0, "ts": 0, "dur": 1e306}],
    [{"ph": "X", "name": "k", "cat": "kernel", "pid": 1, "tid": 0, "ts": -1.5e305, "dur": 1},
     {"ph": "X", "name": "k", "cat": "kernel", "pid": 1, "tid": 0, "ts": 1.5e305, "dur": 1}],
    [{"ph": "X", "name": "k", "cat": "kernel", "pid": 1, "tid": 0, "ts": 1, "dur": 1},
     {"ph": "s", "name": "launch", "cat": "flow", "pid": 1, "tid": 0, "ts": 1e306, "id": 1}],
], ids=["start", "duration", "span", "flow"])
def test_a_trace_whose_times_in_ns_pass_the_largest_float_is_refused_in_one_line(tmp_path, events):
    """Times in µs that are finite but past the largest float once in ns (or once counted from the first event):
    one line naming the file, exit 2, no warning and no `nan` shown."""
    path = tmp_path / "far.chrome_trace"
    path.write_text(json.dumps({"traceEvents": events}))
    for output in ("--plain", "--json"):
        result = subprocess.run([CLI, "view", str(path), output], capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert result.returncode == 2 and result.stdout == "", (output, result.stdout)
        assert result.stderr.count("\n") == 1 and "past the largest float" in result.stderr, result.stderr
    with pytest.raises(CaptureError, match="past the largest float"):
        load_profile(path)
