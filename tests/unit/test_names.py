"""Readable kernel names: the real c++filt on gpt2_shadow's mangled names, its absence and failure, Python frames."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from proton_tui.hatchet import load_profile
from proton_tui.view import names
from proton_tui.view.names import demangle_all, demangler_available, display_name, frame_location
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
    """Each test starts with nothing demangled, so a cached answer cannot hide a missing or failing c++filt."""
    monkeypatch.setattr(names, "_cache", {})


def fake_path(tmp_path, monkeypatch, script: str | None = None):
    """PATH holding only tmp_path, with `script` as its c++filt when given (a real executable, not a mock)."""
    if script is not None:
        tool = tmp_path / "c++filt"
        tool.write_text("#!/bin/sh\n" + script)
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(tmp_path))


@needs_cxxfilt
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
def test_one_c_plus_plus_filt_run_for_all_names_then_the_cache(tmp_path, monkeypatch):
    log = tmp_path / "runs.log"
    fake_path(tmp_path, monkeypatch, f'echo run >> "{log}"\nexec "{CXXFILT}" "$@"\n')
    kernel_names = [kernel.name for kernel in load_profile(capture_path("gpt2_shadow")).kernel_stats()]
    assert demangle_all(kernel_names)[CUTLASS] == CUTLASS_READABLE
    assert demangle_all(kernel_names)[CUTLASS] == CUTLASS_READABLE
    assert log.read_text() == "run\n"


def test_missing_cxxfilt_keeps_raw_names(tmp_path, monkeypatch):
    fake_path(tmp_path, monkeypatch)
    assert not demangler_available()
    assert demangle_all([CUTLASS, "add_kernel"]) == {CUTLASS: CUTLASS, "add_kernel": "add_kernel"}


@pytest.mark.parametrize(
    "script",
    ["echo broken >&2\nexit 1\n", "while read -r line; do :; done\necho only-one-line\n"],
    ids=["exit status 1", "wrong line count"],
)
def test_failing_cxxfilt_keeps_raw_names_and_is_retried(script, tmp_path, monkeypatch):
    fake_path(tmp_path, monkeypatch, script)
    assert demangler_available()
    both = [CUTLASS, "_Z3foov"]
    assert demangle_all(both) == {name: name for name in both}
    if CXXFILT is not None:  # a failure is not remembered: the real c++filt answers next time
        monkeypatch.setenv("PATH", str(os.path.dirname(CXXFILT)))
        assert demangle_all(both) == {CUTLASS: CUTLASS_READABLE, "_Z3foov": "foo()"}


@needs_cxxfilt
def test_name_with_a_line_break_is_not_sent_and_shifts_nothing():
    odd = "_Z3foov\n_Z3barv"
    readable = demangle_all([odd, "_Z3bazv", CUTLASS])
    assert readable == {odd: odd, "_Z3bazv": "baz()", CUTLASS: CUTLASS_READABLE}


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
