"""Kernel names in three forms on real captures: demangled as c++filt writes them, with or without c++filt; short
names distinct within a capture; Python frames; names that are not mangled."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.hatchet.errors import CaptureError
from proton_tui.view.names import (
    DEFAULT_FORM,
    Names,
    demangle_all,
    demangler,
    demangler_available,
    display_name,
    frame_location,
)
from tests.helpers import capture_path

CUTLASS = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nt_align1EEvNT_6ParamsE"
CUTLASS_READABLE = (
    "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>"
    "(cutlass_80_simt_sgemm_256x128_8x4_nt_align1::Params)"
)
CXXFILT = shutil.which("c++filt")
needs_cxxfilt = pytest.mark.skipif(CXXFILT is None, reason="c++filt (binutils) is not installed")


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch):
    """Each test starts with nothing demangled, so a cached answer cannot hide a missing demangler."""
    monkeypatch.setattr(demangler, "_cache", {})


CAPTURES = ["gpt2_shadow", "multigpu", "vecadd_hook", "vecadd_auto", "vecadd_fail", "python_scopes"]


def capture_names(name: str) -> set[str]:
    return set(load_profile(capture_path(name)).names)


def test_gpt2_shadow_names_are_demangled():
    kernel_names = [kernel.name for kernel in load_profile(capture_path("gpt2_shadow")).kernel_stats()]
    readable = demangle_all(kernel_names)
    assert set(readable) == set(kernel_names)
    assert readable[CUTLASS] == CUTLASS_READABLE
    gemm = next(n for n in kernel_names if n.startswith("sm80_xmma_gemm"))
    assert readable[gemm] == gemm  # not mangled: kept as written
    mangled = [n for n in kernel_names if n.startswith("_Z")]
    assert len(mangled) > 30 and all(readable[n] != n for n in mangled)
    assert readable[next(n for n in mangled if "layer_norm" in n)].startswith("void at::native::")


@needs_cxxfilt
@pytest.mark.parametrize("capture", CAPTURES)
def test_full_names_are_what_cxxfilt_writes(capture):
    mangled = sorted(n for n in capture_names(capture) if n.startswith("_Z"))
    written = subprocess.run([CXXFILT], input="\n".join(mangled) + "\n", capture_output=True, text=True).stdout
    assert [Names.demangled(mangled).full(n) for n in mangled] == written.splitlines()


def test_missing_cxxfilt_changes_nothing(tmp_path, monkeypatch):
    with_path = Names.demangled(capture_names("gpt2_shadow"), form="short")
    expected = {n: (with_path.short(n), with_path.full(n)) for n in capture_names("gpt2_shadow")}
    monkeypatch.setattr(demangler, "_cache", {})
    monkeypatch.setenv("PATH", str(tmp_path))
    without = Names.demangled(capture_names("gpt2_shadow"), form="short")
    assert demangler_available()
    assert {n: (without.short(n), without.full(n)) for n in expected} == expected


@pytest.mark.parametrize("capture", CAPTURES)
def test_short_names_are_distinct_and_filters_find_every_form(capture):
    raw_names = capture_names(capture)
    names = Names.demangled(raw_names, form="short")
    shorts = [names.short(n) for n in raw_names]
    assert len(set(shorts)) == len(shorts)
    for raw in raw_names:
        for form in ("short", "full", "raw"):
            pattern = re.compile(re.escape(names.in_form(raw, form)))
            assert names.matches(pattern, raw)


def test_fill_functor_kernels_told_apart_by_their_functor():
    names = Names.demangled(capture_names("gpt2_shadow"), form="short")
    fills = sorted(names.short(n) for n in capture_names("gpt2_shadow") if "FillFunctor" in n)
    assert fills == ["vectorized_elementwise_kernel<…, FillFunctor<float>, …>",
                     "vectorized_elementwise_kernel<…, FillFunctor<long>, …>",
                     "vectorized_elementwise_kernel<…, FillFunctor<unsigned char>, …>"]


@pytest.mark.parametrize("raw", ["add_kernel<n=1048576>", "triton_poi_fused_add_0", "_Zbroken"])
def test_other_names_are_the_same_in_every_form(raw):
    names = Names.demangled([raw, CUTLASS])
    assert names.short(raw) == names.full(raw) == names.in_form(raw, "raw") == raw
    assert names.unreadable(raw) == (raw == "_Zbroken")


def test_forms_cycle_and_raw_flag():
    names = Names.demangled([CUTLASS], form="short")
    assert [names.form, names.next_form().form, names.next_form().next_form().form] == ["short", "full", "raw"]
    assert Names(raw=True).raw and Names().with_raw(True).form == "raw"
    assert Names.demangled([CUTLASS]).shown(CUTLASS) == "Kernel2<…>"  # the default form: short
    assert Names().form == DEFAULT_FORM == "short"
    with pytest.raises(ValueError):
        Names(form="readable")


def test_python_frames_short_with_base_name_full_with_path():
    raw = "/home/me/project/model.py:42@forward"
    names = Names.demangled([raw])
    assert names.shown(raw) == names.short(raw) == "forward  model.py:42"
    assert names.full(raw) == "forward  /home/me/project/model.py:42"
    assert names.next_form().shown(raw) == names.full(raw)


REPO = Path(__file__).resolve().parents[2]
# the fixtures, and the shared captures beside the checkout (or beside its worktree folder) where there are some
CAPTURE_FOLDERS = (REPO / "tests" / "fixtures", REPO.parent / "shared" / "captures", REPO.parents[1] / "shared" / "captures")
ALL_CAPTURES = sorted(path for folder in CAPTURE_FOLDERS if folder.is_dir()
                      for path in folder.iterdir() if path.is_file() and path.suffix not in (".md", ".json"))


@pytest.mark.parametrize("path", ALL_CAPTURES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_short_names_fit_80_characters_and_stay_distinct(path):
    """Every name of every capture (C++, cuBLAS, Triton, Inductor, Python frames): short in at most 80 characters,
    two different names never short alike."""
    try:
        raw_names = set(load_profile(path).names)
    except CaptureError:
        pytest.skip(f"{path.name} is not a readable capture")
    names = Names.demangled(raw_names)
    shorts = {raw: names.short(raw) for raw in raw_names}
    assert [short for short in shorts.values() if len(short) > 80] == []
    assert len(set(shorts.values())) == len(raw_names)


def test_long_cublas_names_keep_their_start_and_what_tells_them_apart():
    raw_names = capture_names("gpt2_shadow")
    names = Names.demangled(raw_names)
    gemms = {raw: names.short(raw) for raw in raw_names if raw.startswith("sm80_xmma_gemm")}
    assert len(gemms) == 5 and all(len(short) <= 80 and "…" in short for short in gemms.values())
    assert all(short.startswith("sm80_xmma_gemm_f32f32_f32f32_f32_") and short.endswith("_kernel__5x_cublas")
               for short in gemms.values())
    assert {short.split("…")[0].rsplit("_", 1)[1] for short in gemms.values()} == {
        "tilesize64x128x8", "tilesize64x64x8", "tilesize128x128x8"}
    split_k = next(raw for raw in gemms if "split_k" in raw)
    assert gemms[split_k].endswith("_k_kernel__5x_cublas")
    assert names.full(split_k) == names.with_form("raw").shown(split_k) == split_k  # only the short form is cut


@pytest.mark.parametrize("length", [81, 120, 300])
def test_long_triton_names_are_cut_only_over_80_characters(length):
    fits = "add_kernel<n=1048576>"
    inductor = "triton_poi_fused_" + "_".join(f"op{index}" for index in range(length))
    inductor = inductor[:length - 2] + "_0"
    twin = inductor[:-1] + "1"
    names = Names.demangled([fits, inductor, twin])
    assert names.short(fits) == fits
    assert names.short(inductor).startswith("triton_poi_fused_") and names.short(inductor).endswith("_0")
    assert names.short(twin).endswith("_1") and len(names.short(twin)) <= 80
    assert names.full(inductor) == inductor


def test_lambdas_short_without_their_parameter_types_unless_they_tell_kernels_apart():
    names = Names.demangled(capture_names("gpt2_shadow"))
    shorts = {names.short(raw) for raw in capture_names("gpt2_shadow")}
    assert "vectorized_elementwise_kernel<…, pow_tensor_scalar_kernel_impl::{lambda#1}, …>" in shorts
    assert "elementwise_kernel<…, gpu_kernel_impl_nocast<{lambda(float)#1}>::{lambda#1}>" in shorts
    assert "elementwise_kernel<…, gpu_kernel_impl_nocast<{lambda(long)#1}>::{lambda#1}>" in shorts


def test_python_frame_location_and_display():
    raw = "/home/me/project/model.py:42@forward"
    assert frame_location(raw) == ("forward", "/home/me/project/model.py", 42)
    assert display_name(raw) == "forward  model.py:42"
    assert display_name(r"C:\work\train.py:7@<module>") == "<module>  train.py:7"
    assert frame_location("a.py:1@b:2@c") == ("c", "a.py:1@b", 2)  # the last `:line@` splits


@pytest.mark.parametrize("raw", ["add_kernel", "add_kernel<n=1024>", CUTLASS, "file.py:12@", "file.py:x@f", ":3@f",
                                 "model.py:42@forward\n"])
def test_other_names_are_not_frames(raw):
    assert frame_location(raw) is None
    assert display_name(raw) == raw


def test_display_name_uses_the_demangled_map():
    assert display_name(CUTLASS, {CUTLASS: CUTLASS_READABLE}) == CUTLASS_READABLE
    assert display_name(CUTLASS, {}) == CUTLASS
    assert display_name("add_kernel", {CUTLASS: CUTLASS_READABLE}) == "add_kernel"


@pytest.mark.parametrize("width", [20, 30, 45, 60])
def test_a_cut_name_keeps_its_base_name_and_its_end(width):
    from rich.cells import cell_len

    from proton_tui.view.names.cut import cut_name

    name = "vectorized_elementwise_kernel<…, pow_tensor_scalar_kernel_impl::{lambda#1}, …>"
    cut = cut_name(name, width)
    assert cell_len(cut) == width
    assert cut.endswith(name[-4:]) and cut.startswith(name[:8])
    if width >= len("vectorized_elementwise_kernel<") + 1 + 12 + 1:  # room for the arguments' two ends
        assert cut.startswith("vectorized_elementwise_kernel<…, pow") and cut.endswith("#1}, …>")
    assert cut_name(name, len(name)) == name and cut_name("<module>  train.py:7", 12).endswith("y:7")


GEMMS = [f"sm80_xmma_gemm_f32f32_f32f32_f32_{layout}_n_tilesize{tile}_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_"
         "kernel__5x_cublas" for layout, tile in (("tn", "128x128x8"), ("nn", "64x128x8"), ("nt", "64x64x8"))]


TILES = [f"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize{a}x{b}x8_stage{stage}_warpsize2x2x1_ffma_aligna4_alignc4_"
         "execute_kernel__5x_cublas" for a in (64, 128, 256) for b in (64, 128) for stage in (3, 4)]


@pytest.mark.parametrize("width", [16, 20, 30, 45])
def test_names_that_would_cut_alike_each_show_where_they_differ(width):
    """cuBLAS kernels that differ only in their middle cut alike (their start and end kept). Told apart, each shows
    the whole part where they differ (the layout; the tile size and the stage, two places at once) once the width
    holds it, after `…` or a start they share. A name that fits, or already cuts apart from the others, keeps its
    own cut."""
    from rich.cells import cell_len

    from proton_tui.view.names.cut import cut_name, told_apart

    for names, differ in ((GEMMS, ("tn_n", "nn_n", "nt_n")), (TILES, [name[46:63] for name in TILES])):
        assert len({cut_name(name, width) for name in names}) == 1  # what a cut alone shows: one name, again
        apart = told_apart([*names, "add_kernel", "reduce_kernel<128, 4, at::native::ReduceOp<float>>"], width)
        shown = [apart[name] for name in names]
        assert all(cell_len(cut) <= width for cut in shown)
        if width >= 20:
            assert len(set(shown)) == len(names)
            for name, cut, part in zip(names, shown, differ):
                lead, _, rest = cut.partition("…")
                assert name.startswith(lead) and part.split("_stage")[0][:8] in rest, (cut, part)
                if "_stage" in part:  # the tile size and the stage, both
                    assert "stage" + part.split("_stage")[1][0] in rest, (cut, part)
        assert "add_kernel" not in apart
        reduce = "reduce_kernel<128, 4, at::native::ReduceOp<float>>"
        if cell_len(reduce) > width:
            assert apart[reduce] == cut_name(reduce, width)


def test_telling_names_apart_stays_fast_and_exact_on_adversarial_names():
    """1,100 names of 2,220 characters, each a run of `x` with one `y` further in than the last (each name's nearest
    differs from it deeper than any other): told apart in well under a second, no recursion; names that differ just
    after their start are cut at their end with no `…` between start and stretch; wide characters are counted in
    cells."""
    import time

    from rich.cells import cell_len

    from proton_tui.view.names.cut import cut_name, told_apart

    names = ["x" * (2 * i) + "y" + "x" * (2220 - 2 * i - 1) for i in range(1, 1101)]
    started = time.monotonic()
    apart = told_apart(names, 10)
    assert time.monotonic() - started < 5 and set(apart) == set(names)
    assert all(cell_len(cut) <= 10 for cut in apart.values())
    early = ["ab<0123456" + letter + "m" * 20 + ">::operator()_" + "t" * 10 for letter in "AB"]
    assert [told_apart(early, 40)[name] for name in early] == [name[:39] + "…" for name in early]
    assert len({cut_name(name, 40) for name in early}) == 1
    wide = [f"日本語日本語日本語{letter}日本語日本語日本語" for letter in "AB"]
    shown = told_apart(wide, 12)
    assert len(set(shown.values())) == 2 and all(cell_len(cut) <= 12 for cut in shown.values())


def test_cuts_told_apart_are_the_same_in_every_process_and_never_only_an_ellipsis():
    """The cuts of names do not depend on the process (Python's string hashing changes with each): names that
    differ by one character at six places, too many for 20 cells, are cut alike by processes of five different
    PYTHONHASHSEED. Names each the start of the next keep their ordinary cut rather than a bare `…`; a `…` of a
    short name's own beside a cut's is written once."""
    import subprocess
    import sys

    from proton_tui.view.names.cut import cut_name, told_apart

    script = ("from proton_tui.view.names.cut import told_apart; base = 'abcdefghij' * 8; "
              "names = [base[:at] + letter + base[at + 1:] for at in (10, 30, 50, 70, 71, 72) for letter in 'XYZ']; "
              "print(repr(sorted(told_apart(names, 20).items())))")
    runs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in "12345"}
    assert len(runs) == 1 and len(next(iter(runs))) > 500
    prefixes = ["prefix_kernel_" + "x" * count for count in range(40, 60)]
    assert all(cut.strip("…") for cut in told_apart(prefixes, 29).values())
    assert "……" not in cut_name("sm80_xmma_gemm_f32f32…_kernel__5x_cublas_and_something_longer", 20)
