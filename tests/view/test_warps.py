"""The warp timeline's numbers on the real instrumentation trace (H200, Triton 3.6.0: 16 CTAs × 4 warps, scopes
`kernel` ⊃ `load`, `compute`, `store`, 2 launches) and on small traces made to show one rule each: launches split
at gaps where a warp runs again, statistics across warps in exact cycles, p99 by nearest rank, stragglers named."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.hatchet.chrome_trace import read_trace
from proton_tui.hatchet.trace import warp_lane
from proton_tui.view.warps import Warp, median, nearest_rank, warp_trace
from tests.helpers import CLI, FIXTURES, REPO

INSTR = FIXTURES / "instr_scopes_trace.chrome_trace"
H200_KHZ = 1_980_000  # the H200's max SM clock as its .hatchet device_info reports it


@pytest.fixture(scope="module")
def warps():
    return warp_trace(load_profile(INSTR).trace)


def scope_event(name, sm, cta, warp, ts_cycles, cycles, line=0, kernel="k"):
    """One scope of one warp as Proton writes it: times in cycles / 1000 under its assumed 1 GHz."""
    return {"ph": "X", "cat": kernel, "name": name, "pid": f"{kernel} Core{sm} CTA{cta}",
            "tid": f"warp {warp} (line {line})", "ts": ts_cycles / 1000, "dur": cycles / 1000,
            "args": {"Frequency (MHz)": 1000.0, "call_stack": ["ROOT", kernel]}}


def synthetic(events):
    return warp_trace(read_trace({"traceEvents": events}))


# ---- lanes --------------------------------------------------------------------------------------------------------
def test_a_warp_lane_names_its_kernel_sm_cta_warp_and_line():
    trace = load_profile(INSTR).trace
    lane = next(lane for lane in trace.lanes if lane.pid == "k_scoped Core10 CTA13" and lane.tid == "warp 2 (line 1)")
    found = warp_lane(lane)
    assert (found.kernel, found.sm, found.cta, found.warp, found.line) == ("k_scoped", 10, 13, 2, 1)
    assert Warp(10, 13, 2).name == "CTA 13 warp 2 (SM 10)"


def test_the_warp_lanes_are_the_lanes_whose_pid_and_tid_name_a_warp_and_nothing_else():
    """Two kernels, a CTA on two SMs, lines 0 and 1, among a GPU stream's lane and lanes whose tid only begins like a
    warp's: each warp lane read as its pid and tid say, every other lane left out."""
    events = [scope_event("s", sm, cta, warp, 100 * cta, 10, line=line, kernel=kernel)
              for kernel, sm, cta in (("k1", 3, 0), ("k2", 5, 1), ("k1", 4, 0)) for warp in (0, 1) for line in (0, 1)]
    events += [{"ph": "X", "cat": "kernel", "name": "other", "pid": 0, "tid": 7, "ts": 1, "dur": 1},
               {**scope_event("s", 3, 0, 0, 1, 1, kernel="k1"), "tid": "warp x"},
               {**scope_event("s", 3, 0, 0, 1, 1, kernel="k1"), "tid": "warpless"}]
    trace = read_trace({"traceEvents": events})
    found = warp_trace(trace).lane_of
    expected = {}
    for number, lane in enumerate(trace.lanes):
        site, spot = re.fullmatch(r"(.*) Core(\d+) CTA(\d+)", str(lane.pid)), \
            re.fullmatch(r"warp (\d+) \(line (\d+)\)", str(lane.tid))
        if site and spot:
            expected[number] = (site[1], int(site[2]), int(site[3]), int(spot[1]), int(spot[2]))
    assert len(expected) == 12 and len(trace.lanes) == 15
    assert dict(found) == expected and len(found) == 12
    assert all(number not in found for number in range(len(trace.lanes)) if number not in expected)
    assert found.kernels == ["k1", "k2"]  # in the order of their first lanes


# ---- launches -----------------------------------------------------------------------------------------------------
def test_the_fixture_splits_into_its_two_launches_each_with_every_warp_once(warps):
    assert [launch.kernel for launch in warps.launches] == ["k_scoped", "k_scoped"]
    first, second = warps.launches
    for launch in warps.launches:
        assert len(launch.warps) == 64 and len({w.cta for w in launch.warps}) == 16
        assert len(launch.events) == 256  # 4 scopes of 64 warps
    assert (first.start, first.end) == (0, 1338)
    assert (second.start, second.end) == (767040, 767857)
    assert first.end - first.start == 1338
    # the same CTA ran on another SM in the other launch: grouped per launch
    assert [w.sm for w in first.warps if w.cta == 0] == [128] * 4
    assert [w.sm for w in second.warps if w.cta == 0] == [124] * 4
    assert len(first.sms) == len(second.sms) == 16 and first.sms[128] == {0: [0, 1, 2, 3]}


