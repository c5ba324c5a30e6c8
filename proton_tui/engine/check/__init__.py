"""Box check: run the payload on every visible GPU at once, one pinned process per GPU, and compare them.

``plan_check`` (parse the options, probe the interpreter, one RunPlan per GPU; nothing runs) ->
``execute_check`` (every run in parallel, each in its own process group and run folder, then one row per GPU,
the median bandwidth, flags, and ``check.json``). Never imports Textual.

Where each number comes from:

* verdict, max_abs_err: the payload's own stream (``vecadd: PASS|FAIL``, ``vecadd: max_abs_err=…``), judged by
  the capture engine's ``decide_verdict`` (with a capture, PASS also needs a capture with kernels).
* kernel time (µs per launch): the capture's ``add_kernel`` node (its time ÷ its launches, timed by the GPU
  profiler) when a capture has one; otherwise the payload's timed loop (``per_iter_us``: host wall time of
  ``iters`` launches ÷ ``iters``, which includes launch overhead).
* GB/s: the capture's ``add_kernel`` bytes ÷ its time (Proton's triton hook records the payload's declared
  ``bytes`` = 3·n·4 per launch; without them, 3·n·4 from the payload's definition) when a capture has the
  kernel; otherwise the payload's own timed-loop ``gbps`` line. ``gbps_source`` says which. With ``--cpu``
  (the Triton interpreter) bandwidth means nothing: it is None and nothing is flagged.
* % of peak: GB/s ÷ the device's peak from the capture's ``device_info`` (``Profile.peak_bytes_per_s``). Without
  a capture the peak is unknown and stays None: nothing is invented.
* flagged: a passing GPU whose GB/s is below ``min_fraction`` × the median GB/s of the passing GPUs. With fewer
  than two measured GPUs nothing is flagged.
* likely cause: NVML's readings of each GPU around its run (``gpuhealth``: clocks, throttle reasons, power and
  its limit, temperature, ECC, PCIe link, MIG, other processes; read only when the optional ``nvidia-ml-py`` is
  installed and NVML starts), turned into causes by ``gpuhealth.explain``; a slow GPU with readings and no cause
  says so. What could not be read is said once, in ``readings_note``.
* exit code: 0 when every GPU passed and none is flagged, 1 otherwise. (2, for no GPU or a bad option, is
  raised before anything runs: NoGpuError, CheckError, ParamError, ProbeError.)

The package: ``plan`` (the options and the runs), ``run`` (running them, each GPU's row), ``report`` (the rows
judged together, check.json's record), ``text`` (the report in words).
"""

from __future__ import annotations

from proton_tui.engine.check.plan import (
    INTERPRETER_NAME,
    MAX_JOBS,
    MIN_FRACTION,
    TIMEOUT_S,
    CheckError,
    CheckPlan,
    CheckSlot,
    NoGpuError,
    parse_fraction,
    parse_gpus,
    plan_check,
)
from proton_tui.engine.check.report import CHECK_JSON, CheckReport, explain_rows, flag_rows
from proton_tui.engine.check.run import CaptureMeasure, build_row, execute_check, measure_capture
from proton_tui.engine.check.text import (
    TABLE_COLUMNS,
    capture_cell,
    cause_lines,
    format_report,
    report_notes,
    table_rows,
)
from proton_tui.records import CheckRow

__all__ = [
    "CHECK_JSON", "INTERPRETER_NAME", "MAX_JOBS", "MIN_FRACTION",
    "TABLE_COLUMNS", "TIMEOUT_S", "CaptureMeasure", "CheckError", "CheckPlan", "CheckReport", "CheckRow", "CheckSlot",
    "NoGpuError", "build_row", "capture_cell", "cause_lines", "execute_check", "explain_rows", "flag_rows",
    "format_report", "measure_capture", "parse_fraction", "parse_gpus", "plan_check", "report_notes",
    "table_rows",
]
