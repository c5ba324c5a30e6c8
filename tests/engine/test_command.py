"""The command builder, for every backend x mode x Triton version x GPU vendor, and how a run pins its GPU.

The interpreter is described by an explicit InterpreterInfo: these are the pure builder and rules, checked
against the per-version facts (Triton 3.6.0, 3.7.1, 3.8.0), without a GPU.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from proton_tui.engine.command import build_command
from proton_tui.engine.params import RunParams
from proton_tui.engine.rules import check_rules
from tests.engine.interpreters import BACKENDS, PAYLOAD, PAYLOAD_ARGS, PY, RUN_DIR, VERSIONS, interpreter, refusals
from tests.helpers import FIXTURES, h200_probe


def expected_refusal(backend: str, mode: str, version: str, vendor: str) -> str | None:
    """The documented rules, written out per case: a phrase the refusal must contain, or None if allowed."""
    if backend == "rocprofiler" and version != "3.8.0":
        return "needs Triton >= 3.8.0"
    if backend == "roctracer" and mode == "cli":
        return "--mode env"
    if (backend == "cupti" and vendor == "amd") or (backend in ("roctracer", "rocprofiler") and vendor == "nvidia"):
        return f"is for {'NVIDIA' if backend == 'cupti' else 'AMD'} GPUs"
    return None


CASES = list(itertools.product(BACKENDS, ("cli", "env"), VERSIONS, ("nvidia", "amd")))


@pytest.mark.parametrize("backend, mode, version, vendor", CASES)
def test_rules_and_argv_for_every_combination(backend, mode, version, vendor):
    params = RunParams(backend=backend, mode=mode, python=PY)
    info = interpreter(version, vendor)
    refused = refusals(params, info)
    expected = expected_refusal(backend, mode, version, vendor)
    if expected:
        assert any(expected in message for message in refused), refused
        return
    assert refused == []
    command = build_command(params, info, PAYLOAD, RUN_DIR, environ={})
    session = str(RUN_DIR / "vecadd")
    backend_flag = [] if backend == "auto" else ["-b", backend]
    payload_args = [*PAYLOAD_ARGS, *(["--scoped"] if backend == "instrumentation" else [])]  # its scoped kernel
    if mode == "cli":
        assert list(command.argv) == [PY, "-m", "triton.profiler.proton", "-n", session, *backend_flag,
                                      "-k", "triton", str(PAYLOAD), *payload_args]
    else:
        env_backend = [] if backend == "auto" else ["--proton-backend", backend]
        assert list(command.argv) == [PY, str(PAYLOAD), *payload_args, "--proton-name", session,
                                      "--proton-context", "shadow", "--proton-hook", "triton", *env_backend]
    assert command.capture_path == RUN_DIR / "vecadd.hatchet"




def test_never_a_shell_nor_the_console_script():
    command = build_command(RunParams(python=PY), interpreter(), PAYLOAD, RUN_DIR, environ={})
    assert command.argv[:3] == (PY, "-m", "triton.profiler.proton")
    assert isinstance(command.argv, tuple) and "proton" not in Path(command.argv[0]).name
    assert command.display().startswith("env PYTHONUNBUFFERED=1 /opt/venv/bin/python -m triton.profiler.proton -n ")


def test_session_path_is_absolute_without_suffix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = build_command(RunParams(python=PY, name="mine.hatchet"), interpreter(), PAYLOAD,
                            Path("rel/run"), environ={})
    session = command.argv[command.argv.index("-n") + 1]
    assert session == str(tmp_path / "rel/run/mine")
    assert command.capture_path == tmp_path / "rel/run/mine.hatchet"


def test_options_context_hook_and_no_profile():
    info = interpreter()
    cli = build_command(RunParams(python=PY, context="python", hook=False), info, PAYLOAD, RUN_DIR, environ={})
    assert cli.argv[3:8] == ("-n", str(RUN_DIR / "vecadd"), "-c", "python", str(PAYLOAD))
    env = build_command(RunParams(python=PY, mode="env", context="python", hook=False), info, PAYLOAD, RUN_DIR,
                        environ={})
    assert env.argv[-4:] == ("--proton-context", "python", "--proton-hook", "none")
    bare = build_command(RunParams(python=PY, profile=False, inject_bug=True, device="cpu"), info, PAYLOAD,
                         RUN_DIR, environ={})
    assert bare.argv == (PY, str(PAYLOAD), "--size", "1048576", "--iters", "20", "--block-size", "1024",
                         "--device", "cpu", "--inject-bug")
    assert bare.capture_path is None and bare.env["TRITON_INTERPRET"] == "1"


def test_nvidia_pins_with_cuda_visible_devices():
    command = build_command(RunParams(python=PY, device=1), interpreter(gpus=2), PAYLOAD, RUN_DIR,
                            environ={"PATH": "/bin"})
    assert command.env["CUDA_VISIBLE_DEVICES"] == "1" and "ROCR_VISIBLE_DEVICES" not in command.env
    assert command.env["PATH"] == "/bin" and command.env["PYTHONUNBUFFERED"] == "1"
    assert "--device" in command.argv and command.argv[command.argv.index("--device") + 1] == "gpu"


def test_an_index_counts_among_already_visible_gpus():
    command = build_command(RunParams(python=PY, device=1), interpreter(gpus=2), PAYLOAD, RUN_DIR,
                            environ={"CUDA_VISIBLE_DEVICES": "2,3"})
    assert command.env["CUDA_VISIBLE_DEVICES"] == "3"


def test_amd_pins_with_rocr_and_drops_what_triton_rejects():
    environ = {"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "0", "HOME": "/root"}
    info = interpreter("3.8.0", "amd", gpus=4)
    command = build_command(RunParams(python=PY, device=2), info, PAYLOAD, RUN_DIR, environ=environ)
    assert command.env["ROCR_VISIBLE_DEVICES"] == "2"
    assert "HIP_VISIBLE_DEVICES" not in command.env and "CUDA_VISIBLE_DEVICES" not in command.env
    assert command.env_changes["HIP_VISIBLE_DEVICES"] is None and command.env["HOME"] == "/root"
    assert "-u HIP_VISIBLE_DEVICES" in command.display()
    warnings = [f.message for f in check_rules(RunParams(python=PY), info, environ) if not f.refuses]
    assert any(w.startswith("HIP_VISIBLE_DEVICES=0 is removed") for w in warnings)
















def test_a_gpu_chosen_by_index_is_named_with_how_the_capture_calls_it():
    """`run --device 1` pins the GPU with CUDA_VISIBLE_DEVICES, so the payload and Proton see it as device 0: the
    banner and the report say which GPU it was (from run.json's own fields)."""
    from msgspec.structs import replace

    from proton_tui.engine.session import device_text, pinned_text
    from proton_tui.records import RunRecord

    record = RunRecord(device="NVIDIA H200", device_requested=1, device_pinning={"CUDA_VISIBLE_DEVICES": "1"})
    assert device_text(record) == ("device NVIDIA H200 (GPU 1, pinned with CUDA_VISIBLE_DEVICES=1: the capture "
                                   "calls it device 0)")
    assert pinned_text(replace(record, device_requested="auto", device_pinning={})) is None
    assert device_text(replace(record, device_requested="auto", device_pinning={})) == "device NVIDIA H200"


def test_a_pinned_runs_capture_calls_its_gpu_as_the_user_chose_it(tmp_path):
    """The capture of `run --device 1` numbers its GPU 0; read back for that run, every view calls it CUDA:1 (the
    header, the kernels' devices, the peak from device_info) and says why."""
    import shutil

    from proton_tui.engine.session import capture_status
    from proton_tui.output.document import kernel_records
    from proton_tui.output.text import tree_text
    from proton_tui.records import RunRecord
    from proton_tui.view.display import Display

    capture = shutil.copy(FIXTURES / "vecadd_hook.hatchet", tmp_path / "vecadd.hatchet")
    record = RunRecord(device_requested=1, device_pinning={"CUDA_VISIBLE_DEVICES": "1"})
    _, alone = capture_status(Path(capture))
    status, profile = capture_status(Path(capture), record)
    assert not status.error and profile.device_names() == ["CUDA:1"]
    text = tree_text(Display(profile))
    assert "devices: CUDA:1" in text.splitlines()[0]
    assert ("device: CUDA:1 is the GPU chosen, pinned with CUDA_VISIBLE_DEVICES=1: the capture file calls it CUDA:0"
            in text.splitlines())
    kernel = kernel_records(Display(profile))[0]
    assert kernel["devices"] == ["CUDA:1"]
    assert kernel["peak_percent"] == kernel_records(Display(alone))[0]["peak_percent"] is not None
    assert alone.device_names() == ["CUDA:0"] and "CUDA:1" not in tree_text(Display(alone))


def test_the_probe_cache_tells_an_empty_gpu_list_from_none(monkeypatch, tmp_path):
    """CUDA_VISIBLE_DEVICES="" hides every GPU and unset shows them all: the two probes are kept apart, or a probe
    made with the GPUs hidden answers later for all of them ("sees no GPU" on a GPU box)."""
    import sys

    from proton_tui.engine.probe import cache_entry

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    unset = cache_entry(sys.executable)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    empty = cache_entry(sys.executable)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert len({unset, empty, cache_entry(sys.executable)}) == 3


def test_a_package_installed_since_the_probe_is_seen_by_the_next_one(monkeypatch, tmp_path):
    """torch installed into the interpreter after the app probed it (the form said it was missing): the next probe,
    the CPU check's, asks the interpreter again instead of answering from memory."""
    import os
    import sys

    from proton_tui.engine import probe

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(probe, "_cache", {})
    monkeypatch.setattr(probe, "_stamps", {}, raising=False)
    site = tmp_path / "site-packages"
    site.mkdir()
    asked = []

    def answer(python, timeout):
        asked.append(python)
        info = h200_probe(python=python, torch_version=None if len(asked) == 1 else "2.13.0+cpu")
        return info, {str(site): site.stat().st_mtime_ns}

    monkeypatch.setattr(probe, "_run_probe", answer)
    assert probe.probe_interpreter(sys.executable).torch_version is None
    assert probe.probe_interpreter(sys.executable).torch_version is None and len(asked) == 1  # answered from memory
    (site / "torch").mkdir()  # pip installs torch: the folder's modification time moves
    os.utime(site, ns=(site.stat().st_atime_ns, site.stat().st_mtime_ns + 1_000_000))
    assert probe.probe_interpreter(sys.executable).torch_version == "2.13.0+cpu" and len(asked) == 2
    assert probe.probe_interpreter(sys.executable).torch_version == "2.13.0+cpu" and len(asked) == 2


@pytest.mark.parametrize("data, fmt, mode, version, refused", [
    ("tree", "hatchet", "cli", "3.6.0", None),
    ("trace", "hatchet", "cli", "3.6.0", None),
    ("trace", "hatchet", "env", "3.6.0", None),
    ("trace", "hatchet", "cli", "3.4.0", "data trace needs Triton >= 3.5.0"),
    ("tree", "hatchet_msgpack", "env", "3.6.0", "format hatchet_msgpack needs Triton >= 3.7.0"),
    ("tree", "hatchet_msgpack", "env", "3.7.1", None),
    ("tree", "hatchet_msgpack", "cli", "3.7.1", "writes a tree as .hatchet only"),
    ("trace", "hatchet_msgpack", "env", "3.9.0", "a trace is written as a .chrome_trace"),
])
def test_data_and_format_rules_argv_and_capture_path(data, fmt, mode, version, refused):
    """Proton's data (tree, trace) and a tree's format (hatchet, hatchet_msgpack), each where the workload's Triton
    writes it: the flags, the payload's options and the file the run then reads."""
    params = RunParams(data=data, output_format=fmt, mode=mode, python=PY)
    found = refusals(params, interpreter(version))
    if refused:
        assert any(refused in message for message in found), found
        return
    assert found == []
    command = build_command(params, interpreter(version), PAYLOAD, RUN_DIR)
    argv = list(command.argv)
    suffix = ".chrome_trace" if data == "trace" else "." + fmt
    assert command.capture_path == RUN_DIR / f"vecadd{suffix}"
    if mode == "cli":
        assert (argv[argv.index("-k") + 2:argv.index(str(PAYLOAD))] == ["-d", "trace"]) == (data == "trace")
    else:
        assert ("--proton-data" in argv) == (data == "trace") and ("--proton-format" in argv) == (fmt != "hatchet")
        if fmt != "hatchet":
            assert argv[argv.index("--proton-format") + 1] == fmt


SAMPLED = "default:sampling_strategy=selective:sampling_options=0,2"


@pytest.mark.parametrize("options, mode, version, mode_string, refused", [
    ({}, "env", "3.6.0", None, None),
    ({"warps": "0,2"}, "env", "3.6.0", SAMPLED, None),
    ({"warps": "2, 0,2"}, "env", "3.7.1", SAMPLED, None),
    ({"buffer_size": "4096"}, "env", "3.6.0", "default:buffer_size=4096", None),
    ({"warps": "3", "buffer_size": "1K"}, "env", "3.7.1",
     "default:sampling_strategy=selective:sampling_options=3:buffer_size=1024", None),
    ({"warps": "0,2"}, "cli", "3.8.0", SAMPLED, None),
    ({"warps": "0,2"}, "cli", "3.7.1", None, "Proton's command line in Triton 3.7.1 ignores -m"),
    ({"buffer_size": "4096"}, "cli", "3.6.0", None, "need --mode env"),
    ({"warps": "4"}, "env", "3.6.0", None, "warp 4: the payload's kernel runs 4 warps per CTA (0-3)"),
    ({"granularity": "cta"}, "env", "3.7.1", None, "granularity cta: Triton 3.7.1's Proton compiles only granularity warp"),
    ({"granularity": "warp_group"}, "env", "3.6.0", None, "granularity must be warp for now"),
])
def test_instrumentation_options_rules_and_mode_string(options, mode, version, mode_string, refused):
    """Warp sampling, the profile buffer's size and the granularity, as the workload's Proton takes them: a mode
    string the payload passes to proton.start (env mode), or -m where Proton's command line passes it on (>= 3.8);
    what the measured Tritons refuse is refused before anything runs."""
    params = RunParams(backend="instrumentation", mode=mode, python=PY, **options)
    found = refusals(params, interpreter(version))
    if refused:
        assert any(refused in message for message in found), found
        return
    assert found == []
    argv = list(build_command(params, interpreter(version), PAYLOAD, RUN_DIR).argv)
    flag = "-m" if mode == "cli" else "--proton-mode"
    given = [index for index, word in enumerate(argv) if word == flag and argv[index + 1] != "triton.profiler.proton"]
    if mode_string is None:
        assert given == []
    else:
        assert [argv[index + 1] for index in given] == [mode_string]
        assert given[0] < argv.index(str(PAYLOAD)) or mode == "env"


@pytest.mark.parametrize("field, value, message", [
    ("warps", "0,x", "--warps: '0,x' is not a list of warp indices"),
    ("warps", "-1", "--warps: '-1' is not a list of warp indices"),
    ("warps", "²", "--warps: '²' is not a list of warp indices"),  # a digit to str.isdigit, not to int()
    ("buffer_size", "1000", "--buffer-size: 1000 is not a power of two"),
    ("buffer_size", "big", "--buffer-size: 'big' is not"),
    ("granularity", "block", "--granularity: 'block' is not one of"),
])
def test_bad_instrumentation_options_name_the_flag(field, value, message):
    from proton_tui.engine.params import ParamError

    with pytest.raises(ParamError) as raised:
        RunParams(python=PY, backend="instrumentation", **{field: value})
    assert message in str(raised.value)






