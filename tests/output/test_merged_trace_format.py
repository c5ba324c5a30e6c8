"""A rank set's merged trace (`view DIR --export FILE.json`, the viewer's `x`) checked against the Chrome trace-event
format's rules and the merge's own (`trace_format.py`): on the two real H200 ranks of Triton 3.9 (each with its own
clock base), on sets of ranks made from real traces with their clocks moved apart, and on traces with no clock base;
and the checker shown to refuse an export broken in each of the ways it checks."""

from __future__ import annotations

import copy
import subprocess

import msgspec
import orjson
import pytest

from proton_tui.records import RankRecord
from tests.helpers import CLI, FIXTURES
from tests.output.trace_format import events_of, format_errors, merged_errors

H200_TRACES = FIXTURES / "ranks_h200_trace39"
ALIGNED = "clocks aligned by the traces' clock base (baseTimeNanoseconds)"


def heading(record: RankRecord | None, rank: int) -> str:
    """What a rank's process is to be called, from its sidecar: ``rank R (host, GPU i UUID)``."""
    if record is None:
        return f"rank {rank}"
    return f"rank {rank} ({record.host}, GPU {record.gpu_index} {record.gpu_uuid})"


def exported(folder, tmp_path) -> tuple[dict, str]:
    out = tmp_path / "merged.json"
    done = subprocess.run([CLI, "view", str(folder), "--export", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return orjson.loads(out.read_bytes()), done.stdout + done.stderr


def inputs_of(folder) -> dict[int, tuple[dict, str]]:
    """Each rank's own trace and its process's name, read from the folder as written (not through the product)."""
    inputs = {}
    for number, trace in enumerate(sorted(folder.glob("*.chrome_trace"))):
        sidecar = trace.with_name(trace.name.removesuffix(".chrome_trace") + ".sidecar.json")
        record = msgspec.json.decode(sidecar.read_bytes(), type=RankRecord) if sidecar.exists() else None
        rank = record.rank if record is not None else number
        inputs[rank] = (orjson.loads(trace.read_bytes()), heading(record, rank))
    return inputs


def made_ranks(tmp_path, plan: list[tuple[str, int | None]], sidecars: bool = True):
    """A folder of ranks, each a copy of a real trace (`plan`: its fixture and how far its clock base is moved, in
    ns; None: no clock base), with a sidecar naming its host and GPU, the ranks numbered backwards from the files."""
    folder = tmp_path / "ranks"
    folder.mkdir()
    for number, (fixture, shift) in enumerate(plan):
        document = orjson.loads((FIXTURES / fixture).read_bytes())
        if shift is None:
            document.pop("baseTimeNanoseconds", None)
        else:
            document["baseTimeNanoseconds"] += shift
        stem = f"job.rank{number:02d}"
        (folder / f"{stem}.chrome_trace").write_bytes(orjson.dumps(document))
        if sidecars:
            record = RankRecord(stem=stem, rank=len(plan) - 1 - number, world_size=len(plan), host=f"node{number // 2}",
                                gpu_index=number % 2, gpu_uuid=f"GPU-{number:04x}")
            (folder / f"{stem}.sidecar.json").write_bytes(msgspec.json.encode(record))
    return folder


TWO_STREAMS = "triton390_two_streams.chrome_trace"  # flows from launches to kernels on two streams
H200_RANK1 = "ranks_h200_trace39/ranks.rank1.chrome_trace"
MIXED_39 = [(TWO_STREAMS, 0), (H200_RANK1, 2_500_000), (TWO_STREAMS, -1_142_675), (TWO_STREAMS, 7),
            (H200_RANK1, 900_000_000), (TWO_STREAMS, 2_500_000)]


def test_the_two_h200_ranks_merged_keep_the_format_and_their_clock_bases(tmp_path):
    merged, said = exported(H200_TRACES, tmp_path)
    inputs = inputs_of(H200_TRACES)
    bases = [document["baseTimeNanoseconds"] for document, _ in inputs.values()]
    assert bases[0] != bases[1] and ALIGNED in said  # two processes, two clock bases
    assert merged_errors(merged, inputs) == []
    names = [event["args"]["name"] for event in events_of(merged) if event.get("name") == "process_name"]
    assert names == [heading for _, heading in inputs.values()] and "(vm, GPU 0 " in names[0]


def test_six_ranks_of_real_traces_with_flows_and_moved_clocks_merge_by_the_format(tmp_path):
    folder = made_ranks(tmp_path, MIXED_39)
    merged, said = exported(folder, tmp_path)
    inputs = inputs_of(folder)
    assert ALIGNED in said and merged_errors(merged, inputs) == []
    flows = [event for event in events_of(merged) if event["ph"] in ("s", "f")]
    assert len(flows) == 4 * 30  # the four ranks of the two-stream trace keep their 15 launches each
    assert merged["baseTimeNanoseconds"] == min(document["baseTimeNanoseconds"] for document, _ in inputs.values())


def test_ranks_without_a_clock_base_merge_by_the_format_aligned_by_their_first_events(tmp_path):
    folder = made_ranks(tmp_path, [("triton371_vecadd_trace.chrome_trace", None), ("vecadd_trace.chrome_trace", None),
                                   (TWO_STREAMS, None)], sidecars=False)
    merged, said = exported(folder, tmp_path)
    assert "clocks aligned by each rank's first event" in said and "baseTimeNanoseconds" not in merged
    assert merged_errors(merged, inputs_of(folder)) == []


def test_a_clock_base_missing_from_one_rank_aligns_every_rank_by_its_first_event(tmp_path):
    folder = made_ranks(tmp_path, [(TWO_STREAMS, 0), (TWO_STREAMS, None), (H200_RANK1, 5_000)])
    merged, said = exported(folder, tmp_path)
    assert "clocks aligned by each rank's first event" in said
    assert merged_errors(merged, inputs_of(folder)) == []


def _rank_events(merged, rank: int) -> list[dict]:
    return [event for event in merged["traceEvents"] if event["pid"] // 1000 == rank]


def _share_flow_ids(merged):
    ids = [event["id"] for event in _rank_events(merged, 5) if event["ph"] in ("s", "f")]
    for event in _rank_events(merged, 3):
        if event["ph"] in ("s", "f"):
            event["id"] = ids[0]


def _unmoved_clock(merged):
    for event in _rank_events(merged, 4):
        if "ts" in event:
            event["ts"] -= 2_500  # 2.5 ms off its place


def _lost_event(merged):
    merged["traceEvents"].remove(next(event for event in _rank_events(merged, 4) if event["ph"] == "X"))


def _unnamed_host(merged):
    next(event for event in _rank_events(merged, 1) if event["name"] == "process_name")["args"]["name"] = "rank 1"


def _lane_named_twice(merged):
    lane = next(event for event in _rank_events(merged, 0) if event["name"] == "thread_name")
    merged["traceEvents"].append(copy.deepcopy(lane))


def _negative_dur(merged):
    next(event for event in merged["traceEvents"] if event["ph"] == "X")["dur"] = -1.0


def _pid_as_text(merged):
    for event in _rank_events(merged, 0):
        event["pid"] = "rank 0"


def _unknown_phase(merged):
    next(event for event in merged["traceEvents"] if event["ph"] == "X")["ph"] = "Q"


def _unfinished_flow(merged):
    merged["traceEvents"].remove(next(event for event in merged["traceEvents"] if event["ph"] == "f"))


def _flow_off_its_thread(merged):
    next(event for event in merged["traceEvents"] if event["ph"] == "s")["tid"] = 424242


def _two_ranks_one_process(merged):
    for event in _rank_events(merged, 1):
        event["pid"] = 0


def _unit_of_the_inputs(merged):
    merged["displayTimeUnit"] = "us"


BROKEN = {
    "a flow id shared by two ranks": (_share_flow_ids, "is shared by ranks [3, 5]"),
    "a rank's clock not moved": (_unmoved_clock, "rank 4: event 2 at"),
    "an event lost": (_lost_event, "rank 4: events"),
    "a process named without its host and GPU": (_unnamed_host, "rank 1's processes are named ['rank 1']"),
    "a lane named twice": (_lane_named_twice, "thread_name of pid 0 tid 0 given 2 times"),
    "a negative dur": (_negative_dur, "a complete event's dur -1.0 is not a number >= 0"),
    "a pid as text": (_pid_as_text, "pid 'rank 0' is not an integer"),
    "an unknown phase": (_unknown_phase, "unknown phase 'Q'"),
    "a flow never finished": (_unfinished_flow, "started again before it finished"),
    "a flow start off its thread's slices": (_flow_off_its_thread, "binds to no slice on its thread"),
    "two ranks in one process": (_two_ranks_one_process, "process_name of pid 0 given 2 times"),
    "the display unit of Proton's traces": (_unit_of_the_inputs, "displayTimeUnit 'us' is not one of"),
}


@pytest.fixture(scope="module")
def six_ranks(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("six")
    folder = made_ranks(tmp_path, MIXED_39)
    return exported(folder, tmp_path)[0], inputs_of(folder)


@pytest.mark.parametrize("case", list(BROKEN))
def test_the_checker_refuses_a_merged_trace_broken_by(six_ranks, case):
    merged, inputs = six_ranks
    assert merged_errors(merged, inputs) == []
    broken = copy.deepcopy(merged)
    breaking, said = BROKEN[case]
    breaking(broken)
    errors = merged_errors(broken, inputs)
    assert any(said in error for error in errors), errors


def test_the_checker_refuses_ranks_concatenated_as_they_are(tmp_path):
    """What the merge exists for: the ranks' traces put side by side unchanged share their processes, lanes and flow
    ids (Proton numbers them from 0 in every process)."""
    folder = made_ranks(tmp_path, MIXED_39[:2])
    inputs = inputs_of(folder)
    naive = {"traceEvents": [event for document, _ in inputs.values() for event in document["traceEvents"]],
             "displayTimeUnit": "ns"}
    errors = merged_errors(naive, inputs)
    assert any("process_name of pid 0 given 2 times" in error for error in errors), errors
    assert format_errors(naive) != []
