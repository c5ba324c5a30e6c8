"""Two ranks' real Chrome traces from an H200 (Triton 3.9.0: each with its own clock base) merged for Perfetto:
every event of every rank kept (these hold kernels only, no flows), the clocks aligned by the bases the traces recorded."""

from __future__ import annotations

import orjson

from proton_tui.output.ranks import merged_rank_trace, open_rank_set
from tests.helpers import FIXTURES

RANKS = FIXTURES / "ranks_h200_trace39"


def test_the_two_ranks_clock_bases_align_their_events():
    originals = [orjson.loads((RANKS / f"ranks.rank{rank}.chrome_trace").read_bytes()) for rank in (0, 1)]
    bases = [original["baseTimeNanoseconds"] for original in originals]
    assert bases[0] != bases[1]  # two processes, two clock bases
    merged, alignment = merged_rank_trace(open_rank_set([RANKS]))
    assert alignment == "the traces' clock base (baseTimeNanoseconds)"
    assert merged["baseTimeNanoseconds"] == min(bases)
    flows: dict[int, set[int]] = {}
    for rank, original in enumerate(originals):
        data = [event for event in original["traceEvents"] if event["ph"] != "M"]
        mine = [event for event in merged["traceEvents"] if event["ph"] != "M" and event["pid"] // 1000 == rank]
        assert len(mine) == len(data) > 0
        shift = (bases[rank] - min(bases)) / 1000  # µs, as ts is
        assert [event["ts"] for event in mine] == [event["ts"] + shift for event in data]
        for event in mine:
            if event["ph"] in ("s", "f"):
                flows.setdefault(event["id"], set()).add(rank)
    assert all(len(ranks) == 1 for ranks in flows.values()), "a flow id shared by two ranks"
    names = {event["pid"]: event["args"]["name"] for event in merged["traceEvents"]
             if event.get("name") == "process_name"}
    assert sorted(names.values())[0].startswith("rank 0") and any(n.startswith("rank 1") for n in names.values())
