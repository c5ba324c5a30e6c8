"""A fleet: the box checks and doctor runs of many machines written into one shared folder (``check --json
--report-dir DIR`` or ``doctor --json --report-dir DIR``, one task per node under the cluster's own launcher), read
back as one report: every GPU of every node flagged against the fleet's median with its likely causes, and the
doctors' matrices side by side, a column per node."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path

from proton_tui import JSON_SCHEMA
from proton_tui.console import printable
from proton_tui.engine import gpuhealth
from proton_tui.engine.check.report import explain_rows, flag_rows
from proton_tui.records import (
    MIN_FRACTION,
    CheckRecord,
    CheckRow,
    DoctorRecord,
    RecordError,
    read_check,
    read_doctor,
)
from proton_tui.view.formatting import aligned_table, counted

# `check-<host>-<YYYYmmdd-HHMMSS>[-N].json`, as `records.fleet_stem` names a report
REPORT_NAME = re.compile(r"^(?P<kind>check|doctor)-(?P<host>.+)-\d{8}-\d{6}(?:-\d+)?\.json$")


class FleetError(ValueError):
    """A fleet folder that cannot be read as one: one line naming the folder or the file."""


@dataclass(frozen=True)
class NodeCheck:
    host: str
    path: Path
    record: CheckRecord


@dataclass(frozen=True)
class NodeDoctor:
    host: str
    path: Path
    record: DoctorRecord

    @property
    def triton(self) -> str:
        return str(self.record.interpreter.get("triton_version") or "?")


@dataclass(frozen=True)
class FleetGpu:
    """One GPU of one node, judged against the whole fleet (its row a copy: the node's own report is unchanged)."""

    host: str
    row: CheckRow
    triton: str


@dataclass
class Fleet:
    folder: Path
    checks: list[NodeCheck]
    doctors: list[NodeDoctor]
    gpus: list[FleetGpu]
    median_gbps: float | None
    min_fraction: float

    @property
    def threshold_gbps(self) -> float | None:
        return None if self.median_gbps is None else self.min_fraction * self.median_gbps

    @property
    def flagged(self) -> list[FleetGpu]:
        return [gpu for gpu in self.gpus if gpu.row.flagged]

    @property
    def failed(self) -> list[FleetGpu]:
        return [gpu for gpu in self.gpus if not gpu.row.passed]

    @property
    def exit_code(self) -> int:
        """0 when every GPU passed, none is flagged and every doctor passed; 1 otherwise."""
        doctors_ok = all(doctor.record.exit_code in (0, 3) for doctor in self.doctors)
        return 0 if not self.failed and not self.flagged and doctors_ok else 1


def fleet_reports(folder: Path) -> list[Path]:
    """The fleet reports in `folder`: files named as `--report-dir` names them."""
    try:
        return sorted(path for path in folder.iterdir() if REPORT_NAME.match(path.name) and path.is_file())
    except OSError as error:
        raise FleetError(f"{folder}: cannot be listed: {error.strerror or error}") from None


def is_fleet_folder(path: Path) -> bool:
    """Whether `path` is a folder holding a fleet's reports."""
    try:
        return path.is_dir() and bool(fleet_reports(path))
    except FleetError:
        return False


def open_fleet(folder: Path) -> Fleet:
    """Read every report of `folder` and judge every GPU against the fleet's median."""
    checks, doctors = [], []
    for path in fleet_reports(folder):
        match = REPORT_NAME.match(path.name)
        try:
            if match["kind"] == "check":
                record = read_check(path)
                checks.append(NodeCheck(record.host or match["host"], path, record))
            else:
                record = read_doctor(path)
                doctors.append(NodeDoctor(record.host or match["host"], path, record))
        except RecordError as error:
            raise FleetError(str(error)) from None
    if not checks and not doctors:
        raise FleetError(f"{folder}: no fleet report in it (check-HOST-TIME.json or doctor-HOST-TIME.json, as "
                         "`check --report-dir` and `doctor --report-dir` write them)")
    fractions = {check.record.min_fraction for check in checks}
    min_fraction = fractions.pop() if len(fractions) == 1 else MIN_FRACTION
    gpus = [FleetGpu(check.host, copy.deepcopy(row), str(check.record.interpreter.get("triton_version") or "?"))
            for check in checks if check.record.mode == "gpu" for row in check.record.rows]
    rows = [gpu.row for gpu in gpus]
    median = flag_rows(rows, min_fraction)
    explain_rows(rows, median, min_fraction)
    return Fleet(folder, checks, doctors, gpus, median, min_fraction)


# ---- words -------------------------------------------------------------------------------------------------------
GPU_COLUMNS = ("NODE", "GPU", "NAME", "RESULT", "GB/S", "OF_MEDIAN", "FLAG", "LIKELY_CAUSE", "TRITON")


def _of_median(gbps: float | None, median: float | None) -> str:
    return "-" if gbps is None or not median else f"{gbps / median:.2f}x"


def cell_key(cell) -> str:
    return cell.cell or "/".join((cell.backend, cell.context, cell.data, cell.format, cell.mode))


def _cell_state(cell) -> str:
    return "refused" if cell.expected == "refused" else "ok" if cell.ok else str(cell.proved)


def fleet_text(fleet: Fleet) -> str:
    """The fleet in words: every GPU of every node against the fleet's median, then the doctors side by side."""
    lines = [f"fleet: {fleet.folder}: {counted(len(fleet.checks), 'box check')} and "
             f"{counted(len(fleet.doctors), 'doctor run')} from {counted(len(nodes(fleet)), 'node')}"]
    if fleet.gpus:
        rows = [GPU_COLUMNS, *[(gpu.host, gpu.row.label, gpu.row.name, str(gpu.row.verdict),
                                "-" if gpu.row.gbps is None else f"{gpu.row.gbps:.1f}",
                                _of_median(gpu.row.gbps, fleet.median_gbps), "SLOW" if gpu.row.flagged else "",
                                gpu.row.likely_cause, gpu.triton) for gpu in fleet.gpus]]
        lines += ["", *aligned_table(rows, {4, 5})]
        if fleet.median_gbps is not None:
            lines.append(f"fleet median {fleet.median_gbps:.1f} GB/s over {counted(len(fleet.gpus), 'GPU')}; "
                         f"flagged below {fleet.min_fraction:.2f} x median = {fleet.threshold_gbps:.1f} GB/s")
        for gpu in fleet.gpus:
            where = f"{gpu.host} GPU {gpu.row.label}"
            if not gpu.row.passed:
                lines.append(f"{where}: {gpu.row.message}")
            if gpu.row.flagged:
                lines.append(f"{where}: flagged: {gpu.row.flag_reason}")
            label = gpuhealth.cause_label(gpu.row.flagged)
            lines += [f"{where}: {label}: {cause}" for cause in gpu.row.causes]
    if fleet.doctors:
        lines += ["", *doctor_lines(fleet.doctors)]
    slow, failed = len(fleet.flagged), len(fleet.failed)
    verdict = "PASS" if fleet.exit_code == 0 else "FAIL"
    lines += ["", f"fleet: {verdict}: {counted(len(fleet.gpus), 'GPU')}, {failed} failed, {slow} flagged"
              + (f"; {sum(d.record.exit_code not in (0, 3) for d in fleet.doctors)} of "
                 f"{counted(len(fleet.doctors), 'doctor run')} failed" if fleet.doctors else "")]
    return "\n".join(printable(line) for line in lines) + "\n"  # hosts, names and messages are data


def doctor_lines(doctors: list[NodeDoctor]) -> list[str]:
    """A row per node (its Triton, the counts, its verdict), then every cell with a column per node ("-" where
    that node's Triton has no such cell)."""
    summary = [("NODE", "TRITON", "PASSED", "FAILED", "REFUSED", "VERDICT"),
               *[(d.host, d.triton, str(d.record.passed), str(d.record.failed), str(d.record.refused),
                  d.record.verdict) for d in doctors]]
    keys: dict[str, None] = {}
    for doctor in doctors:
        keys.update((cell_key(cell), None) for cell in doctor.record.cells)
    states = [{cell_key(cell): _cell_state(cell) for cell in doctor.record.cells} for doctor in doctors]
    header = ("CELL", *[f"{d.host} ({d.triton})" for d in doctors])
    matrix = [header, *[(key, *[state.get(key, "-") for state in states]) for key in keys]]
    return ["doctor runs, a row per node:", *aligned_table(summary, {2, 3, 4}), "", "cells, a column per node:",
            *aligned_table(matrix)]


def nodes(fleet: Fleet) -> list[str]:
    return list(dict.fromkeys([*(c.host for c in fleet.checks), *(d.host for d in fleet.doctors)]))


def fleet_json(fleet: Fleet) -> dict:
    """The fleet as JSON (docs/json.md): every GPU judged against the fleet, every doctor's cells."""
    return {
        "schema": JSON_SCHEMA, "kind": "fleet", "folder": str(fleet.folder), "nodes": nodes(fleet),
        "median_gbps": fleet.median_gbps, "threshold_gbps": fleet.threshold_gbps, "min_fraction": fleet.min_fraction,
        "gpus": [{"host": gpu.host, "index": gpu.row.index, "label": gpu.row.label, "name": gpu.row.name,
                  "verdict": str(gpu.row.verdict), "passed": gpu.row.passed, "gbps": gpu.row.gbps,
                  "flagged": gpu.row.flagged, "flag_reason": gpu.row.flag_reason, "causes": gpu.row.causes,
                  "likely_cause": gpu.row.likely_cause, "triton": gpu.triton} for gpu in fleet.gpus],
        "checks": [{"host": check.host, "file": str(check.path), "exit_code": check.record.exit_code}
                   for check in fleet.checks],
        "doctors": [{"host": d.host, "file": str(d.path), "triton": d.triton, "verdict": d.record.verdict,
                     "passed": d.record.passed, "failed": d.record.failed, "refused": d.record.refused,
                     "cells": {cell_key(cell): _cell_state(cell) for cell in d.record.cells}} for d in fleet.doctors],
        "exit_code": fleet.exit_code,
    }
