"""``proton-tui view DIR``: a folder of rank captures (a run folder of ``run -- torchrun …``) as a rank set, as text
or JSON: every rank's GPU time against the set's median, and every kernel across the ranks."""

from __future__ import annotations

import sys
from pathlib import Path

from proton_tui.cli.common import fail, names_for, shown


def view_rank_set(folder: Path, as_json: bool, names_form: str | None, raw_names: bool) -> None:
    from proton_tui.hatchet import CaptureError
    from proton_tui.output.document import json_text
    from proton_tui.output.ranks import RankSetError, open_rank_set, rank_set_json, rank_set_text

    try:
        rank_set = open_rank_set([folder])
    except (RankSetError, CaptureError) as error:
        fail(str(error))
    names = names_for([rank.profile for rank in rank_set.ranks], names_form, raw_names)
    if as_json:
        sys.stdout.write(json_text(rank_set_json(rank_set, names)))
    else:
        sys.stdout.write(shown(rank_set_text(rank_set, names)))
