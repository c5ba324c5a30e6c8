"""The profile model on real H200 captures and on hand-shaped edge cases."""

from __future__ import annotations

import json
import re

import pytest

from proton_tui.hatchet import CaptureError, load_profile
from proton_tui.output.text import kernel_summary_text
from proton_tui.view.display import Display
from tests.helpers import BAD_INPUTS, capture_path, kernel, scope

H200 = {"CUDA": {"0": {"arch": "90", "bus_width": 6016, "clock_rate": 1980000, "memory_clock_rate": 3201000, "num_sms": 132}}}


def node_named(profile, name):
    return next(i for i in range(profile.node_count) if profile.names[i] == name)


def test_vecadd_auto_add_kernel_is_20_launches_and_46112_ns():
    profile = load_profile(capture_path("vecadd_auto"))
    add = node_named(profile, "add_kernel")
    assert (profile.inclusive[add], profile.launches[add]) == (46112, 20)
    assert profile.total == 46112 + 8736 + 5568 + 4864 + 2048
    assert profile.kernel_launches == 26
    assert len(profile.kernel_stats()) == 5
    assert profile.device_names() == ["CUDA:0"]


def test_root_hint_metrics_do_not_count():
    profile = load_profile(capture_path("vecadd_hook"))  # ROOT carries {"bytes": 0, "count": 0, "time (ns)": 0}
    assert not profile.has_own[0]
    assert profile.total == pytest.approx(39661509)


def test_vecadd_hook_bandwidth_is_4_40_tbps_and_91_percent_of_peak():
    profile = load_profile(capture_path("vecadd_hook"))
    add = node_named(profile, "add_kernel<n=268435456>")
    assert profile.gbps(add) == pytest.approx(4400.4, abs=0.1)
    assert profile.peak_bytes_per_s("CUDA:0") == pytest.approx(4814.3e9, rel=1e-4)
    assert profile.peak_percent(add) == pytest.approx(91.4, abs=0.05)
    assert profile.gbps(0) is None  # ROOT's time includes torch kernels that declared no bytes


def test_vecadd_instr_is_empty():
    profile = load_profile(capture_path("vecadd_instr"))
    assert profile.is_empty and profile.node_count == 1 and profile.total == 0
    assert profile.metrics_summary()["proton_kernel_count"] == 0


def test_multigpu_scopes_and_devices():
    profile = load_profile(capture_path("multigpu"))
    top = [profile.names[c] for c in profile.children[0]]
    assert {"gpu0", "gpu1"} <= set(top)
    gpu0, gpu1 = node_named(profile, "gpu0"), node_named(profile, "gpu1")
    assert profile.devices[profile.children[gpu0][0]] == "CUDA:0"
    assert profile.devices[profile.children[gpu1][0]] == "CUDA:1"
    assert profile.inclusive[gpu0] == 478302 and profile.inclusive[gpu1] == 479487
    assert profile.device_names() == ["CUDA:0", "CUDA:1"]
    # device_info lists only GPU 1 (Proton 3.6's bug): no peak is invented for GPU 0.
    assert profile.peak_bytes_per_s("CUDA:0") is None and profile.peak_bytes_per_s("CUDA:1") > 0


def test_gpt2_shadow_has_61_nodes_and_scopes_sum_their_kernels():
    profile = load_profile(capture_path("gpt2_shadow"))
    assert profile.node_count == 61
    step = node_named(profile, "step")
    parts = [node_named(profile, n) for n in ("forward", "backward", "optimizer")]
    assert profile.inclusive[step] == sum(profile.inclusive[p] for p in parts)
    assert profile.launches[step] == sum(profile.launches[p] for p in parts) == profile.kernel_launches


def test_metrics_summary_keys_and_values():
    profile = load_profile(capture_path("vecadd_auto"))
    summary = profile.metrics_summary()
    assert summary["proton_kernel_count"] == 26
    assert summary["proton_gpu_time_ms"] == pytest.approx(0.067328)
    assert summary["proton_top_kernel_ms"] == pytest.approx(0.046112)
    assert summary["proton_top_kernels"][0] == "add_kernel" and len(summary["proton_top_kernels"]) == 5
    assert summary["proton_artifact_dir"] == str(capture_path("vecadd_auto").resolve().parent)


