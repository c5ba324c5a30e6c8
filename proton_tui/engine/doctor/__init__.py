"""Box diagnostics for the Triton/Proton stack: what the workload interpreter's Triton promises, proved.

``plan_doctor`` (probe the interpreter, read the host, ask the interpreter which profiler libraries it can load,
plan the matrix; nothing is captured) -> ``execute_doctor`` (one short capture per cell the rules let run, in
parallel, each in its own process group and run folder under ``<output>/<timestamp>-doctor/``, judged as any run
is, then ``doctor.json``). Never imports Textual.

* The matrix (``plan_matrix``, pure): every backend × context × output (the tree as ``hatchet`` or
  ``hatchet_msgpack``, or a ``chrome_trace``) × mode the interpreter's Triton offers (``BACKEND_SINCE``,
  ``DATA_SINCE``, ``FORMAT_SINCE``). A cell the rules refuse (another vendor's backend, a version's CLI limits) is
  expected "refused" with the rules' reasons and is not run; every other cell is expected to work and to record
  ``time (ns)`` (``cycles`` for the instrumentation backend, which runs the payload's scoped kernel).
* Proved (``judge_cell``): the run's verdict from the capture engine (``decide_verdict``: the payload's PASS, a
  capture, not empty), then the capture's metric against the one expected.
* The facts (``environment_facts``, pure over recorded readings): interpreter, GPU, driver, the profiler libraries
  as the interpreter loads them, counters restricted to admins, ``*_VISIBLE_DEVICES``, ``TRITON_PROTON_DISABLE``,
  the probe's cache; each wrong one with its remedy.
* Without a GPU there is no matrix: the payload runs once through the Triton interpreter instead (the CPU check).

Exit codes (``DoctorReport.exit_code``): 0 every cell works as the version promises and no fact failed; 1 a cell
or a fact failed; 3 no GPU (profiling not checked) and nothing failed; 2, a usage error, is raised before anything
runs (ParamError, ProbeError).

The package: ``matrix`` (the cells and their judgement), ``facts`` (the host and the environment; ``libraries.py``
is what the interpreter runs to say where its profiler libraries load from), ``run`` (planning and running),
``report`` (the results, doctor.json's record), ``text`` (the report in words).
"""

from proton_tui.engine.doctor.facts import LIBRARY_SCRIPT, HostReadings, environment_facts, probe_libraries, read_host
from proton_tui.engine.doctor.matrix import (
    CELL_TIMEOUT_S,
    CPU_CHECK,
    OUTPUTS,
    Cell,
    Judgement,
    cpu_cell,
    judge_cell,
    offered,
    plan_matrix,
)
from proton_tui.engine.doctor.report import (
    DOCTOR_JSON,
    NO_GPU_EXIT,
    CellResult,
    DoctorReport,
    Fact,
    interpreter_record,
    not_run,
)
from proton_tui.engine.doctor.run import DEFAULT_JOBS, MAX_JOBS, DoctorPlan, execute_doctor, plan_doctor, read_cell_run
from proton_tui.engine.doctor.text import (
    TABLE_COLUMNS,
    at_once,
    cell_cells,
    fact_lines,
    format_report,
    plan_line,
    table_rows,
)
from proton_tui.engine.sizes import DOCTOR_ITERS, DOCTOR_SIZE

__all__ = [
    "CELL_TIMEOUT_S", "CPU_CHECK", "DEFAULT_JOBS", "DOCTOR_ITERS", "DOCTOR_JSON", "DOCTOR_SIZE", "LIBRARY_SCRIPT",
    "MAX_JOBS", "NO_GPU_EXIT", "OUTPUTS", "TABLE_COLUMNS", "Cell", "CellResult", "DoctorPlan", "DoctorReport",
    "Fact", "HostReadings", "Judgement", "at_once", "cell_cells", "cpu_cell", "environment_facts", "execute_doctor",
    "fact_lines", "format_report", "interpreter_record", "judge_cell", "not_run", "offered", "plan_doctor", "plan_line",
    "plan_matrix", "probe_libraries", "read_cell_run", "read_host", "table_rows",
]