def test_each_launch_is_worked_out_when_first_asked_for_and_the_numbers_do_not_depend_on_the_order():
    # the timeline draws launch 1 before the others are worked out; asking in another order gives the same numbers
    fresh = warp_trace(load_profile(INSTR).trace)
    assert len(fresh.launches) == 2 and fresh.launches.worked_out == 0
    second = fresh.launches[1]
    assert fresh.launches.worked_out == 1 and fresh.launches[1] is second
    eager = warp_trace(load_profile(INSTR).trace)
    for early, late in zip(eager.launches, reversed([fresh.launches[1], fresh.launches[0]])):
        assert (early.number, early.ordinal, early.start, early.end, early.events, early.counts) == \
            (late.number, late.ordinal, late.start, late.end, late.events, late.counts)
        assert stats_of(early.scopes) == stats_of(late.scopes) and list(early.warps) == list(late.warps)
    assert stats_of(fresh.across["k_scoped"]) == stats_of(eager.across["k_scoped"])
    assert list(fresh.across) == ["k_scoped"] and list(fresh.across["k_scoped"]) == ["kernel", "load", "compute",
                                                                                      "store"]


def stats_of(scopes):
    return [(s.name, s.count, s.min, s.median, s.p99, s.max, list(s.stragglers), s.samples) for s in scopes.values()]


def test_waves_of_new_ctas_after_a_gap_stay_in_their_launch():
    # two CTAs on one SM, the second starting after the first ended (a second wave): one launch
    events = [scope_event("kernel", 0, 0, 0, 0, 100), scope_event("kernel", 0, 1, 0, 5000, 100)]
    found = synthetic(events)
    assert len(found.launches) == 1 and {w.cta for w in found.launches[0].warps} == {0, 1}


def test_a_warp_that_runs_again_after_a_gap_starts_a_new_launch_whatever_its_sm():
    events = [scope_event("kernel", 0, 0, 0, 0, 100), scope_event("kernel", 1, 1, 0, 10, 100),
              scope_event("kernel", 3, 0, 0, 5000, 80), scope_event("kernel", 0, 1, 0, 5010, 90)]
    found = synthetic(events)
    assert [len(launch.warps) for launch in found.launches] == [2, 2]
    assert [(w.sm, w.cta) for w in found.launches[1].warps] == [(0, 1), (3, 0)]  # by SM, CTA, warp


def test_kernels_are_launched_apart():
    events = [scope_event("kernel", 0, 0, 0, 0, 100, kernel="a"), scope_event("kernel", 0, 0, 0, 500, 100,
                                                                               kernel="b")]
    assert [launch.kernel for launch in synthetic(events).launches] == ["a", "b"]


# ---- statistics ---------------------------------------------------------------------------------------------------
def test_nearest_rank_percentile_and_median():
    assert nearest_rank([5], 99) == 5
    assert nearest_rank(list(range(1, 101)), 99) == 99  # rank ceil(0.99 × 100) = 99
    assert nearest_rank(list(range(1, 201)), 99) == 198
    assert nearest_rank(list(range(1, 65)), 99) == 64  # under 100 warps the p99 is the slowest
    assert nearest_rank(list(range(1, 102)), 99) == 100  # rank ceil(99.99) = 100
    assert nearest_rank([1, 2, 3, 4], 50) == 2
    assert median([1, 2, 3, 4]) == 2.5 and median([3, 1, 2]) == 2


def stats(scope):
    return scope.count, scope.min, scope.median, scope.p99, scope.max


def test_per_launch_statistics_in_cycles(warps):
    first, second = warps.launches
    assert list(first.scopes) == ["kernel", "load", "compute", "store"]
    assert stats(first.scopes["kernel"]) == (64, 969, 1117, 1331, 1331)  # cold
    assert stats(second.scopes["kernel"]) == (64, 623, 672, 717, 717)  # warm
    assert stats(first.scopes["load"]) == (64, 127, 155, 164, 164)
    assert stats(first.scopes["compute"]) == (64, 632, 770, 978, 978)
    assert stats(first.scopes["store"]) == (64, 73, 78.5, 83, 83)
    assert stats(second.scopes["compute"]) == (64, 284, 316, 361, 361)
    assert all(isinstance(value, int) for value in (first.scopes["kernel"].min, first.scopes["kernel"].max))


def test_statistics_across_launches(warps):
    across = warps.across["k_scoped"]
    assert stats(across["kernel"]) == (128, 623, 843, 1331, 1331)
    assert stats(across["compute"]) == (128, 284, 496.5, 976, 978)


