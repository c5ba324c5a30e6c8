"""Proton's Chrome traces read: the 3.6 shape and the >= 3.9 lanes, flows and clock base, as lanes with busy time
and idle gaps, and as the tree of their kernels (every tree view then reads a trace too)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from proton_tui.hatchet import CaptureError, load_profile
from proton_tui.hatchet.cycles import UNATTRIBUTED
from proton_tui.hatchet.lanes import LaneTable
from tests.helpers import CLI, FIXTURES, REPO

V36 = FIXTURES / "vecadd_trace.chrome_trace"  # Triton 3.6.0 on an H200: the payload, 5 launches
V39 = FIXTURES / "triton390_two_streams.chrome_trace"  # Triton 3.9.0: two streams, scopes, flows


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_a_36_trace_is_one_stream_and_the_tree_its_tree_twin_has():
    profile = load_profile(V36)
    trace = profile.trace
    assert [(lane.name, lane.kind) for lane in trace.lanes] == [("stream 7", "gpu")]
    raw = json.loads(V36.read_text())["traceEvents"]
    assert len(trace.events) == len(raw) == 15 and trace.base_ns is None and trace.flow_count == 0
    assert trace.events[0].start == 0.0 and [e.start for e in trace.events] == sorted(e.start for e in trace.events)
    first = min(raw, key=lambda event: event["ts"])
    assert trace.events[0].duration == pytest.approx(first["dur"] * 1000)  # µs in the file, ns here
    twin = load_profile(FIXTURES / "vecadd_trace_twin.hatchet")  # the same payload, run as a tree

    def launches(p) -> Counter:
        return Counter({k.name: k.launches for k in p.kernel_stats()})

    assert launches(profile) == launches(twin)
    assert profile.total == pytest.approx(sum(event["dur"] for event in raw) * 1000)


def test_a_39_trace_has_named_lanes_flows_and_its_clock_base():
    trace = load_profile(V39).trace
    assert [(lane.name, lane.kind) for lane in trace.lanes] == [
        ("CPU Thread 0", "cpu"), ("GPU Stream 7", "gpu"), ("GPU Stream 17", "gpu")]
    assert trace.base_ns == 1796066334530334338 and trace.flow_count == 15
    raw = json.loads(V39.read_text())["traceEvents"]
    ends = {(e["tid"], e["ts"]) for e in raw if e.get("ph") == "f"}
    landing = [e for e in raw if e.get("ph") == "X" and e.get("cat") == "kernel" and (e["tid"], e["ts"]) in ends]
    assert len(landing) == 15  # every flow ends at a kernel's start, as the count says
    for kernel, launch in trace.launches.items():
        assert trace.events[kernel].category == "kernel" and trace.lanes[trace.events[launch].lane].kind == "cpu"
    for number in (1, 2):
        kernels = trace.lane_events(number)
        busy, gaps = trace.busy(number)
        active = max(e.end for e in kernels) - min(e.start for e in kernels)
        assert busy + sum(end - start for start, end in gaps) == pytest.approx(active)
        assert all(start < end for start, end in gaps)
    scopes = trace.lane_events(0, "scope")
    assert sorted(event.name for event in scopes) == ["main_stream", "side_stream"]


def test_next_launch_of_the_same_kernel():
    trace = load_profile(V39).trace
    adds = sorted((e.start, i) for i, e in enumerate(trace.events) if e.name == "add_kernel<n=4194304>")
    order = [i for _, i in adds]
    assert trace.next_launch(order[0]) == order[1] and trace.next_launch(order[1], -1) == order[0]
    assert trace.next_launch(order[-1]) is None


def test_view_plain_prints_the_lanes_then_the_kernel_summary():
    result = cli("view", str(V39), "--plain")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("devices: none in a trace")
    assert lines[1].startswith("trace: 3 lanes, ") and "15 launch → kernel flows" in lines[1]
    assert lines[2] == "  CPU Thread 0  2 scope events"
    assert lines[3].startswith("  GPU Stream 7  busy ") and " 22 kernels  idle " in lines[3]
    assert lines[5].split() == ["time", "%", "launches", "avg", "GB/s", "%", "peak", "kernel"]
    document = json.loads(cli("view", str(V39), "--json").stdout)
    assert [lane["name"] for lane in document["trace"]["lanes"]] == ["CPU Thread 0", "GPU Stream 7", "GPU Stream 17"]
    assert document["trace"]["flows"] == 15 and document["distinct_kernels"] == 14


@pytest.mark.parametrize("content, words", [
    (b'{"traceEvents": 3}', "not a Proton trace: 'traceEvents' is not a list"),
    (b'{"traceEvents": [{"ph": "X", "name": "k", "ts": "soon", "dur": 1}]}', "'ts'/'dur' are not times"),
    (b'{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": -1}]}', "'ts'/'dur' are not times"),
    (b'{"traceEvents": [3]}', "event 0 is not an object"),
])
def test_a_bad_trace_is_one_line_exit_2(tmp_path, content, words):
    path = tmp_path / "bad.chrome_trace"
    path.write_bytes(content)
    with pytest.raises(CaptureError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_profile(path)
    result = cli("view", str(path), "--plain")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and words in result.stderr


def processes_trace(path: Path, more: list | None = None) -> Path:
    """A trace whose processes each have a `CPU Thread 0` (rank 0; two named python; one unnamed) and one a GPU
    stream, and `more` events."""
    def process(pid, name=None):
        named = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}] if name else []
        return named + [
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": 0, "args": {"name": "CPU Thread 0"}},
            {"ph": "X", "name": "step", "cat": "scope", "pid": pid, "tid": 0, "ts": 1.0, "dur": 2.0}]
    solo = [{"ph": "M", "name": "thread_name", "pid": 5, "tid": 1, "args": {"name": "GPU Stream 7"}},
            {"ph": "X", "name": "k", "cat": "kernel", "pid": 5, "tid": 1, "ts": 1.0, "dur": 1.0}]
    path.write_text(json.dumps({"traceEvents": process(1, "rank 0") + process(2, "python") + process(3, "python")
                                + process(4) + solo + (more or [])}))
    return path


def test_lanes_of_one_name_in_several_processes_are_named_after_their_process(tmp_path):
    """Each lane a process of its own has the name of is named after its process (by its pid where two processes
    share a name, or have none); a name no other process has stays as it is."""
    path = processes_trace(tmp_path / "processes.chrome_trace")
    names = sorted(lane.name for lane in load_profile(path).trace.lanes)
    assert names == ["GPU Stream 7", "pid 4 · CPU Thread 0", "python (pid 2) · CPU Thread 0",
                     "python (pid 3) · CPU Thread 0", "rank 0 · CPU Thread 0"]


def test_a_traces_lanes_are_the_same_lanes_however_they_are_asked_for(tmp_path):
    """The lanes (held as columns, each made when asked for) are the same by number, from the end, by slice and one
    after another, in order of their sort index then name; a lane told apart by its process keeps its own name; a
    warp's lane is named by its pid and tid unless the metadata names that pair (then it is the lane named so)."""
    warp = {"ph": "X", "name": "s", "cat": "scope", "ts": 1.0, "dur": 1.0}
    more = [dict(warp, pid="k Core1 CTA2", tid="warp 0 (line 0)"), dict(warp, pid="k Core1 CTA3", tid="warp 1"),
            {"ph": "M", "name": "thread_name", "pid": "k Core1 CTA3", "tid": "warp 1", "args": {"name": "GPU Stream 9"}},
            {"ph": "M", "name": "thread_sort_index", "pid": 5, "tid": 1, "args": {"sort_index": -1}}]
    lanes = load_profile(processes_trace(tmp_path / "processes.chrome_trace", more)).trace.lanes
    every = list(lanes)
    assert every == [lanes[at] for at in range(len(lanes))] == lanes[:] and lanes == every and lanes != every[1:]
    assert lanes[-1] == every[-1] and lanes[2:4] == every[2:4] and LaneTable.of(every) == lanes
    with pytest.raises(IndexError):
        lanes[len(lanes)]
    assert [(lane.order, lane.name) for lane in every] == sorted((lane.order, lane.name) for lane in every)
    assert [(lane.pid, lane.tid, lane.name, lane.kind, lane.order, lane.own_name) for lane in every] == [
        (5, 1, "GPU Stream 7", "gpu", -1.0, None),
        ("k Core1 CTA3", "warp 1", "GPU Stream 9", "gpu", 0.0, None),
        ("k Core1 CTA2", "warp 0 (line 0)", "k Core1 CTA2 warp 0 (line 0)", "warp", 0.0, None),
        (4, 0, "pid 4 · CPU Thread 0", "cpu", 0.0, "CPU Thread 0"),
        (2, 0, "python (pid 2) · CPU Thread 0", "cpu", 0.0, "CPU Thread 0"),
        (3, 0, "python (pid 3) · CPU Thread 0", "cpu", 0.0, "CPU Thread 0"),
        (1, 0, "rank 0 · CPU Thread 0", "cpu", 0.0, "CPU Thread 0")]


