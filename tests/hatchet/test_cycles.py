"""The numbers derived from instrumentation captures, on real H200 captures: cycles per warp and per launch, the
time at the device's clock, the part of a scope its child scopes leave unattributed, and the marks for what a
capture cannot say (launches, sampled warps) or what misleads (a scope that only issues loads)."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from proton_tui.hatchet import RunFacts, load_profile, open_capture
from proton_tui.hatchet.cycles import UNATTRIBUTED, facts_from_record, scope_numbers
from proton_tui.hatchet.facts import CycleFacts
from proton_tui.hatchet.profile import Profile
from proton_tui.records import RunRecord
from proton_tui.view.warps import warp_trace
from tests.helpers import FIXTURES, run_folder


def node(profile: Profile, *path: str) -> int:
    """The node at this path of names below ROOT."""
    current = 0
    for name in path:
        current = next(child for child in profile.children[current] if profile.names[child] == name)
    return current


SHARED_TREE = FIXTURES / "instr_scopes_tree.hatchet"


def test_the_parts_child_scopes_leave_uncovered_are_a_derived_child():
    """`kernel` has 153,505 cycles; `compute`, `load` and `store` cover 132,165 of them: 21,340 are index math,
    masking and the waits between scopes."""
    profile = load_profile(SHARED_TREE)
    kernel = node(profile, "k_scoped", "kernel")
    rest = node(profile, "k_scoped", "kernel", UNATTRIBUTED)
    assert profile.is_derived(rest) and not profile.is_derived(kernel)
    assert profile.inclusive[rest] == 153_505 - (86_922 + 30_121 + 15_122) == 21_340
    assert sum(profile.inclusive[child] for child in profile.children[kernel]) == profile.inclusive[kernel]
    assert profile.total == 153_505  # the derived child adds nothing to its scope
    assert profile.node_metrics(rest)["normalized_cycles"] == pytest.approx(2398.515625 - 1358.15625 - 470.640625
                                                                             - 236.28125)
    assert not any(profile.is_kernel[child] for child in profile.children[kernel])
    leaves = [child for child in profile.children[kernel] if child != rest]
    assert all(not profile.children[leaf] for leaf in leaves)  # no remainder under a scope without children


def test_a_capture_opened_alone_says_per_warp_sums_every_launch():
    profile = load_profile(SHARED_TREE)
    numbers = scope_numbers(profile, node(profile, "k_scoped", "kernel"))
    assert numbers.divisor == 64  # 16 CTAs × 4 warps, as Proton divided
    assert numbers.per_warp == pytest.approx(2398.515625)
    assert numbers.launches is None and numbers.per_launch is None
    assert numbers.clock_khz == 1_980_000
    assert numbers.time_ns == pytest.approx(2398.515625 / 1.98)  # every launch of a warp, at 1980 MHz
    assert numbers.sampling is None  # unknown: the file does not say


def test_per_warp_per_launch_and_time_at_the_clock_from_the_run():
    """The payload's run: 2^20 floats in blocks of 1024 (1,024 CTAs × 4 warps), a first launch and 20 more."""
    profile = load_profile(FIXTURES / "instr_vecadd_3.6.0.hatchet", facts=RunFacts(cycle_facts=CycleFacts(
        launches=21, ctas=1024, sampled_warps=None, sampling_known=True, source="the run")))
    numbers = scope_numbers(profile, node(profile, "add_kernel<n=1048576>", "kernel"))
    assert numbers.divisor == 4096
    assert numbers.per_warp == pytest.approx(141_444_937 / 4096)
    assert numbers.per_launch == pytest.approx(141_444_937 / 4096 / 21)
    assert numbers.time_ns == pytest.approx(141_444_937 / 4096 / 21 / 1.98)  # ≈ 831 ns per warp per launch
    assert numbers.sampling is None


def test_sampled_warps_correct_what_proton_divided_by_all_of_them():
    """Warps 0 and 2 recorded: Proton still divides by 4,096 (every warp), so its normalized_cycles is half the
    true per-warp value; the run knows 2 warps of each of 1,024 CTAs were recorded."""
    profile = load_profile(FIXTURES / "instr_vecadd_warps02_3.6.0.hatchet")
    kernel = node(profile, "add_kernel<n=1048576>", "kernel")
    alone = scope_numbers(profile, kernel)
    assert alone.per_warp == pytest.approx(profile.node_metrics(kernel)["normalized_cycles"])
    profile = load_profile(FIXTURES / "instr_vecadd_warps02_3.6.0.hatchet", facts=RunFacts(cycle_facts=CycleFacts(
        launches=21, ctas=1024, sampled_warps=2, sampling_known=True, source="the run")))
    numbers = scope_numbers(profile, kernel)
    cycles = profile.node_metrics(kernel)["cycles"]
    assert numbers.per_warp == pytest.approx(cycles / (1024 * 2))
    assert numbers.per_warp == pytest.approx(2 * profile.node_metrics(kernel)["normalized_cycles"])
    assert numbers.sampling == (2, 4)  # recorded of each CTA's warps
    assert numbers.per_launch == pytest.approx(cycles / 2048 / 21)


