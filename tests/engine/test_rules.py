"""The backend rules per Triton version and GPU vendor: what is refused, warned of, and how each is worded."""

from __future__ import annotations

import pytest

from proton_tui.engine.params import RunParams
from proton_tui.engine.probe import InterpreterInfo, version_tuple
from proton_tui.engine.rules import check_rules, resolve_backend
from tests.engine.interpreters import PY, interpreter, refusals


@pytest.mark.parametrize("version, vendor, resolved", [
    ("3.6.0", "nvidia", "cupti"), ("3.7.1", "nvidia", "cupti"), ("3.8.0", "nvidia", "cupti"),
    ("3.6.0", "amd", "roctracer"), ("3.7.1", "amd", "roctracer"), ("3.8.0", "amd", "rocprofiler"),
    ("3.9.0+git1a2b3c", "amd", "rocprofiler"), ("3.8.0", None, None),
])
def test_auto_resolves_like_proton(version, vendor, resolved):
    assert resolve_backend("auto", interpreter(version, vendor)) == resolved
    assert resolve_backend("instrumentation", interpreter(version, vendor)) == "instrumentation"


@pytest.mark.parametrize("environ", [
    {"ROCPROFILER_OUTPUT_PATH": "/tmp/out"}, {"ROCPROF_KERNEL_TRACE": "1"},
    {"LD_PRELOAD": "/opt/rocm/lib/librocprofiler-sdk-tool.so"},
])
def test_proton_under_rocprofv3_is_refused(environ):
    info = interpreter("3.8.0", "amd")
    assert any("rocprofv3" in m for m in refusals(RunParams(python=PY), info, environ))
    assert refusals(RunParams(python=PY, backend="instrumentation"), info, environ) == []
    assert refusals(RunParams(python=PY, profile=False), info, environ) == []


def test_instrumentation_runs_the_scoped_kernel_and_warns_only_for_another_payload(tmp_path):
    """The bundled payload runs its scoped kernel under the instrumentation backend (nothing to warn of); another
    payload may have no scopes, which gives an empty tree, or an empty file in trace mode."""
    assert check_rules(RunParams(python=PY, backend="instrumentation"), interpreter(), {}) == []
    own = tmp_path / "own.py"
    own.write_text("print('vecadd: PASS')\n")
    for data, empty in (("tree", "an empty tree (ROOT only)"), ("trace", "an empty (0-byte) .chrome_trace")):
        findings = check_rules(RunParams(python=PY, backend="instrumentation", data=data, payload=own),
                               interpreter(), {})
        assert [f.level for f in findings] == ["warn"] and empty in findings[0].message


def test_interpreter_problems_are_refused():
    broken = InterpreterInfo(python=PY, triton_error="ModuleNotFoundError: No module named 'triton'",
                             torch_error="ModuleNotFoundError: No module named 'torch'")
    (message,) = [m for m in refusals(RunParams(python=PY), broken) if "import" in m]  # one names both, with the command that fixes it
    assert message.startswith(f"triton and torch do not import in {PY} (triton: ModuleNotFoundError: No module "
                              "named 'triton'; torch: ModuleNotFoundError: No module named 'torch')")
    assert f"`{PY} -m pip install torch triton numpy` installs what the payload needs" in message
    assert "--python" in message
    # a command of the user's needs Triton only where Proton profiles it
    (message,) = [m for m in refusals(RunParams(python=PY, command=("python", "train.py")), broken) if "import" in m]
    assert message.startswith(f"triton does not import in {PY} (triton: ")
    assert not [m for m in refusals(RunParams(python=PY, command=("python", "train.py"), profile=False), broken)
                if "import" in m]
    no_proton = InterpreterInfo(python=PY, triton_version="3.6.0", torch_version="2.11.0", gpu_vendor="nvidia",
                                gpu_names=("H200",))
    assert any("without Proton" in m for m in refusals(RunParams(python=PY), no_proton))
    assert refusals(RunParams(python=PY, profile=False), no_proton) == []


def test_device_index_beyond_the_visible_gpus_is_refused():
    assert any("--device 2" in m and "sees 2 GPUs" in m
               for m in refusals(RunParams(python=PY, device=2), interpreter(gpus=2)))
    assert any("sees no GPU" in m for m in refusals(RunParams(python=PY, device=0), interpreter(vendor=None)))