def test_a_trace_of_nothing_reads_as_an_empty_capture(tmp_path):
    path = tmp_path / "empty.chrome_trace"
    path.write_bytes(b'{"displayTimeUnit": "us", "traceEvents": []}')
    profile = load_profile(path)
    assert profile.is_root_only and profile.trace.lanes == [] and profile.trace.events == []
    assert cli("view", str(path), "--plain").stdout.startswith("empty.chrome_trace: Proton recorded no kernels")


def test_a_39_traces_launch_metadata_gives_bytes_and_gbps():
    """Triton 3.9 writes each hooked kernel's bytes and flops (as text) in args.metrics: the tree sums them, so a
    trace shows GB/s as its tree twin does."""
    profile = load_profile(V39)
    raw = [event for event in json.loads(V39.read_text())["traceEvents"]
           if event.get("name") == "add_kernel<n=4194304>" and event.get("ph") == "X"]
    kernel = next(k for k in profile.kernel_stats() if k.name == "add_kernel<n=4194304>")
    assert kernel.bytes == sum(float(event["args"]["metrics"]["bytes"]) for event in raw) == 10 * 50331648
    assert kernel.gbps == pytest.approx(kernel.bytes / (sum(event["dur"] for event in raw) * 1000))


def test_the_371_captures_read():
    """Triton 3.7.1 on the H200 (`run --data trace`, and `--format hatchet_msgpack --mode env`): one stream, and a
    MessagePack tree with the payload's kernels and its bytes."""
    trace = load_profile(FIXTURES / "triton371_vecadd_trace.chrome_trace")
    assert [lane.name for lane in trace.trace.lanes] == ["stream 7"] and trace.kernel_launches == 15
    tree = load_profile(FIXTURES / "triton371_vecadd.hatchet_msgpack")
    kernel = next(k for k in tree.kernel_stats() if k.name == "add_kernel<n=1048576>")
    assert kernel.launches == 6 and kernel.bytes == 6 * 12582912 and tree.device_names() == ["CUDA:0"]