def test_kernel_summary_groups_one_name_across_scopes():
    profile = load_profile(capture_path("multigpu"))
    add = next(k for k in profile.kernel_stats() if k.name == "add_kernel")
    assert (add.value, add.launches, add.devices) == (478302 + 479487, 20, ("CUDA:0", "CUDA:1"))


@pytest.mark.parametrize("name", ["gpt2_shadow", "multigpu", "vecadd_hook", "vecadd_instr"])
def test_header_counts_agree_with_the_kernel_summary(name):
    """The header's counts come without summing the kernel summary; they say what it says."""
    profile = load_profile(capture_path(name))
    count, launches, devices = profile.kernel_count, profile.kernel_launches, profile.kernel_devices()
    assert profile._kernel_stats is None  # none of them summed it
    stats = profile.kernel_stats()
    assert count == len(stats) and launches == sum(kernel.launches for kernel in stats)
    assert devices == set(profile.device_totals()) and profile.kernel_count == count


def test_old_metric_spelling_and_other_time_units(write_capture):
    old = {"frame": {"name": "k", "type": "function"}, "children": [],
           "metrics": {"Time (ns)": 1000, "Count": 4, "DeviceId": "0", "DeviceType": "CUDA"}}
    in_us = {"frame": {"name": "u", "type": "function"}, "children": [],
             "metrics": {"time (us)": 2.5, "count": 1, "device_id": "0", "device_type": "CUDA"}}
    profile = load_profile(write_capture([scope("ROOT", old, in_us), H200]))
    assert profile.total == 3500 and profile.kernel_launches == 5
    assert profile.devices[1:] == ["CUDA:0", "CUDA:0"]


def test_node_with_own_time_keeps_it_over_its_children(write_capture):
    region = lambda name, cycles: {"frame": {"name": name}, "children": [], "metrics": {"cycles": cycles}}
    instrumented = {"frame": {"name": "add_instr"}, "metrics": {"cycles": 900, "count": 1},
                    "children": [region("load_x", 300), region("load_y", 400)]}
    profile = load_profile(write_capture([scope("ROOT", instrumented), {}]))
    assert profile.unit == "cycles"
    assert profile.total == 900  # not 900 + 700
    assert [k.name for k in profile.kernel_stats()] == ["add_instr"]  # regions are not kernels


def test_scope_metrics_are_not_double_counted(write_capture):
    tree = scope("ROOT", scope("layer", kernel("k", 100, bytes=1000), bytes=5000, count=7))
    profile = load_profile(write_capture([tree, H200]))
    layer = node_named(profile, "layer")
    assert (profile.launches[layer], profile.bytes[layer]) == (1, 1000)


def test_internal_launch_metadata_frames_hidden_by_default(write_capture):
    tree = scope("ROOT", kernel("add_kernel", 100), scope("__proton_launch_metadata", kernel("fill", 7)))
    path = write_capture([tree, H200])
    hidden = load_profile(path)
    assert hidden.names == ["ROOT", "add_kernel"] and hidden.total == 100 and hidden.hidden_internal == 2
    shown = load_profile(path, show_internal=True)
    assert shown.total == 107


def test_deep_chain_beyond_orjson_limit_loads(write_capture):
    depth = 5000  # a python-context stack this deep nests JSON 10,000 levels; orjson stops at 1,024
    opening = "".join(f'{{"frame":{{"name":"frame{level}"}},"metrics":{{}},"children":[' for level in range(depth))
    text = f'[{{"frame":{{"name":"ROOT"}},"metrics":{{}},"children":[{opening}{json.dumps(kernel("leaf", 42))}'
    text += "]}" * depth + "]}, {}]"
    profile = load_profile(write_capture(text.encode()))
    assert profile.node_count == depth + 2
    assert max(profile.depths) == depth + 1
    assert profile.total == 42 and profile.inclusive[1] == 42