def test_stragglers_are_the_slowest_warps_named(warps):
    first, second = warps.launches
    kernel = first.scopes["kernel"]
    assert [(s.warp.name, s.cycles) for s in kernel.stragglers] == [("CTA 10 warp 1 (SM 4)", 1331),
                                                                    ("CTA 10 warp 3 (SM 4)", 1331)]
    assert [s.warp.name for s in second.scopes["kernel"].stragglers] == ["CTA 3 warp 3 (SM 127)"]
    straggler = kernel.stragglers[0]
    event = warps.trace.events[straggler.event]
    assert event.name == "kernel" and round(event.duration) == 1331
    assert warps.trace.lanes[event.lane].pid == "k_scoped Core4 CTA10"
    # across launches: above the p99 (976) or the max: one warp, in its launch
    compute = warps.across["k_scoped"]["compute"]
    assert [(s.warp.name, s.launch, s.cycles) for s in compute.stragglers] == [("CTA 10 warp 0 (SM 4)", 1, 978)]


def test_above_p99_with_more_than_a_hundred_warps():
    # 200 warps: 1..200 cycles; p99 = 198, so 199 and 200 are the stragglers
    events = [scope_event("s", cta % 132, cta, 0, 0, cta + 1) for cta in range(200)]
    scope = synthetic(events).launches[0].scopes["s"]
    assert (scope.p99, scope.max) == (198, 200)
    assert [(s.warp.cta, s.cycles) for s in scope.stragglers] == [(199, 200), (198, 199)]


def test_cycles_are_whole_even_where_the_file_s_decimals_are_not():
    # 1.011 µs × 1000 is 1010.9999999999999 in floating point: 1011 cycles
    events = [scope_event("s", 0, 0, 0, 0, 1011), scope_event("s", 0, 1, 0, 0, 1001)]
    scope = synthetic(events).launches[0].scopes["s"]
    assert (scope.min, scope.max) == (1001, 1011) and isinstance(scope.max, int)


# ---- the clock ----------------------------------------------------------------------------------------------------
def test_without_a_clock_cycles_only_and_the_clock_is_unknown(warps):
    assert warps.clock_khz is None and warps.micros(1117) is None
    assert warps.cycles_text(1117) == "1,117 cyc" and warps.cycles_text(78.5) == "78.5 cyc"
    assert "clock unknown" in warps.clock_note


def test_with_the_sm_clock_microseconds_at_that_clock():
    found = warp_trace(load_profile(INSTR).trace, clock_khz=H200_KHZ)
    assert found.micros(1117) == pytest.approx(1117 / 1980)  # 0.564 µs at 1,980 MHz
    assert found.micros(1980) == 1.0
    assert found.cycles_text(1117) == "1,117 cyc (564 ns)"
    assert found.cycles_text(1980 * 2000) == "3,960,000 cyc (2.00 ms)"
    assert "1,980 MHz" in found.clock_note and "max SM clock" in found.clock_note


def test_a_trace_without_warps_has_no_warp_timeline():
    assert warp_trace(load_profile(FIXTURES / "triton390_two_streams.chrome_trace").trace) is None


# ---- text and JSON ------------------------------------------------------------------------------------------------
def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_view_plain_prints_the_statistics_per_launch_and_across_in_cycles():
    result = cli("view", str(INSTR), "--plain")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # positions are trace units (cycles within a CTA, ns between CTAs), never called cycles or converted to time
    assert lines[1] == ("trace: 192 warp lanes, 767,857 trace units (cycles within a CTA, ns between CTAs) from the "
                        "first event to the last")
    assert "µs" not in result.stdout  # Proton's assumed 1 GHz is never shown as time
    assert lines[2] == ("warps: 2 launches of k_scoped; cycles (SM clock unknown: the trace does not record it); "
                        "p99 by nearest rank")
    assert lines[3] == "launch 1 of 2 (k_scoped): 16 CTAs on 16 SMs, 64 warps, 1,338 trace units from its first scope to its " \
                       "last end"
    assert lines[4].split() == ["warps", "min", "median", "p99", "max", "scope"]
    assert lines[5].split()[:9] == ["64", "969", "cyc", "1,117", "cyc", "1,331", "cyc", "1,331", "cyc"]
    assert lines[5].endswith("kernel  slowest: CTA 10 warp 1 (SM 4) 1,331 cyc, CTA 10 warp 3 (SM 4) 1,331 cyc")
    store = next(line for line in lines[5:10] if " store" in line)
    assert store.split()[:9] == ["64", "73", "cyc", "78.5", "cyc", "83", "cyc", "83", "cyc"]
    second = lines.index("launch 2 of 2 (k_scoped): 16 CTAs on 16 SMs, 64 warps, 817 trace units from its first scope to "
                         "its last end")
    assert lines[second + 2].split()[:3] == ["64", "623", "cyc"] and "CTA 3 warp 3 (SM 127) 717 cyc" in \
        lines[second + 2]
    across = lines.index("all 2 launches of k_scoped: 128 warp runs")
    compute = next(line for line in lines[across:] if " compute" in line)
    assert compute.endswith("compute  slowest: CTA 10 warp 0 (SM 4) in launch 1 978 cyc")
    assert lines[-2].split() == ["cycles", "%", "per", "warp·launch", "kernel"]  # then the kernel summary


