"""End to end: an instrumentation trace (the real H200 capture: 2 launches) opened in a real terminal with its events
decoded by forked workers (made to fork on any machine), so the read runs while the viewer starts: its first launch
drawn at 80×24 and at 160×48 before the tree of its scopes is built, ] to the next launch, t to its table once the
tree is built, q ends it with status 0."""

from __future__ import annotations

import json
import os
import sys
import uuid

import pytest

from tests.e2e.terminal import NO_TMUX, TMUX, Terminal, exit_status
from tests.helpers import FIXTURES, WITH_WORKERS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(TMUX is None, reason=NO_TMUX)]

# `proton-tui view FILE` with workers for a trace of any size on any machine: the workers forked are counted, and
# what came first is written down: the first launch's first line drawn, or the tree of the trace's scopes built
RECORDED = WITH_WORKERS + """
import json
from proton_tui.hatchet import trace
from proton_tui.tui.widgets.timeline import warps
order = []
tree = trace.Trace.tree
def tree_built(self):
    order.append("tree")
    return tree(self)
trace.Trace.tree = tree_built
render_line = warps.WarpTimeline.render_line
def drawn(self, y):
    if self.warps is not None and "launch" not in order:
        order.append("launch")
    return render_line(self, y)
warps.WarpTimeline.render_line = drawn
from proton_tui.entry import main
sys.argv = ["proton-tui", *sys.argv[2:]]
try:
    main()
finally:
    with open(os.environ["RECORD_FILE"], "w") as out:
        json.dump({"forks": len(forks), "order": order}, out)
"""


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_a_trace_read_by_workers_opens_on_its_first_launch_then_its_table(tmp_path, size):
    record = tmp_path / "record.json"
    hidden = ("TMUX", "TMUX_PANE", "COLUMNS", "LINES", "TEXTUAL", "NO_COLOR")
    env = {key: value for key, value in os.environ.items() if key not in hidden} | {"RECORD_FILE": str(record)}
    rc_file = tmp_path / "exit-status"
    term = Terminal(f"proton-warps-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        term.start(["sh", "-c", '"$@"; echo "$?" > "$0"', str(rc_file), sys.executable, "-c", RECORDED, "-",
                    "view", str(FIXTURES / "instr_scopes_trace.chrome_trace")], tmp_path, env, size)
        term.wait_for(lambda s: "Launch 1 of 2:" in s and "the slowest of 64 warps" in s, 60, "the first launch")
        term.keys("]")
        term.wait_for(lambda s: "Launch 2 of 2:" in s, 15, "the second launch")
        term.keys("t")
        term.wait_for(lambda s: "k_scoped" in s and "ROOT" in s and "Launch" not in s, 15, "the table")
        term.keys("q")
        assert exit_status(term, rc_file, 30, "q") == "0"
    finally:
        term.kill()
    found = json.loads(record.read_text())
    assert found["forks"] >= 2 and found["order"] == ["launch", "tree"]  # decoded by workers; launch 1 drawn first