def test_filtered_recomputes_totals_and_keeps_ancestors():
    profile = load_profile(capture_path("gpt2_shadow"))
    forward = profile.filtered(include=re.compile("^forward$").search)
    assert {profile.names[0], "step", "forward"} <= set(forward.names)
    assert "backward" not in forward.names
    assert forward.total == profile.inclusive[node_named(profile, "forward")]
    assert forward.percent(forward.total) == pytest.approx(100 * forward.total / profile.total)
    no_gemm = profile.filtered(exclude=re.compile("gemm").search)
    assert all("gemm" not in name for name in no_gemm.names)
    assert no_gemm.total < profile.total


def test_shown_hides_rows_without_changing_numbers():
    profile = load_profile(capture_path("gpt2_shadow"))
    assert [profile.names[n] for n, show in enumerate(profile.visible(max_depth=1)) if show] == ["ROOT", "step"]
    big = profile.visible(min_percent=5.0)
    assert all(profile.percent(profile.inclusive[n]) >= 5.0 for n in range(1, profile.node_count) if big[n])
    assert not all(big) and profile.total == 31097204


def test_sorted_children_orders():
    profile = load_profile(capture_path("vecadd_auto"))
    by_time = [profile.names[c] for c in Display(profile).children(0)]
    assert by_time[0] == "add_kernel"
    times = [profile.inclusive[c] for c in Display(profile).children(0)]
    assert times == sorted(times, reverse=True)
    by_launches = [profile.launches[c] for c in Display(profile, sort="launches").children(0)]
    assert by_launches == sorted(by_launches, reverse=True)
    by_name = [profile.names[c] for c in Display(profile, sort="name").children(0)]
    assert by_name == sorted(by_name)




