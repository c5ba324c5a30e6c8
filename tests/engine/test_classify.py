"""The output classifier and the verdict: stream plus capture, never the exit code alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from proton_tui.engine.classify import CaptureStatus, Outcome, OutputClassifier, decide_verdict
from proton_tui.engine.runner import ProcessResult
from proton_tui.engine.session import capture_status
from tests.helpers import capture_path

CAPTURE = Path("/runs/x/vecadd.hatchet")
PASS_STREAM = [
    "vecadd: device=NVIDIA H200",
    "vecadd: size=1048576 iters=20 block_size=1024",
    "vecadd: first_launch_ms=812.250 (includes compile)",
    "vecadd: loop_ms=0.512 per_iter_us=25.600 gbps=491.52",
    "vecadd: max_abs_err=0.000e+00",
    "vecadd: PASS",
]
FAIL_STREAM = PASS_STREAM[:4] + ["vecadd: max_abs_err=1.145e+00", "vecadd: FAIL"]
# Triton 3.6's Proton CLI on a machine without a GPU (recorded here on CPU).
NO_DRIVER_STREAM = [
    "Traceback (most recent call last):",
    '  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "/venv/lib/python3.11/site-packages/triton/runtime/driver.py", line 9, in _create_driver',
    '    raise RuntimeError(f"{len(active_drivers)} active drivers ({active_drivers}). There should only be one.")',
    "RuntimeError: 0 active drivers ([]). There should only be one.",
]
# `-b roctracer` on an NVIDIA machine.
MISSING_LIB_STREAM = [
    "Traceback (most recent call last):",
    '  File "/venv/lib/python3.11/site-packages/triton/profiler/profile.py", line 110, in start',
    "    session = libproton.start(name, context, data, backend, mode_str)",
    "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "RuntimeError: Could not load `libroctracer64.so`",
]
ARGPARSE_STREAM = [
    "usage: ",
    "    proton [options] script.py [script_args] [script_options]",
    "proton.py: error: argument -b/--backend: invalid choice: 'rocprofiler' (choose from 'cupti', 'roctracer', "
    "'instrumentation')",
]


def classified(lines: list[str]) -> OutputClassifier:
    classifier = OutputClassifier()
    half = len(lines) // 2
    classifier.feed(lines[:half])  # lines come in batches
    classifier.feed(lines[half:])
    return classifier


def exited(code: int | None = 0, ended_by: str | None = None) -> ProcessResult:
    return ProcessResult(code, ended_by, 3.25)


def test_signals_of_a_passing_run():
    signals = classified(PASS_STREAM).signals
    assert signals.device == "NVIDIA H200" and signals.result == "PASS" and signals.max_abs_err == 0.0
    assert (signals.first_launch_ms, signals.loop_ms, signals.per_iter_us, signals.gbps) == (812.25, 0.512,
                                                                                           25.6, 491.52)
    assert classified(PASS_STREAM).error is None


def test_pass_needs_a_capture_with_kernels():
    verdict = decide_verdict(classified(PASS_STREAM), exited(), CaptureStatus(CAPTURE))
    assert verdict.outcome is Outcome.PASS and verdict.exit_code == 0 and str(CAPTURE) in verdict.message


@pytest.mark.parametrize("capture, outcome, phrase", [
    (CaptureStatus(CAPTURE, missing=True), Outcome.NO_CAPTURE, "Proton left no /runs/x/vecadd.hatchet"),
    (CaptureStatus(CAPTURE, empty=True), Outcome.EMPTY_CAPTURE, "Proton recorded no kernels"),
    (CaptureStatus(CAPTURE, error="/runs/x/vecadd.hatchet: truncated"), Outcome.BAD_CAPTURE, "truncated"),
])
def test_a_pass_without_a_usable_capture_is_not_a_pass(capture, outcome, phrase):
    verdict = decide_verdict(classified(PASS_STREAM), exited(), capture)
    assert verdict.outcome is outcome and phrase in verdict.message and verdict.exit_code == 1


def test_fail_is_fail_even_with_exit_code_zero_and_a_capture():
    verdict = decide_verdict(classified(FAIL_STREAM), exited(0), CaptureStatus(CAPTURE))
    assert verdict.outcome is Outcome.FAIL and "max_abs_err=1.145e+00" in verdict.message
    assert verdict.exit_code == 1


def test_empty_capture_hint_follows_the_backend():
    empty = CaptureStatus(CAPTURE, empty=True)
    instr = decide_verdict(classified(PASS_STREAM), exited(), empty, backend="instrumentation")
    assert any("plain kernel" in hint for hint in instr.hints)
    roctracer = decide_verdict(classified(PASS_STREAM), exited(), empty, backend="roctracer")
    assert any("--mode env" in hint for hint in roctracer.hints)


def test_no_gpu_under_proton_is_no_capture_with_the_error():
    classifier = classified(NO_DRIVER_STREAM)
    assert classifier.signals.exception == "RuntimeError: 0 active drivers ([]). There should only be one."
    verdict = decide_verdict(classifier, exited(1), CaptureStatus(CAPTURE, missing=True))
    assert verdict.outcome is Outcome.NO_CAPTURE
    assert verdict.message.startswith("no capture written: Proton failed before the payload started: RuntimeError")
    assert any("--no-profile" in hint for hint in verdict.hints)


def test_missing_library_names_it_and_the_remedy():
    classifier = classified(MISSING_LIB_STREAM)
    assert classifier.signals.missing_library == "libroctracer64.so"
    verdict = decide_verdict(classifier, exited(1), CaptureStatus(CAPTURE, missing=True))
    assert "Proton could not load `libroctracer64.so`" in verdict.message
    assert any("LD_LIBRARY_PATH" in hint and "symlinks" in hint for hint in verdict.hints)


def test_argparse_errors_are_caught():
    classifier = classified(ARGPARSE_STREAM)
    assert classifier.signals.usage_error.startswith("proton.py: argument -b/--backend: invalid choice")
    payload = classified(["usage: vecadd [-h]", "vecadd: error: argument --block-size: 1000 is not a power of two"])
    verdict = decide_verdict(payload, exited(2), None)
    assert verdict.outcome is Outcome.PAYLOAD_ERROR and "vecadd: argument --block-size" in verdict.message


def test_script_error_from_proton_cli():
    stream = PASS_STREAM[:2] + ["An error occurred while executing the script: CUDA out of memory"]
    verdict = decide_verdict(classified(stream), exited(1), CaptureStatus(CAPTURE, missing=True))
    assert verdict.outcome is Outcome.PAYLOAD_ERROR and verdict.message == "payload error: CUDA out of memory"


def test_a_traceback_after_pass_is_still_an_error():
    stream = PASS_STREAM[:2] + ["Traceback (most recent call last):", '  File "x.py", line 1', "ValueError: bad"]
    verdict = decide_verdict(classified(stream), exited(1), None)
    assert verdict.outcome is Outcome.PAYLOAD_ERROR and verdict.message == "payload error: ValueError: bad"


@pytest.mark.parametrize("code, phrase", [
    (-11, "killed by signal 11 after: vecadd: size=1048576"), (3, "exited with code 3"),
    (0, "ended without printing PASS or FAIL"),
])
def test_no_verdict_line_is_a_payload_error(code, phrase):
    verdict = decide_verdict(classified(PASS_STREAM[:2]), exited(code), None)
    assert verdict.outcome is Outcome.PAYLOAD_ERROR and phrase in verdict.message


def test_pass_then_nonzero_exit_is_an_error():
    verdict = decide_verdict(classified(PASS_STREAM), exited(1), None)
    assert verdict.outcome is Outcome.PAYLOAD_ERROR


def test_unprofiled_pass():
    verdict = decide_verdict(classified(PASS_STREAM), exited(), None)
    assert verdict.outcome is Outcome.PASS and "not profiled" in verdict.message


def test_cancel_and_timeout_win():
    for ended_by, outcome in (("cancelled", Outcome.CANCELLED), ("timeout", Outcome.TIMED_OUT)):
        verdict = decide_verdict(classified(PASS_STREAM[:2]), exited(-15, ended_by), CaptureStatus(CAPTURE))
        assert verdict.outcome is outcome and "3.2 s" in verdict.message and verdict.exit_code == 1


def test_outcomes_are_distinct_labels():
    assert len({outcome.value for outcome in Outcome}) == len(Outcome) == 10


def test_capture_status_of_real_captures(tmp_path):
    status, profile = capture_status(capture_path("vecadd_hook"))
    assert not (status.missing or status.empty or status.error)
    assert profile.kernel_stats()[0].name == "add_kernel<n=268435456>"
    status, profile = capture_status(capture_path("vecadd_instr"))  # ROOT only: the silent empty capture
    assert status.empty and profile.is_empty
    status, profile = capture_status(tmp_path / "none.hatchet")
    assert status.missing and profile is None
    truncated = tmp_path / "cut.hatchet"
    truncated.write_bytes(capture_path("vecadd_hook").read_bytes()[:200])
    status, profile = capture_status(truncated)
    assert status.error.startswith(str(truncated)) and profile is None


# The payload's scoped kernel under the instrumentation backend, then a kernel without scopes (recorded on the
# H200, Triton 3.6.0 and 3.7.1: the process dies of SIGFPE; run directly, Python reports signal 8).
SIGFPE_STREAM = PASS_STREAM[:3]


@pytest.mark.parametrize("stream, capture", [
    (SIGFPE_STREAM, CaptureStatus(CAPTURE, missing=True)),  # in the payload, before its verdict
    (PASS_STREAM, CaptureStatus(CAPTURE, missing=True)),  # after PASS, as Proton's command line finalizes
])
def test_sigfpe_under_instrumentation_names_its_cause(stream, capture):
    verdict = decide_verdict(classified(stream), exited(-8), capture, "instrumentation")
    assert verdict.outcome is not Outcome.PASS and verdict.exit_code == 1
    assert "SIGFPE" in verdict.message
    assert "a Triton kernel without proton.language scopes" in verdict.message
    assert "after a scoped one" in verdict.message
    other = decide_verdict(classified(stream), exited(-8), capture, "cupti")
    assert "proton.language" not in other.message and "signal 8" in other.message


# Proton's warnings when the instrumentation buffer is too small (H200, Triton 3.6.0, --buffer-size 64): one per
# CTA and warp, of every launch (here 3 CTAs × 4 warps, 2 launches).
DROPPED_STREAM = PASS_STREAM[:2] + [
    f"Warning (cta{cta}, warp{warp}): first 6 events are dropped due to insufficient buffer size (2/8)"
    for _launch in range(2) for cta in range(3) for warp in range(4)] + PASS_STREAM[2:]


def test_dropped_events_are_counted_and_explained():
    classifier = classified(DROPPED_STREAM)
    assert classifier.signals.dropped_events == 12
    verdict = decide_verdict(classifier, exited(0), CaptureStatus(CAPTURE, empty=True), "instrumentation")
    assert verdict.outcome is Outcome.EMPTY_CAPTURE
    assert any("12 warps lost events" in hint and "--buffer-size" in hint for hint in verdict.hints)


def test_the_payloads_sm_clock_is_read():
    classifier = classified(PASS_STREAM[:2] + ["vecadd: sm_clock_khz=1980000"] + PASS_STREAM[2:])
    assert classifier.signals.sm_clock_khz == 1_980_000