def test_a_load_scope_carries_the_caution_and_others_do_not():
    profile = load_profile(FIXTURES / "instr_vecadd_3.7.1.hatchet")
    load = scope_numbers(profile, node(profile, "add_kernel<n=1048576>", "kernel", "load"))
    add = scope_numbers(profile, node(profile, "add_kernel<n=1048576>", "kernel", "add"))
    assert "issue" in load.caution and "first scope that uses" in load.caution
    assert add.caution is None


def test_the_run_record_gives_launches_ctas_and_sampling():
    base = {"params": {"size": 1 << 20, "block_size": 1024, "iters": 20, "payload": None, "warps": [0, 2],
                       "backend": "instrumentation", "profile": True}}
    def facts(record: dict):
        return facts_from_record(msgspec.convert(record, RunRecord))

    assert facts(base) == CycleFacts(launches=21, ctas=1024, sampled_warps=2, sampling_known=True,
                                     source="the run")
    assert facts({"params": {**base["params"], "warps": []}}).sampled_warps is None
    own = facts({"params": {**base["params"], "payload": "/x/own.py"}})
    assert own.launches is None and own.ctas is None  # another script: its launches are its own
    assert facts({"params": {**base["params"], "backend": "cupti"}}) is None
    assert facts({"params": {"backend": "auto"}}) is None
    written = facts({**base, "launches": 7, "ctas": 3})  # what the run wrote is taken as it is
    assert (written.launches, written.ctas) == (7, 3)
    clocked = facts({**base, "sm_clock_khz": 1_980_000})
    assert clocked.clock_khz == 1_980_000  # the payload's `vecadd: sm_clock_khz=` line, kept in run.json


def test_a_trace_from_a_run_is_timed_at_the_clock_its_payload_reported(tmp_path):
    """A trace has no device info: the SM clock comes from the run (the payload prints Triton driver's), and the
    trace keeps its own count of launches."""
    record = msgspec.convert({"params": {"size": 16384, "iters": 2, "block_size": 1024, "backend": "instrumentation",
                                         "profile": True, "payload": None, "warps": []}, "sm_clock_khz": 1_980_000},
                             RunRecord)
    profile = open_capture(FIXTURES / "instr_vecadd_trace_3.7.1.chrome_trace", record)
    kernel = next(n for n in range(profile.node_count) if profile.names[n] == "kernel")
    numbers = scope_numbers(profile, kernel)
    assert numbers.clock_khz == 1_980_000 and numbers.launches == 3
    assert numbers.time_ns == pytest.approx(profile.own[kernel] / 64 / 3 / 1.98)


def test_time_captures_are_left_as_they_are():
    profile = load_profile(FIXTURES / "vecadd_hook.hatchet")
    assert not profile.derived and scope_numbers(profile, 1) is None


@pytest.mark.parametrize("fixture, warps", [("instr_vecadd_trace_3.7.1", 16 * 4),
                                            ("instr_vecadd_warps02_trace_3.6.0", 16 * 2)])
def test_an_instrumentation_trace_knows_its_launches_and_recorded_warps(fixture, warps):
    """The payload's trace (16 CTAs, a first launch and 2 more): per warp divides by the warps the trace holds, so
    a sampled trace needs no correction; the launches are each warp's outermost scopes."""
    profile = load_profile(FIXTURES / f"{fixture}.chrome_trace")
    assert profile.cycle_facts == CycleFacts(launches=3, sampling_known=True, source="the trace")
    kernel = next(n for n in range(profile.node_count) if profile.names[n] == "kernel")
    numbers = scope_numbers(profile, kernel)
    assert numbers.divisor == warps
    assert numbers.per_launch == pytest.approx(profile.own[kernel] / warps / 3)
    assert numbers.clock_khz is None and numbers.time_ns is None  # a trace has no device info
    assert UNATTRIBUTED in {profile.names[child] for child in profile.children[kernel]}


def view(*args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "proton_tui", "view", *args], capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_text_output_of_a_capture_opened_alone_says_what_it_cannot_know():
    text = view(str(FIXTURES / "instr_vecadd_3.6.0.hatchet"), "--plain")
    header, notes = text.splitlines()[0], text.split("\n  ")[0]
    assert "launches not recorded" in header and "0 launches" not in header
    assert "per warp, all launches" in text and "at 1,980 MHz" in text
    assert "the capture does not record how many launches" in notes
    assert "whether warps were sampled is not recorded" in notes
    assert "(unattributed)" in text and "caution: load:" in text