@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_raises_one_line_error_naming_the_file(case, write_capture):
    content, expected = BAD_INPUTS[case]
    path = write_capture(content, name="bad.hatchet")
    with pytest.raises(CaptureError) as error:
        load_profile(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(CaptureError, match="no such file"):
        load_profile(tmp_path / "absent.hatchet")
    (tmp_path / "x.hatchet.hatchet").write_text("[]")  # what `proton -n x.hatchet` writes
    with pytest.raises(CaptureError, match=r"no such file \(but x.hatchet.hatchet is: Proton's -n takes the name"):
        load_profile(tmp_path / "x.hatchet")
    with pytest.raises(CaptureError, match="is a directory"):
        load_profile(tmp_path)


def hip_capture() -> list:
    """Two HIP kernels on an MI210 (gfx90a) and an MI300X (gfx942), shaped like Proton's own HIP test example."""
    info = {"HIP": {"0": {"arch": "gfx90a", "bus_width": 4096, "clock_rate": 1700000, "memory_clock_rate": 1600000,
                          "num_sms": 104},
                    "1": {"arch": "gfx942", "bus_width": 8192, "clock_rate": 5200000, "memory_clock_rate": 2525000,
                          "num_sms": 304},
                    "2": {"arch": "gfx1100", "bus_width": 384, "memory_clock_rate": 2500000}}}
    kernels = [kernel("on_gfx942", 204800, device="1", bytes=1e8), kernel("on_gfx90a", 204800, device="0", bytes=1e7),
               kernel("on_gfx1100", 204800, device="2", bytes=1e7)]
    for node in kernels:
        node["metrics"]["device_type"] = "HIP"
    return [scope("ROOT", *kernels), info]


def test_peak_on_amd_is_the_architecture_peak_proton_uses(write_capture):
    profile = load_profile(write_capture(hip_capture()))
    share = {profile.names[node]: profile.peak_percent(node) for node in range(1, profile.node_count)}
    assert share["on_gfx942"] == pytest.approx(9.2, abs=0.05)  # 1e8 B / 204.8 µs against gfx942's 5.3 TB/s
    assert share["on_gfx90a"] == pytest.approx(1.5, abs=0.05)  # 1e7 B / 204.8 µs against gfx90a's 3.2 TB/s
    assert share["on_gfx1100"] is None  # an architecture Proton gives no peak: none, rather than a guess


def test_kernel_summary_bandwidth_counts_only_the_instances_that_declared_bytes(write_capture):
    tree = scope("ROOT", scope("a", kernel("k", 1000, bytes=1e6)), scope("b", kernel("k", 1000)))
    profile = load_profile(write_capture([tree, {}]))
    (stats,) = profile.kernel_stats()
    tree_gbps = {profile.gbps(node) for node in range(profile.node_count) if profile.names[node] == "k"} - {None}
    assert tree_gbps == {1000.0} and stats.gbps == pytest.approx(1000.0)


def test_numeric_device_types_are_the_vendor_proton_means(write_capture):
    regions = [scope("load", cycles=40, normalized_cycles=10.0, device_id="0", device_type="1"),
               scope("store", cycles=20, normalized_cycles=5.0, device_id="0", device_type="1")]
    tree = scope("ROOT", scope("add_instr", *regions))
    info = {"CUDA": {"0": {"arch": "90", "bus_width": 6144, "clock_rate": 1980000, "memory_clock_rate": 3201000,
                           "num_sms": 132}}}
    profile = load_profile(write_capture([tree, info]))
    assert profile.unit == "cycles" and profile.device_names() == ["CUDA:0"]


def test_cycle_kernels_without_launches_have_no_average(write_capture):
    tree = scope("ROOT", scope("k", cycles=40), scope("j", cycles=20))
    profile = load_profile(write_capture([tree, {}]))
    assert all(kernel.avg is None for kernel in profile.kernel_stats())
    rows = [line.split() for line in kernel_summary_text(Display(profile)).splitlines()[2:]]
    # no launches column (none are recorded) and no per-warp value (no normalized_cycles)
    assert rows == [["40", "cyc", "66.7%", "k"], ["20", "cyc", "33.3%", "j"]]


def test_a_capture_written_a_while_ago_is_compared_again_without_any_sleep(monkeypatch, tmp_path):
    """Its second read comes at once: not even a sleep of 0, which gives the CPU away (1,024 rank captures)."""
    import os
    import shutil
    import time

    from proton_tui.hatchet import open_capture, source

    path = tmp_path / "old.hatchet"
    shutil.copy(capture_path("vecadd_auto"), path)
    os.utime(path, (time.time() - 60, time.time() - 60))
    slept = []
    monkeypatch.setattr(source.time, "sleep", slept.append)
    assert open_capture(path).total == 46112 + 8736 + 5568 + 4864 + 2048 and slept == []


def test_overlapping_reads_put_the_collector_back_as_it_was_when_the_last_one_ends(tmp_path):
    """Two captures read at once (a rank set's compare, a capture opened while another is read): the cyclic GC is
    off while either is read, and back as it was after both, whichever ends first."""
    import gc
    import threading

    from proton_tui.hatchet import pending_capture
    from proton_tui.hatchet.loader import GC_PAUSED, WhileReading

    setting, changes = ["as it was"], []

    def change() -> str:
        before, setting[0] = setting[0], "changed"
        changes.append("changed")
        return before

    overlapping = WhileReading(change, lambda before: setting.__setitem__(0, before))
    overlapping.hold()
    overlapping.hold()
    overlapping.release()
    assert setting == ["changed"]  # the other read goes on
    overlapping.release()
    assert setting == ["as it was"] and changes == ["changed"]

    before = gc.isenabled()  # (a read an earlier test abandoned in this process may hold it off)
    first, second = pending_capture(capture_path("gpt2_shadow")), pending_capture(capture_path("vecadd_hook"))
    GC_PAUSED.hold()  # a read under way on another thread
    try:
        finished = threading.Event()
        reader = threading.Thread(target=lambda: (first.finish(), finished.set()))
        reader.start()
        reader.join(30)
        assert finished.is_set() and not gc.isenabled()  # the other read still goes on
    finally:
        GC_PAUSED.release()
    assert gc.isenabled() == before
    second.finish()
    assert gc.isenabled() == before
    first.close()
    second.close()
