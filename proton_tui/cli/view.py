"""``proton-tui view``: a capture in the viewer on a terminal; piped (or with --plain, --kernels, --json, --csv,
--export) as text, JSON or CSV."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from proton_tui.cli.common import (
    ExcludeOption,
    IncludeOption,
    NamesOption,
    RawNamesOption,
    command,
    fail,
    load,
    named_path,
    names_for,
    say,
    view_filter,
)

LARGE_CAPTURE_BYTES = 50_000_000  # above this, say that a capture is being read (a 1 GB one takes seconds)


def capture_path(text: str) -> Path:
    """FILE as `source.capture_path` reads it (`-` alone is standard input, `./-` the file), imported when a command
    reads one: the reader is not part of every command's start."""
    from proton_tui.hatchet.source import capture_path as path_of

    return path_of(text)


def register(app: typer.Typer) -> None:
    """Add the ``view`` command to ``app``."""
    command(app, "view", view)


def view(
    files: Annotated[list[Path], typer.Argument(
        parser=capture_path,
        metavar="FILE...", help="A Proton capture: .hatchet, .hatchet_msgpack (Triton >= 3.7) or .chrome_trace (a "
        "trace: its lanes on a timeline); a folder of rank captures (one per rank, as run -- torchrun writes) or "
        "several captures (one per rank) is a rank set; a folder of check --report-dir reports is a fleet.",
        show_default=False)],
    plain: Annotated[bool, typer.Option("--plain", help="Print the tree as text (the default when piped).")] = False,
    kernels: Annotated[bool, typer.Option("--kernels", help="Print the flat kernel summary as text.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics and kernel summaries as JSON.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the kernel summary as CSV.")] = False,
    depth: Annotated[Optional[str], typer.Option("--depth", metavar="INTEGER",
                                                 help="Tree: show nodes down to this depth.",
                                                 show_default=False)] = None,
    threshold: Annotated[Optional[str], typer.Option(
        "--threshold", metavar="PERCENT",
        help="Tree: hide nodes under this % of the total.", show_default=False)] = None,
    include: IncludeOption = None,
    exclude: ExcludeOption = None,
    sort: Annotated[str, typer.Option(
        "--sort", help="Order rows by time, launches, avg, gbps or name (largest first; names A to Z).")] = "time",
    reverse: Annotated[bool, typer.Option("--reverse", help="Reverse the order.")] = False,
    names_form: NamesOption = None,
    raw_names: RawNamesOption = False,
    show_empty: Annotated[bool, typer.Option(
        "--show-empty", help="Tree: keep the frames with no time in their whole subtree (hidden by default).")] = False,
    show_internal: Annotated[
        bool, typer.Option("--show-internal", help="Keep Proton's internal __proton_launch_metadata frames.")
    ] = False,
    sm_clock_khz: Annotated[Optional[str], typer.Option(
        "--sm-clock-khz", metavar="INTEGER",
        help="Instrumentation traces: the SM clock in kHz (a .hatchet's device_info clock_rate, "
        "1980000 on an H200), to show cycles as time too.", show_default=False)] = None,
    export: Annotated[
        Optional[str],
        typer.Option("--export", metavar="FILE", callback=named_path("--export"),
                     help="Write the view (tree, or --kernels) to a new .csv, .json or .md file; for a rank set of "
                     "traces, the merged trace to a new .json file."),
    ] = None,
) -> None:
    """Open a Proton capture in the kernel-time table; piped, print it as text, JSON or CSV.

    FILE is a tree (.hatchet, .hatchet_msgpack), a trace (.chrome_trace: its lanes on a timeline, their busy time
    and idle gaps as text), a folder of rank captures or several captures (one per rank: the ranks side by side, the
    slowest named), or a folder of check and doctor reports (a fleet, as check --report-dir writes them)."""
    if len(files) == 1 and files[0].is_dir():  # a fleet's reports (check --report-dir), as text or JSON
        from proton_tui.cli.fleet import view_fleet
        from proton_tui.engine.fleet import is_fleet_folder

        if is_fleet_folder(files[0]):
            view_fleet(files[0], as_json)
    if len(files) > 1 or files[0].is_dir():  # a rank set: one capture per rank
        from proton_tui.cli.ranks import view_rank_set

        one_capture = {"--csv": as_csv, "--include": include is not None, "--exclude": exclude is not None,
                       "--depth": depth is not None, "--threshold": threshold is not None, "--sort": sort != "time",
                       "--reverse": reverse, "--show-empty": show_empty, "--show-internal": show_internal,
                       "--sm-clock-khz": sm_clock_khz is not None}
        if given := [flag for flag, used in one_capture.items() if used]:
            fail(f"{given[0]} is for one capture, not a rank set: open a rank's capture alone (view FILE, or o in "
                 "the rank set's viewer)")
        if sum((plain, kernels, as_json)) > 1:
            fail("--plain, --kernels and --json are exclusive: pick one")
        view_rank_set(files, plain, kernels, as_json, names_form, raw_names, export)
        return
    from proton_tui.console import size_text
    from proton_tui.output.csv_tables import kernel_csv
    from proton_tui.output.document import summary_json, write_json
    from proton_tui.output.text import kernel_summary_lines, tree_lines, write_lines
    from proton_tui.view.display import SORT_KEYS

    file = files[0]
    chosen = view_filter(include, exclude, threshold, depth, show_empty)
    clock_khz = sm_clock(sm_clock_khz)
    if sort not in SORT_KEYS:
        fail(f"--sort {sort!r} is not a sort key: use one of {', '.join(SORT_KEYS)}")
    if sum((plain, kernels, as_json, as_csv)) > 1:
        fail("--plain, --kernels, --json and --csv are exclusive: pick one")
    if export is not None and (plain or as_json):  # standard output's forms: an export writes its suffix's
        fail(f"--export writes the format its suffix names; {'--plain' if plain else '--json'} is for standard "
             "output: pick one")
    if (kernels or as_csv or as_json) and chosen.hides_rows:
        fail("--depth and --threshold hide rows of the tree; the kernel summary (--kernels, --csv, --json) has none "
             "to hide")
    if export is None and not (plain or kernels or as_json or as_csv) and sys.stdout.isatty():
        from proton_tui.tui.launch import open_viewer

        error = open_viewer(file, chosen, show_internal, clock_khz)  # `entry.main` opens `view FILE` alone
        if error is not None:
            fail(error)
        return
    if sys.stderr.isatty() and file.is_file() and file.stat().st_size > LARGE_CAPTURE_BYTES:
        say(f"proton-tui: reading {file} ({size_text(file.stat().st_size)})…\n")
    profile = load(file, show_internal, clock_khz)
    names = names_for(profile.names, names_form, raw_names)
    # share bars are for people: on a terminal, never in a pipe, CSV, JSON or an export
    display = chosen.shown(profile, names, sort, reverse, bars=(plain or kernels) and sys.stdout.isatty())
    if export is not None:
        from proton_tui.output.export import export_text, format_for_path, write_export

        view_name = "kernels" if kernels or as_csv else "tree"
        try:
            write_export(export, export_text(display, view=view_name, fmt=format_for_path(export)))
        except (OSError, ValueError) as error:
            fail(str(error))
        say(f"wrote the {view_name} view to {export}\n")
        return
    if as_json:
        write_json(summary_json(display), sys.stdout)
    elif as_csv:
        sys.stdout.write(kernel_csv(display, terminal=sys.stdout.isatty()))
    elif kernels or profile.trace is not None:  # a trace: its lanes, then the kernel summary
        write_lines(kernel_summary_lines(display), sys.stdout)
    else:
        write_lines(tree_lines(display), sys.stdout)


MAX_CLOCK_KHZ = 100_000_000  # 100 GHz: above any GPU's SM clock, a value in Hz or a typo


def sm_clock(text: str | None) -> int | None:
    """--sm-clock-khz as a whole number of kHz; a bad value is a one-line error naming the flag."""
    if text is None:
        return None
    from proton_tui.engine.params import whole_number

    value = whole_number(text)
    if value is None or not 0 < value <= MAX_CLOCK_KHZ:
        fail(f"--sm-clock-khz {text!r} is not an SM clock in kHz: a whole number from 1 to {MAX_CLOCK_KHZ:,} "
             "(1980000 for an H200)")
    return value