def test_text_output_beside_its_run_gives_per_launch_numbers(tmp_path):
    capture = run_folder(tmp_path, "instr_vecadd_3.6.0")
    text = view(str(capture), "--plain")
    assert "21 launches (run.json beside the capture)" in text.splitlines()[0]
    row = next(line for line in text.splitlines() if line.endswith("└─ kernel"))
    assert "1,644.4 cyc" in row and "831 ns" in row  # 141,444,937 / 4,096 / 21 at 1.98 GHz
    assert "whether warps were sampled" not in text


def test_a_sampled_run_is_marked_and_corrected(tmp_path):
    capture = run_folder(tmp_path, "instr_vecadd_warps02_3.6.0", warps=[0, 2])
    text = view(str(capture), "--plain")
    assert "2 of 4 warps recorded in each CTA" in text and "corrected" in text
    row = next(line for line in text.splitlines() if line.endswith("└─ kernel"))
    assert f"{66_126_205 / 2048 / 21:,.1f} cyc" in row
    document = json.loads(view(str(capture), "--json"))
    scope = next(item for item in document["instrumentation"]["scopes"] if item["name"] == "kernel")
    assert scope["per_warp"] == pytest.approx(66_126_205 / 2048)
    assert scope["per_warp_per_launch"] == pytest.approx(66_126_205 / 2048 / 21)
    assert scope["normalized_cycles"] == pytest.approx(66_126_205 / 4096, rel=1e-6)
    assert document["instrumentation"]["launches"] == 21
    assert document["instrumentation"]["sampled_warps"] == [2, 4]
    rest = next(item for item in document["instrumentation"]["scopes"] if item["name"] == "(unattributed)")
    assert rest["derived"] is True


def test_the_csv_and_json_of_a_cycles_capture_say_no_launch_count_rather_than_zero():
    rows = view(str(FIXTURES / "instr_vecadd_3.6.0.hatchet"), "--csv").splitlines()
    assert rows[1].split(",")[4] == ""  # launches: none recorded, not 0
    document = json.loads(view(str(FIXTURES / "instr_vecadd_3.6.0.hatchet"), "--json"))
    assert document["kernels"][0]["launches"] is None


def test_sampled_warps_of_another_script_are_said_to_be_uncorrected(tmp_path):
    """Another script's run: its warps were sampled, but its CTAs are unknown, so per warp cannot be corrected and
    the note says it is too small."""
    capture = run_folder(tmp_path, "instr_vecadd_warps02_3.6.0", warps=[0, 2], payload="/tmp/own_kernel.py")
    text = view(str(capture), "--plain")
    assert "2 warps of each CTA were recorded" in text and "is too small" in text
    row = next(line for line in text.splitlines() if line.endswith("└─ kernel"))
    assert "16,144.1 cyc" in row  # Proton's normalized_cycles, not corrected


def test_a_trace_s_launch_count_is_the_warp_timeline_s(tmp_path):
    """The tree of a trace and its warp timeline count launches the same way: CTAs that move to another SM at the
    next launch (lanes of one launch each), and scopes that follow each other at the outermost line (several
    line-0 events per warp and launch) are still 2 launches."""
    from tests.view.test_warps import scope_event

    moved = [scope_event("kernel", 0, 0, 0, 0, 100), scope_event("kernel", 1, 1, 0, 10, 100),
             scope_event("kernel", 3, 0, 0, 5000, 80), scope_event("kernel", 2, 1, 0, 5010, 90)]
    flat = [event for start in (0, 5000) for cta in (0, 1) for event in (
        scope_event("load", cta, cta, 0, start + 15 * cta, 30), scope_event("add", cta, cta, 0, start + 15 * cta + 40, 50))]
    for name, events in (("moved", moved), ("flat", flat)):
        path = tmp_path / f"{name}.chrome_trace"
        path.write_text(json.dumps({"traceEvents": events}))
        profile = load_profile(path)
        assert profile.cycle_facts.launches == 2, name
        assert len(warp_trace(profile.trace).launches) == 2, name


def test_a_run_record_of_the_previous_layout_still_reads(tmp_path):
    """run.json as runs wrote it before it kept launches, CTAs and the stream's signals: what it lacks is worked out
    from its parameters and its top-level numbers; a record of another schema is refused in one line."""
    from proton_tui.records import RecordError, read_run_record

    record = read_run_record(FIXTURES / "runs" / "20261201-004713-vecadd" / "run.json")
    assert (record.launches, record.ctas) == (3, 4)  # the bundled payload: a first launch and 2 more
    assert record.signals.max_abs_err == 0.0 and record.signals.first_launch_ms == 61.565
    assert record.interpreter.triton_version == "3.6.0" and record.params.warps == []
    other = tmp_path / "run.json"
    other.write_text('{"schema": "proton-tui/9"}')
    with pytest.raises(RecordError, match="not a run record: its schema is 'proton-tui/9'"):
        read_run_record(other)