def test_old_cli_hook_and_backend_limits():
    assert any("cannot enable the triton hook" in m for m in refusals(RunParams(python=PY), interpreter("3.5.1")))
    assert refusals(RunParams(python=PY, mode="env"), interpreter("3.5.1")) == []
    assert any("needs Triton >= 3.5.0" in m
               for m in refusals(RunParams(python=PY, backend="instrumentation"), interpreter("3.4.0")))


def test_profiling_without_a_gpu_is_refused_with_the_way_to_the_cpu_check():
    """The advice names the command line's options there, and the form's controls on the form."""
    (finding,) = check_rules(RunParams(python=PY), interpreter(vendor=None), {})
    assert finding.refuses and "sees no GPU" in finding.message
    assert "proton-tui check --cpu" in finding.message and "the CPU check (F2)" in finding.form_message
    (finding,) = check_rules(RunParams(python=PY, device="cpu"), interpreter(), {})
    assert finding.refuses and "--no-profile" in finding.message and "--device cpu" in finding.message
    assert finding.form_message.startswith("Device cpu runs the Triton interpreter")
    assert "'profile with Proton' switched off" in finding.form_message and "--" not in finding.form_message
    assert check_rules(RunParams(python=PY, profile=False), interpreter(vendor=None), {}) == []


@pytest.mark.parametrize("text, parsed", [
    ("3.6.0", (3, 6, 0)), ("3.6.0+git1a2b3c4", (3, 6, 0)), ("3.8.0.dev20260101", (3, 8, 0)), ("3.7", (3, 7, 0)),
    ("10.0.1", (10, 0, 1)), ("nightly", (0, 0, 0)),
])
def test_version_tuple(text, parsed):
    assert version_tuple(text) == parsed


def test_instrumentation_options_need_the_instrumentation_backend():
    for options in ({"warps": "0"}, {"buffer_size": "256"}, {"granularity": "cta"}):
        assert any("instrumentation options" in m and "--backend instrumentation" in m
                   for m in refusals(RunParams(python=PY, backend="cupti", **options), interpreter()))


def test_a_buffer_too_small_for_the_payloads_events_is_warned_of():
    """Each recorded warp writes 8 events of 8 bytes per launch of the scoped kernel (4 scopes): with 4 warps a
    64-byte buffer lost the first 6 events of every warp on the H200 (Triton 3.6.0 and 3.7.1), 256 bytes kept
    them all."""
    def warnings(**options):
        return [f.message for f in check_rules(RunParams(python=PY, backend="instrumentation", mode="env",
                                                         **options), interpreter(), {}) if not f.refuses]
    assert any("drops events" in m and "at least 256 bytes" in m for m in warnings(buffer_size="64"))
    assert warnings(buffer_size="256") == []
    assert any("at least 128 bytes" in m for m in warnings(buffer_size="64", warps="0,1"))
    assert warnings(buffer_size="64", warps="1") == []


def test_instrumentation_values_proton_s_compiler_rejects_are_refused():
    """On the H200 (Triton 3.6.0) a 2^31-byte buffer raised a TypeError in Proton's compiler pass, and 3 sampled
    warps with a buffer size given failed it ("PassManager::run failed")."""
    from proton_tui.engine.params import ParamError

    with pytest.raises(ParamError, match="--buffer-size: 2147483648 is more than 1073741824"):
        RunParams(python=PY, backend="instrumentation", mode="env", buffer_size="2G")
    assert RunParams(python=PY, backend="instrumentation", mode="env", buffer_size="1G").buffer_size == 2**30
    refused = refusals(RunParams(python=PY, backend="instrumentation", mode="env", warps="0,1,2",
                                 buffer_size="1024"), interpreter())
    assert any("records 3 warps" in message and "PassManager::run failed" in message for message in refused)
    assert refusals(RunParams(python=PY, backend="instrumentation", mode="env", warps="0,1,2"), interpreter()) == []


@pytest.mark.parametrize("version", ["3.6.0", "3.7.1", "3.9.0"])
def test_roctracer_in_cli_mode_is_worded_for_the_users_triton_and_refused_on_every_version(version):
    (message,) = [m for m in refusals(RunParams(python=PY, backend="roctracer"), interpreter(version, "amd"))
                  if "roctracer in cli mode" in m]
    assert f"Triton {version}'s Proton command line starts the HIP runtime only when -b is omitted" in message
    assert "refused on every Triton version" in message and "<=" not in message and "3.7" not in message.replace(
        version, "")
    (granularity,) = refusals(RunParams(python=PY, backend="instrumentation", mode="env", granularity="cta"),
                              interpreter(version))
    assert f"Triton {version}'s Proton compiles only granularity warp" in granularity
    assert "refused on every Triton version" in granularity
