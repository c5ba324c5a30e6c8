"""RunParams: every option validated, every error naming its flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proton_tui.engine.params import ParamError, RunParams, parse_device, parse_size, parse_timeout


@pytest.mark.parametrize("text, value", [
    ("1048576", 1048576), ("1_048_576", 1048576), ("1M", 2**20), ("1m", 2**20), ("4K", 4096), ("1G", 2**30),
    ("2^20", 2**20), ("2**20", 2**20), ("1<<20", 2**20), (" 1 << 20 ", 2**20), ("3", 3), (2048, 2048),
])
def test_size_forms(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1.5M", "-5", "0", "2^", "1<<", "1T", "²", "2^40", "1e6"])
def test_bad_sizes_name_the_flag(text):
    with pytest.raises(ParamError) as caught:
        parse_size(text)
    assert caught.value.flag == "--size" and str(caught.value).startswith("--size: ")


def test_defaults_are_the_documented_ones():
    params = RunParams()
    assert (params.size, params.iters, params.block_size) == (2**20, 20, 1024)
    assert (params.backend, params.context, params.mode, params.hook) == ("auto", "shadow", "cli", True)
    assert params.output == Path("proton-runs") and params.profile and params.device == "auto"


def test_strings_from_a_form_are_converted():
    params = RunParams(size="2^11", iters="2", block_size="256", device="1", timeout="30", output="out")
    assert (params.size, params.iters, params.block_size, params.device, params.timeout) == (2048, 2, 256, 1, 30.0)
    assert params.output == Path("out")


@pytest.mark.parametrize("field, value, flag", [
    ("block_size", 1000, "--block-size"), ("block_size", 0, "--block-size"), ("iters", 0, "--iters"),
    ("iters", "x", "--iters"), ("backend", "rocprof", "--backend"), ("context", "deep", "--context"),
    ("mode", "api", "--mode"), ("device", "gpu0", "--device"), ("device", "-1", "--device"),
    ("timeout", "-3", "--timeout"), ("timeout", "soon", "--timeout"), ("name", "a/b", "--name"),
    ("name", "", "--name"), ("name", "../up", "--name"), ("python", " ", "--python"),
    ("payload", "/no/such/payload.py", "--payload"),
])
def test_bad_values_are_refused_naming_the_flag(field, value, flag):
    with pytest.raises(ParamError) as caught:
        RunParams(**{field: value})
    assert caught.value.flag == flag


def test_block_size_error_says_why():
    with pytest.raises(ParamError, match="not a power of two"):
        RunParams(block_size=768)


def test_name_loses_a_hatchet_suffix_proton_would_double():
    assert RunParams(name="mine.hatchet").name == "mine"


def test_device_and_timeout_forms():
    assert parse_device("CPU") == "cpu" and parse_device(" auto ") == "auto" and parse_device(3) == 3
    assert parse_timeout(None) is None and parse_timeout("0") is None and parse_timeout("1.5") == 1.5


@pytest.mark.longest
def test_probe_answer_is_kept_on_disk_until_what_it_depends_on_changes(monkeypatch, tmp_path):
    """A second probe of the same interpreter reads the disk cache without starting it; a package installed on
    its sys.path probes again; a changed GPU pin is another entry."""
    import sys

    from proton_tui.engine import probe

    extra = tmp_path / "site"
    extra.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", str(extra))
    monkeypatch.setattr(probe, "_cache", {})
    first = probe.probe_interpreter(sys.executable)
    stored = list((tmp_path / "cache" / "proton-tui" / "probe").glob("*.json"))
    assert len(stored) == 1
    assert str(extra) in stored[0].read_text()  # the folder on its sys.path is stamped
    entry = json.loads(stored[0].read_text())
    entry["info"]["python_version"] = "9.9.9"  # mark the entry
    stored[0].write_text(json.dumps(entry))
    monkeypatch.setattr(probe, "_cache", {})
    monkeypatch.setattr(probe.subprocess, "run", None)  # answered from disk: no interpreter is started
    assert probe.probe_interpreter(sys.executable).python_version == "9.9.9"
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", str(extra))
    (extra / "newly_installed.py").write_text("")  # the folder's modification time changes
    monkeypatch.setattr(probe, "_cache", {})
    assert probe.probe_interpreter(sys.executable).python_version == first.python_version  # probed again
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    monkeypatch.setattr(probe, "_cache", {})
    probe.probe_interpreter(sys.executable)
    assert len(list((tmp_path / "cache" / "proton-tui" / "probe").glob("*.json"))) == 2


def test_an_interpreter_wrapper_that_prints_around_python_is_understood(monkeypatch, tmp_path):
    """A site wrapper that prints a banner before Python and a status after it: the probe and the doctor's library
    check still read the interpreter's answer."""
    import os
    import sys

    from proton_tui.engine import probe
    from proton_tui.engine.doctor import probe_libraries

    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "welcome to the cluster"\n{sys.executable} "$@"\nrc=$?\necho 0\nexit $rc\n')
    os.chmod(wrapper, 0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(probe, "_cache", {})
    assert probe.probe_interpreter(str(wrapper)).python_version == sys.version.split()[0]
    libraries = probe_libraries(str(wrapper))
    assert "error" not in libraries and isinstance(libraries["libraries"], list)


def test_leading_zeros_do_not_count_and_a_huge_number_is_one_line():
    from proton_tui.engine.params import ParamError, parse_device, parse_size, parse_warps, whole_number

    assert parse_device("0" * 30 + "1") == 1 and parse_warps("0" * 30 + "2") == (2,)
    assert parse_size("0" * 30 + "1048576") == 1048576
    with pytest.raises(ParamError, match="out of range"):
        parse_size("1_000_000_000_000_000_000_000")
    assert whole_number("9" * 5000) is None and whole_number(" 7 ") == 7
    with pytest.raises(ParamError, match="is not a size"):
        parse_size("9" * 5000)


def test_every_run_parameter_has_one_table_entry_with_its_default():
    """RunParams' fields are the table's, with the table's defaults; each entry's default passes its own check."""
    from dataclasses import fields

    from proton_tui.engine.params import PARAMS

    assert set(PARAMS) == {f.name for f in fields(RunParams)} - {"command", "cwd"}  # a user's command is no option
    params = RunParams()
    for name, param in PARAMS.items():
        if name != "python":  # the interpreter running proton-tui
            assert getattr(params, name) == param.check(param.default), name
        assert not param.choices or param.default in param.choices, name
        assert set(param.offered or ()) <= set(param.choices), name


@pytest.mark.parametrize("device, vendor, profile, given, sized", [
    ("cpu", "NVIDIA", False, set(), (4096, 2)),  # device cpu: the interpreter, GPU or not
    ("auto", "", False, set(), (4096, 2)),  # no GPU: the interpreter
    ("auto", "", False, {"size"}, (2**16, 2)),  # a size given keeps it; the launches are still the interpreter's
    ("auto", "", False, {"iters"}, (4096, 7)),
    ("auto", "", False, {"size", "iters"}, (2**16, 7)),
    ("auto", "NVIDIA", False, set(), (2**16, 7)),  # a GPU: as asked
    ("cpu", "", True, set(), (2**16, 7)),  # profiled (which the rules refuse): as asked
])
def test_a_run_through_the_interpreter_takes_its_size_for_each_of_size_and_iters_not_given(device, vendor, profile,
                                                                                           given, sized):
    from proton_tui.engine.params import interpreter_sized

    params = RunParams(size=2**16, iters=7, device=device, profile=profile)
    result = interpreter_sized(params, vendor, given)
    assert (result.size, result.iters) == sized and result.device == params.device


def test_the_form_names_an_option_by_its_label():
    from proton_tui.engine.params import label_of

    assert (label_of("--size"), label_of("--block-size"), label_of("--python")) == ("Size", "Block size",
                                                                                      "Interpreter")
    assert label_of("--name") == "--name"  # not on the form


@pytest.mark.parametrize("text", ["2^100", "2**999", "3 << 200"])
def test_a_power_past_every_limit_is_out_of_range_as_written(text):
    """A power too large to be worked out is said to be out of range, as it was written: it is a size, too large."""
    from proton_tui.engine.params import parse_count

    with pytest.raises(ParamError) as caught:
        parse_size(text)
    assert str(caught.value) == f"--size: {text!r} is out of range 1..2147483647"
    with pytest.raises(ParamError) as caught:
        parse_count("--iters", text)
    assert str(caught.value) == f"--iters: {text!r} is more than 2147483647 (a 32-bit integer)"
