"""What launchers print of a rank that died, read by LauncherReport; exit statuses as words."""

from __future__ import annotations

from proton_tui.engine.ranks import LauncherReport, ended_text

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