def test_an_instrumentation_trace_nests_each_warps_scopes_in_cycles():
    """An intra-kernel trace (instrumentation, `data="trace"`): lanes are warps of CTAs on SMs, each scope on a line
    of its own; read as a tree, scopes nest by time inside their warp and carry cycles (Proton writes cycles / 1000
    as µs), as the same kernel's tree capture does: kernel ⊃ load, compute, store."""
    profile = load_profile(FIXTURES / "instr_scopes_trace.chrome_trace")
    trace = profile.trace
    assert all(lane.kind == "warp" for lane in trace.lanes) and len(trace.lanes) == 192
    assert profile.unit == "cycles" and profile.kernel_count == 1 and not profile.is_empty
    names = {profile.names[node]: node for node in range(profile.node_count)}
    kernel = names["kernel"]
    assert profile.parents[kernel] == names["k_scoped"]
    assert {profile.names[child] for child in profile.children[kernel]} == {"load", "compute", "store", UNATTRIBUTED}
    raw = json.loads((FIXTURES / "instr_scopes_trace.chrome_trace").read_text())["traceEvents"]
    for scope in ("kernel", "load", "compute", "store"):
        expected = sum(event["dur"] for event in raw if event["name"] == scope) * 1000
        assert profile.own[names[scope]] == pytest.approx(expected)


