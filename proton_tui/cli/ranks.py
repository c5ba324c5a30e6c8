"""``proton-tui view DIR`` (or ``view FILE FILE …``): a folder of rank captures (a run folder of ``run -- torchrun
…``) or captures given one per rank, as a rank set: in the viewer on a terminal, else as text or JSON (every rank's
GPU time against the set's median, and every kernel across the ranks)."""

from __future__ import annotations

import sys
from pathlib import Path

from proton_tui.cli.common import fail, names_for, say, shown


def view_rank_set(paths: list[Path], plain: bool, kernels: bool, as_json: bool, names_form: str | None,
                  raw_names: bool, export: Path | None = None) -> None:
    """The rank set in the viewer on a terminal, else as text (`kernels`: the kernel × rank table alone) or JSON;
    with `export`, the ranks' traces merged into one Chrome trace for Perfetto."""
    from proton_tui.hatchet import CaptureError
    from proton_tui.output.document import json_text, write_json
    from proton_tui.output.ranks import (
        RankSetError,
        merged_rank_trace,
        open_rank_set,
        rank_set_json,
        rank_set_text,
    )

    if export is None and not (plain or kernels or as_json) and sys.stdout.isatty():
        from proton_tui.tui.launch import open_rank_viewer

        if (error := open_rank_viewer(paths)) is not None:
            fail(error)
        return
    if export is not None:
        from proton_tui.output.export import check_trace_path, write_export

        try:
            check_trace_path(export)
        except ValueError as error:
            fail(str(error))
    try:
        rank_set = open_rank_set(paths)
        if export is not None:
            document, alignment = merged_rank_trace(rank_set)
            write_export(export, json_text(document))
            say(f"wrote the merged trace of {len(rank_set.ranks)} ranks to {export} (clocks aligned by "
                f"{alignment})\n")
            return
    except (RankSetError, CaptureError, OSError) as error:
        fail(str(error))
    names = names_for(rank_set.names, names_form, raw_names)
    if as_json:
        write_json(rank_set_json(rank_set, names), sys.stdout)
    else:
        sys.stdout.write(shown(rank_set_text(rank_set, names, ranks_table=not kernels)))