@pytest.mark.parametrize(("khz", "shown"), [("1", "0.001 MHz"), ("1980500", "1,980.5 MHz"), ("1980001", "1,980.001 MHz")])
def test_a_clock_given_in_khz_is_named_in_mhz_exactly(khz, shown):
    """The clock the times are at, in the warps' line and the time column's title, never rounded to another."""
    result = cli("view", str(INSTR), "--plain", "--sm-clock-khz", khz)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].split("SM clock ")[1].startswith(shown + ";") and any(f"at {shown}" in line for line in lines)


def test_view_plain_with_the_sm_clock_adds_times_at_it():
    result = cli("view", str(INSTR), "--plain", "--sm-clock-khz", "1980000")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "times at the reported max SM clock 1,980 MHz" in lines[2]
    assert "1,117 cyc (564 ns)" in lines[5] and "1,331 cyc (672 ns)" in lines[5]


def test_json_carries_the_warp_statistics():
    document = json.loads(cli("view", str(INSTR), "--json", "--sm-clock-khz", "1980000").stdout)
    warps = document["trace"]["warps"]
    assert warps["clock_khz"] == 1980000 and type(warps["clock_khz"]) is int and warps["p99"] == "nearest rank"
    first = warps["launches"][0]
    assert (first["number"], first["kernel"], first["start"], first["end"]) == (1, "k_scoped", 0, 1338)
    assert (first["sms"], first["ctas"], first["warps"]) == (16, 16, 64)
    kernel = first["scopes"][0]
    assert {key: kernel[key] for key in ("name", "count", "min", "median", "p99", "max")} == \
        {"name": "kernel", "count": 64, "min": 969, "median": 1117, "p99": 1331, "max": 1331}
    assert kernel["us"]["median"] == pytest.approx(1117 / 1980)
    assert kernel["stragglers"][0] == {"name": "CTA 10 warp 1 (SM 4)", "sm": 4, "cta": 10, "warp": 1, "launch": 1,
                                       "cycles": 1331}
    across = warps["across_launches"]["k_scoped"]
    assert [scope["name"] for scope in across] == ["kernel", "load", "compute", "store"]
    assert across[2]["median"] == 496.5
    plain = json.loads(cli("view", str(INSTR), "--json").stdout)["trace"]["warps"]
    assert plain["clock_khz"] is None and plain["launches"][0]["scopes"][0]["us"] is None


@pytest.mark.parametrize("value", ["0", "-5", "fast", "1.5e99", "²"])
def test_a_bad_sm_clock_is_one_line_exit_2(value):
    result = cli("view", str(INSTR), "--plain", "--sm-clock-khz", value)
    assert result.returncode == 2 and result.stdout == "" and "--sm-clock-khz" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_the_sm_clock_on_a_capture_without_warps_is_refused():
    result = cli("view", str(FIXTURES / "vecadd_hook.hatchet"), "--plain", "--sm-clock-khz", "1980000")
    assert result.returncode == 2 and "instrumentation trace" in result.stderr


def test_the_first_launch_is_worked_out_without_importing_numpy_ma():
    """numpy.ma comes with numpy's `unique` without indices; importing it in front of the first launch drawn cost
    0.02 s on the H200 box. A process of its own, so that nothing else has imported it."""
    program = f"""
import sys
from proton_tui.hatchet.chrome_trace import decode_trace
from proton_tui.view.warps import warp_trace
warps = warp_trace(decode_trace(open({str(FIXTURES / "instr_scopes_trace.chrome_trace")!r}, "rb").read()))
print(warps.launches[0].counts, "numpy.ma" in sys.modules)
"""
    found = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                           env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert found.returncode == 0, found.stderr
    counts, imported = found.stdout.rsplit(" ", 1)
    assert imported.strip() == "False"
    assert counts == str(warp_trace(read_trace(json.loads((FIXTURES / "instr_scopes_trace.chrome_trace")
                                                           .read_text()))).launches[0].counts)
