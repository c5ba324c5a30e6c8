"""The header and detail lines people read: plurals, and ROOT's placeholder metrics."""

from __future__ import annotations

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.hatchet.errors import CaptureError
from proton_tui.output.details import bandwidth_notes, details_text, header_line, node_details
from proton_tui.output.text import kernel_summary_lines, tree_lines
from proton_tui.view.display import Display
from proton_tui.view.formatting import counted, format_value
from proton_tui.view.names import Names
from tests.helpers import capture_path, kernel, scope


def test_counts_take_the_noun_in_the_right_number(write_capture):
    one = load_profile(write_capture([scope("ROOT", kernel("add", 100, count=1)), {}]))
    assert header_line(one).endswith("GPU time 100 ns  1 launch  1 kernel  devices: CUDA:0")
    two = load_profile(write_capture([scope("ROOT", kernel("add", 100, count=2), kernel("mul", 5)), {}]))
    assert "  3 launches  2 kernels  " in header_line(two)
    assert (counted(0, "run"), counted(1, "GPU"), counted(16_415_098, "launch", "launches")) == \
        ("0 runs", "1 GPU", "16,415,098 launches")


def test_roots_zero_metrics_are_labelled_as_protons_placeholders():
    profile = load_profile(capture_path("vecadd_hook"))
    details = dict(node_details(Display(profile, Names()), 0))
    assert "metrics" not in details
    assert details["Proton's hints"].startswith("bytes=0, count=0,") and "placeholders" in details["Proton's hints"]
    assert "metrics" in dict(node_details(Display(profile, Names()), 1))


def test_a_kernel_above_the_dram_peak_is_marked_cache_resident(write_capture):
    """The default vecadd (1M floats, 12 MB a launch) fits in an H200's L2 and moves more than the DRAM peak: said
    where % of peak is shown (the header lines of the TUI and --plain), with which figure is which."""
    h200 = {"CUDA": {"0": {"arch": "90", "bus_width": 6144, "clock_rate": 1980000, "memory_clock_rate": 3201000,
                           "num_sms": 132}}}
    fast = kernel("add_kernel<n=1048576>", 2300, count=1, bytes=12_582_912)  # 5,471 GB/s: 111.3 % of the 4,916 GB/s peak
    slow = kernel("add_kernel<n=268435456>", 732_000, count=1, bytes=3_221_225_472)  # 4,400 GB/s
    profile = load_profile(write_capture([scope("ROOT", fast, slow), h200]))
    (note,) = bandwidth_notes(profile)
    assert note.startswith("note: add_kernel<n=1048576> moves 111.3% of the DRAM peak")
    assert "(12,582,912 bytes a launch)" in note and "not the payload's host-timed gbps=" in note
    plain = list(tree_lines(Display(profile, Names())))
    assert plain[1] == note and list(kernel_summary_lines(Display(profile, Names())))[1] == note  # --kernels, run


def test_a_long_value_wraps_under_itself_not_under_the_labels():
    name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >"
    text = details_text([("readable", name), ("time", "2.31 µs")], width=60)
    lines = text.split("\n")
    assert lines[0].startswith("readable  void at::native::") and lines[-1] == "    time  2.31 µs"
    assert all(line.startswith(" " * 10) and len(line) <= 60 for line in lines[1:-1])
    assert "".join(line[10:] for line in lines[:-1]).replace(" ", "") == name.replace(" ", "")
    assert details_text([("time", "2.31 µs")]) == "time  2.31 µs"


def test_share_bars_are_eighths_of_a_cell():
    from proton_tui.view.formatting import share_bar

    assert share_bar(100.0) == "████████" and share_bar(0.0) == " " * 8
    assert share_bar(50.0) == "████    " and share_bar(100.0 / 64) == "▏       "
    assert share_bar(0.001) == "▏       "  # any share above zero shows
    assert share_bar(93.75) == "███████▌" and share_bar(150.0) == "████████"
    assert share_bar(30.0, 4) == "█▎  "  # 1.2 cells: 9.6 eighths, rounded to 10


def test_details_show_the_short_full_and_raw_names_and_say_when_one_could_not_be_read(write_capture):
    broken = "_ZN2at6native_broken"
    pow_kernel = next(n for n in load_profile(capture_path("gpt2_shadow")).names if "pow_tensor_scalar" in n)
    profile = load_profile(write_capture([scope("ROOT", kernel(pow_kernel, 100), kernel(broken, 50)), {}]))
    display = Display(profile, Names.demangled(profile.names))
    node = profile.names.index(pow_kernel)
    rows = dict(node_details(display, node))
    assert rows["name"] == "vectorized_elementwise_kernel<…>"  # short: nothing else in the capture is one
    assert rows["full"].startswith("void at::native::vectorized_elementwise_kernel<4, ") and rows["raw"] == pow_kernel
    text = details_text(node_details(display, node), width=60)
    assert all(len(line) <= 60 for line in text.splitlines())
    assert "".join(rows["full"].split()) in "".join(text.split())  # wrapped, never cut
    unread = dict(node_details(display, profile.names.index(broken)))
    assert unread["name"] == broken and "could not read" in unread["raw"] and "full" not in unread


HUGE_NS = 123456789012345678901234567890


def test_integer_times_stay_exact_through_sums_and_the_formatter(write_capture):
    path = write_capture([scope("ROOT", scope("s", kernel("a", HUGE_NS), kernel("b", 10))), {}])
    profile = load_profile(path)
    assert profile.total == HUGE_NS + 10 and profile.kernel_stats()[0].value == HUGE_NS
    assert profile.device_totals() == {"CUDA:0": HUGE_NS + 10}
    lines = list(tree_lines(Display(profile)))
    assert "GPU time 123,456,789,012,345,678,901.23 s" in lines[0]
    assert "61,728,394,506,172,839,450.62 s" in "\n".join(lines)  # (HUGE_NS + 10) / 2 launches, exact
    assert format_value(10**40, "cycles") == f"{10**40:,} cyc"


def test_a_total_past_the_largest_float_is_refused_naming_the_file(write_capture):
    path = write_capture([scope("ROOT", kernel("a", 1.7e308), kernel("b", 1.7e308)), {}])
    with pytest.raises(CaptureError) as caught:
        load_profile(path)
    assert str(path) in str(caught.value) and "infinite" in str(caught.value)


def test_the_mean_of_a_large_integer_is_divided_exactly(write_capture):
    path = write_capture([scope("ROOT", scope("s", kernel("a", HUGE_NS), kernel("b", 5))), {}])
    display = Display(load_profile(path))
    lines = "\n".join(tree_lines(display))
    assert "61,728,394,506,172,839,450.62 s  └─ s" in lines  # (HUGE_NS + 5) / 2 = 61,728,394,506,172,839,450.617… s
    assert "61,728,394,506,172,841,984" not in lines