def test_a_lanes_events_are_its_own_run_not_a_scan_of_the_trace(tmp_path):
    """`lane_events` of every lane reads each event once in all (the JSON of an instrumentation trace asks it of each
    of its thousands of lanes): the same events, in time order, as a scan would find."""
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_instr_trace.py"), "--ctas", "16", "--launches",
                    "3", "--out", str(tmp_path)], check=True, capture_output=True, timeout=120)
    (path,) = tmp_path.glob("*.chrome_trace")
    trace = load_profile(path).trace
    expected = {lane: [event for event in trace.events if event.lane == lane]
                for lane in range(len(trace.lanes))}

    class Counted(list):
        reads = 0

        def __iter__(self):
            Counted.reads += 1
            return super().__iter__()

        def __getitem__(self, index):
            Counted.reads += isinstance(index, slice) and index == slice(None)
            return super().__getitem__(index)

    trace.events = Counted(trace.events)
    found = {lane: trace.lane_events(lane, None) for lane in range(len(trace.lanes))}
    assert found == expected and len(trace.lanes) > 100
    assert Counted.reads <= 1, f"the whole trace was read {Counted.reads} times for {len(trace.lanes)} lanes"


def test_pairs_keep_their_numbers_whatever_order_they_come_in():
    """(pid, tid) pairs numbered in the order they first come: one met again, in any order and in any piece, keeps
    its number, and a new one gets the next."""
    from proton_tui.hatchet.chrome_trace import Pairs

    pairs = Pairs()
    assert pairs.ids(["A", "B"], ["X", "Y"]).tolist() == [0, 1]
    assert pairs.ids(["B", "A"], ["X", "Y"]).tolist() == [2, 3]
    assert pairs.ids(["A", "B", "A", "B", 1, "A"], ["Y", "X", "X", "Y", "X", "Y"]).tolist() == [3, 2, 0, 1, 4, 3]
    later = Pairs()
    later.ids([1, "C", "B"], ["X", "X", "Y"])
    assert pairs.taken_in(later).tolist() == [4, 5, 1]
    asked = Pairs()
    asked.ids(["C", "D", "A"], ["X", "X", "Y"])
    assert pairs.found_in(asked).tolist() == [5, -1, 3]


def test_a_lane_met_again_in_a_later_piece_is_one_lane(tmp_path):
    """Pieces of the file read one after the other (16,384 events each) meet the same lanes in other orders."""
    pieces = (("A", "X"), ("B", "Y")), (("B", "X"), ("A", "Y")), (("A", "Y"), ("B", "X"))
    events = [{"ph": "X", "pid": pid, "tid": tid, "ts": at, "dur": 1, "name": "k", "cat": "kernel"}
              for piece, keys in enumerate(pieces) for at in range(16384 * piece, 16384 * (piece + 1))
              for pid, tid in [keys[at % 2]]]
    path = tmp_path / "pieces.chrome_trace"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_profile(path).trace
    assert sorted((lane.pid, lane.tid) for lane in trace.lanes) == [("A", "X"), ("A", "Y"), ("B", "X"), ("B", "Y")]
    assert sum(1 for _ in trace.events) == len(events)


def test_a_flow_from_a_lane_numbered_out_of_order_still_links_its_launch(tmp_path):
    events = [{"ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": 1, "name": name, "cat": cat}
              for pid, tid, ts, name, cat in ((0, 0, 10, "k", "kernel"), (1, 0, 20, "k", "kernel"),
                                              (0, 1, 30, "launch", "cpu"), (1, 1, 40, "k", "kernel"))]
    events += [{"ph": "s", "pid": 0, "tid": 1, "ts": 30, "id": 7, "name": "launch->kernel", "cat": "flow"},
               {"ph": "f", "bp": "e", "pid": 1, "tid": 1, "ts": 40, "id": 7, "name": "launch->kernel", "cat": "flow"}]
    path = tmp_path / "flow.chrome_trace"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = load_profile(path).trace
    (kernel, launch), = trace.launches.items()
    assert trace.events[kernel].name == "k" and trace.events[launch].name == "launch"
