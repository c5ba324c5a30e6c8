"""What launchers print of a rank that died, read by LauncherReport; exit statuses as words."""

from __future__ import annotations

from proton_tui.engine.judge import RankOutcome, first_to_fail
from proton_tui.engine.ranks import LauncherReport, ended_text
from proton_tui.records import RankRecord

TORCHRUN_SUMMARY = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
======================================================
ddp.py FAILED
------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-02_19:46:37
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 8808)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 8808
------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-02_19:46:37
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 8809)  (SIGKILL)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 8809
======================================================"""


def test_torchruns_failure_summary_names_each_rank_and_the_first_to_fail():
    report = LauncherReport()
    report.feed(TORCHRUN_SUMMARY.splitlines())
    assert report.ended == {0: "killed by SIGTERM", 1: "killed by SIGKILL"}
    assert report.first == 1


def test_srun_and_mpirun_lines():
    report = LauncherReport()
    report.feed(["srun: error: node7: task 3: Killed", "srun: error: node7: task 2: Exited with exit code 4",
                 "mpirun noticed that process rank 5 with PID 4242 on node n7 exited on signal 11 (Segmentation "
                 "fault)."])
    assert report.ended == {3: "killed by SIGKILL", 2: "exited with code 4", 5: "killed by SIGSEGV"}


def test_exit_statuses_as_words():
    assert ended_text(-9) == "killed by SIGKILL"
    assert ended_text(137) == "killed by SIGKILL"
    assert ended_text(1) == "exited with code 1"
    assert ended_text(-99) == "killed by signal 99"


def outcome(rank: int, ending_ns: int | None, host: str = "node1", ended: str | None = "exited with code 1",
            exception: str | None = None, finalized: bool = True):
    record = RankRecord(stem=f"train.rank{rank}", rank=rank, host=host, ending_ns=ending_ns, ended=ended,
                        finalized=finalized)
    return RankOutcome(rank, record, None, exception)


def test_the_first_to_fail_is_the_rank_that_began_to_end_first_not_the_launchers_tie():
    # torchrun names rank 0 where both exits came in one poll; the hooks' stamps say rank 1 ended 40 ms earlier
    ranks = [outcome(0, 2_040_000_000, exception="RuntimeError: Connection closed by peer"),
             outcome(1, 2_000_000_000, exception="RuntimeError: boom")]
    assert first_to_fail(ranks, said=0) == 1
    ranks[0] = outcome(0, 1_990_000_000)
    assert first_to_fail(ranks, said=1) == 0


def test_a_rank_killed_outright_failed_before_the_ranks_whose_hooks_saw_their_end():
    # torchrun found both in one poll and named rank 0; rank 0 raised when rank 1's connection closed
    killed = outcome(1, None, ended="killed by SIGKILL", finalized=False)
    assert first_to_fail([outcome(0, 5, exception="RuntimeError: Connection closed by peer"), killed], said=0) == 1
    segfault = outcome(1, None, ended="killed by SIGSEGV", finalized=False)
    assert first_to_fail([outcome(0, 5, ended="killed by SIGTERM"), segfault], said=0) == 1
    # an abort is what NCCL's watchdog does once a peer has gone: a follow-on, so the launcher's word stands
    aborted = outcome(0, None, ended="killed by SIGABRT", finalized=False)
    assert first_to_fail([aborted, outcome(1, 5, exception="RuntimeError: boom")], said=1) == 1


def test_the_launchers_word_stands_where_the_stamps_cannot_order_the_failures():
    killed = outcome(1, None, ended="killed by SIGKILL", finalized=False)  # no hook ran its end
    never = RankOutcome(2, None, None, None)  # no sidecar
    assert first_to_fail([outcome(0, 5), killed, never], said=0) == 0
    assert first_to_fail([outcome(0, 5), killed, outcome(2, None, ended="killed by SIGKILL", finalized=False)],
                         said=2) == 2
    exited = outcome(1, None, ended="exited with code 1", finalized=False)  # os._exit: why, unknown
    assert first_to_fail([outcome(0, 5), exited], said=0) == 0
    two_hosts = [outcome(0, 5, host="node1"), outcome(1, 9, host="node2")]  # two clocks
    assert first_to_fail(two_hosts, said=1) == 1
    tie = [outcome(0, 5), outcome(1, 5)]
    assert first_to_fail(tie, said=1) == 1
    # a rank that finished well is not a failure, however early it ended
    fine = outcome(0, 1, ended=None)
    assert first_to_fail([fine, outcome(1, 9)], said=None) == 1
    assert first_to_fail([fine], said=None) is None
