"""A box check's report in words: the aligned table, the notes under it, a row's causes."""

from __future__ import annotations

from pathlib import Path

from proton_tui.console import printable
from proton_tui.engine import gpuhealth
from proton_tui.engine.check.report import CheckReport
from proton_tui.records import CheckRow
from proton_tui.view.formatting import aligned_table, counted


def cause_lines(row: CheckRow, joiner: str | None = None) -> list[str]:
    """What the row's readings explain, a line per cause ("likely cause: …" for a flagged GPU, "noted: …" for any
    other), or all on one line joined by ``joiner``; the table's text when the rules found none. Printable."""
    label = gpuhealth.cause_label(row.flagged)
    if not row.causes:  # a slow GPU whose readings show no cause
        return [f"{label}: {printable(row.likely_cause)}"] if row.likely_cause else []
    if joiner is not None:
        return [f"{label}: {printable(joiner.join(row.causes))}"]
    return [f"{label}: {printable(cause)}" for cause in row.causes]


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _time_us(value: float | None) -> str:
    return "-" if value is None else format(value, ".1f" if value >= 1 else ".3g")


def capture_cell(row: CheckRow, check_dir: str | None) -> str:
    """The capture's path, relative to the check folder when it lies inside it (the report names the folder)."""
    if not row.capture:
        return "-"
    if check_dir:
        try:
            return str(Path(row.capture).relative_to(check_dir))
        except ValueError:
            pass
    return row.capture


TABLE_COLUMNS = ("GPU", "NAME", "RESULT", "MAX_ABS_ERR", "KERNEL_US", "GB/S", "%PEAK", "FLAG", "LIKELY_CAUSE",
                 "CAPTURE")


def table_rows(report: CheckReport) -> list[tuple[str, ...]]:
    """The table's cells as plain strings (names are data: print them as they are)."""
    na = report.cpu  # the interpreter measures no bandwidth
    return [(row.label, printable(row.name), row.verdict, _number(row.max_abs_err, ".3e"), _time_us(row.kernel_us),
             "n/a" if na else _number(row.gbps, ".1f"), "n/a" if na else _number(row.peak_percent, ".1f"),
             "SLOW" if row.flagged else "", "n/a" if na else printable(row.likely_cause),
             capture_cell(row, report.check_dir)) for row in report.rows]


def format_report(report: CheckReport) -> str:
    """The plain-text report: an aligned table, then its notes (`report_notes`)."""
    lines = aligned_table([TABLE_COLUMNS, *table_rows(report)], right={3, 4, 5, 6})
    return "\n".join([*lines, "", *report_notes(report)]) + "\n"


def report_notes(report: CheckReport) -> list[str]:
    """What the report says under its table: where the numbers come from, what failed, and the result."""
    lines = []
    if report.cpu:
        lines.append(f"interpreter check on the CPU: {counted(len(report.rows), 'run')} of size {report.size}, "
                     f"{counted(report.iters, 'iteration')}; bandwidth is not measured through the interpreter")
    else:
        sources = sorted({row.gbps_source for row in report.rows if row.gbps_source})
        lines.append(f"size {report.size} elements, {report.iters} iterations; GB/s from "
                     + (" and ".join(_SOURCE_TEXT[source] for source in sources) or "nothing (no run measured it)"))
        if report.median_gbps is not None:
            lines.append(f"median {report.median_gbps:.1f} GB/s over the passing GPUs; flagged below "
                         f"{report.min_fraction:.2f} x median = {report.threshold_gbps:.1f} GB/s")
        notes = sorted({row.peak_note for row in report.rows if row.passed and row.peak_note})
        lines += [f"% of peak unknown: {note}" for note in notes]
        lines += _readings_notes(report)
    for row in report.rows:
        if not row.passed:
            where = f" (run folder {row.run_dir})" if row.run_dir else ""
            lines.append(f"{_what(report)} {row.label}: {row.message}{where}")
        if row.flagged:
            lines.append(f"{_what(report)} {row.label}: flagged: {row.flag_reason}")
        lines += [f"{_what(report)} {row.label}: {line}" for line in cause_lines(row, "; ")]
    count = len(report.rows)
    if report.cancelled:
        failed = f", {len(report.failed)} failed" if report.failed else ""
        lines.append(f"check: CANCELLED: {len(report.cancelled)} of {count} {_what(report, count)} ended by the "
                     f"cancel{failed}")
    elif report.exit_code == 0:
        lines.append(f"check: PASS: {count} of {count} {_what(report, count)} passed, none flagged")
    else:
        lines.append(f"check: FAIL: {len(report.failed)} of {count} {_what(report, count)} failed, "
                     f"{len(report.flagged)} flagged")
    if report.check_dir:
        lines.append(f"check folder: {report.check_dir}")
    return [printable(line) for line in lines]  # folders and messages are data


def _readings_notes(report: CheckReport) -> list[str]:
    """What could not be read, once: for the whole check, or per problem with the GPUs it concerns."""
    if report.readings_note:
        return [f"GPU readings (likely cause): not read: {printable(report.readings_note)}"]
    problems: dict[str, list[str]] = {}
    for row in report.rows:
        if row.readings and row.readings.get("problem"):
            problems.setdefault(str(row.readings["problem"]), []).append(row.label)
    return [f"GPU readings of {_what(report, len(labels))} {', '.join(labels)}: not read: {printable(problem)}"
            for problem, labels in problems.items()]


_SOURCE_TEXT = {"capture": "each capture (kernel bytes / kernel time)",
                "payload loop": "the payload's timed loop (host-timed, no capture)"}


def _what(report: CheckReport, count: int = 1) -> str:
    word = "run" if report.cpu else "GPU"
    return word + ("s" if count != 1 else "")
