"""The doctor's matrix (pure): which cells the interpreter's Triton offers, what its rules expect of each, and the
judgement of a finished cell against it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from proton_tui.engine.classify import Outcome, Verdict
from proton_tui.engine.job import RowVerdict, row_verdict
from proton_tui.engine.params import BACKENDS, CONTEXTS, MODES, RunParams
from proton_tui.engine.probe import InterpreterInfo
from proton_tui.engine.rules import BACKEND_SINCE, DATA_SINCE, FORMAT_SINCE, check_rules, cli_words, resolve_backend
from proton_tui.engine.rundir import DEFAULT_OUTPUT
from proton_tui.engine.sizes import CPU_ITERS, CPU_SIZE, DOCTOR_ITERS, DOCTOR_SIZE

CELL_TIMEOUT_S = 180.0  # per cell: the first compile of the scoped kernel included
# The outputs a Triton version offers: (Proton's data, the tree's format in RunParams), by the name of the file kind.
OUTPUTS = {"hatchet": ("tree", "hatchet"), "hatchet_msgpack": ("tree", "hatchet_msgpack"),
           "chrome_trace": ("trace", "hatchet")}
METRIC_OF_UNIT = {"ns": "time (ns)", "cycles": "cycles"}
CPU_CHECK = "cpu"  # the kind of the cell that runs the payload through the Triton interpreter


@dataclass(frozen=True)
class Cell:
    """One configuration to prove: what the version's rules expect of it, and the run that proves it."""

    backend: str
    context: str
    data: str  # "tree" or "trace"
    format: str  # the file: "hatchet", "hatchet_msgpack" or "chrome_trace"
    mode: str
    expected: str  # "works" or "refused"
    metric: str | None  # the metric key the capture must hold ("time (ns)", "cycles"); None when not profiled
    reasons: tuple[str, ...] = ()  # why the rules refuse it (as command-line advice)
    resolved: str | None = None  # the backend Proton will use
    params: RunParams | None = None  # None for a cell read back from doctor.json
    kind: str = "capture"  # or CPU_CHECK

    @property
    def key(self) -> str:
        """The cell in one word, as the live output and doctor.json name it."""
        if self.kind == CPU_CHECK:
            return "cpu-check"
        return f"{self.backend}/{self.context}/{self.format}/{self.mode}"

    @property
    def backend_text(self) -> str:
        if self.kind == CPU_CHECK:
            return "none (CPU)"
        return f"auto → {self.resolved}" if self.backend == "auto" and self.resolved else self.backend

    @property
    def expected_text(self) -> str:
        return "refused" if self.expected == "refused" else self.metric or "PASS"


def offered(info: InterpreterInfo) -> tuple[list[str], list[str]]:
    """The backends (auto first) and outputs the interpreter's Triton offers."""
    backends = [b for b in BACKENDS if b == "auto" or info.triton_at_least(BACKEND_SINCE[b])]
    outputs = ["hatchet"]
    if info.triton_at_least(FORMAT_SINCE["hatchet_msgpack"]):
        outputs.append("hatchet_msgpack")
    if info.triton_at_least(DATA_SINCE["trace"]):
        outputs.append("chrome_trace")
    return backends, outputs


def plan_matrix(info: InterpreterInfo, *, gpu: int = 0, size: int = DOCTOR_SIZE, iters: int = DOCTOR_ITERS,
                output: Path = DEFAULT_OUTPUT, timeout: float | None = CELL_TIMEOUT_S,
                environ: Mapping[str, str] | None = None, backend: str | None = None, context: str | None = None,
                mode: str | None = None) -> list[Cell]:
    """Every cell the interpreter's Triton offers on GPU ``gpu`` (narrowed by ``backend``, ``context``, ``mode``),
    each expected to work or refused with the rules' reasons. Empty without a GPU. Pure: nothing runs."""
    if not info.gpu_count:
        return []
    environ = {} if environ is None else environ
    backends, outputs = offered(info)
    cells = []
    for backend_ in backends:
        for context_ in CONTEXTS:
            for output_ in outputs:
                for mode_ in MODES:
                    if (backend, context, mode) != (None, None, None) and (
                            backend not in (None, backend_) or context not in (None, context_)
                            or mode not in (None, mode_)):
                        continue
                    data, tree_format = OUTPUTS[output_]
                    name = f"{backend_}-{context_}-{output_.replace('_', '-')}-{mode_}"
                    params = RunParams(size=size, iters=iters, backend=backend_, context=context_, mode=mode_,
                                       data=data, output_format=tree_format, python=info.python, device=gpu,
                                       output=output, name=name, timeout=timeout)
                    refusals = tuple(f.message for f in check_rules(params, info, environ) if f.refuses)
                    metric = None if refusals else "cycles" if backend_ == "instrumentation" else "time (ns)"
                    cells.append(Cell(backend_, context_, data, output_, mode_, "refused" if refusals else "works",
                                      metric, refusals, resolve_backend(backend_, info), params))
    return cells


def cpu_cell(info: InterpreterInfo, output: Path = DEFAULT_OUTPUT, timeout: float | None = CELL_TIMEOUT_S,
             environ: Mapping[str, str] | None = None) -> Cell:
    """The payload through the Triton interpreter, unprofiled: what runs without a GPU."""
    params = RunParams(size=CPU_SIZE, iters=CPU_ITERS, python=info.python, device="cpu", profile=False,
                       output=output, name="cpu-check", timeout=timeout)
    refusals = tuple(f.message for f in check_rules(params, info, {} if environ is None else environ) if f.refuses)
    return Cell("none", "-", "-", "-", "-", "refused" if refusals else "works", None, refusals, None, params,
                kind=CPU_CHECK)



@dataclass(frozen=True)
class Judgement:
    proved: RowVerdict  # PASS, the run's outcome, or WRONG_METRIC
    ok: bool
    message: str
    metric: str | None  # the metric the capture holds, as its key
    remedy: str | None


OUTCOME_REMEDIES = {
    Outcome.NO_CAPTURE: "Proton wrote no file: the cell's log shows where it stopped",
    Outcome.PAYLOAD_ERROR: "the payload failed under this configuration: the cell's log has the error",
    Outcome.BAD_CAPTURE: "Proton wrote a file proton-tui cannot read: the cell's log and the file show why",
    Outcome.TIMED_OUT: cli_words("the run did not end in time: give it more time («timeout»), or look at the cell's "
                                 "log for a hang"),
    Outcome.FAIL: "the kernel's result is wrong under this configuration: the cell's log has max_abs_err",
}


def judge_cell(cell: Cell, verdict: Verdict, unit: str | None) -> Judgement:
    """A run's verdict and its capture's unit ("ns", "cycles", None without a capture) against what the cell
    expects."""
    metric = METRIC_OF_UNIT.get(unit or "")
    if not verdict.passed:
        remedy = "; ".join(verdict.hints) or OUTCOME_REMEDIES.get(verdict.outcome)
        return Judgement(row_verdict(verdict.outcome), False, verdict.message, metric, remedy)
    if cell.metric is not None and metric != cell.metric:
        held = f"`{metric}`" if metric else "neither time nor cycles"
        return Judgement(RowVerdict.WRONG_METRIC, False, f"the capture holds {held}, not `{cell.metric}`", metric,
                         f"Proton recorded with another backend than {cell.resolved or cell.backend}: the cell's "
                         "log says which")
    return Judgement(RowVerdict.PASS, True, verdict.message, metric, None)

