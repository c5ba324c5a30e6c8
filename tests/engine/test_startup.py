"""The start-up hook in real Python processes: which process it acts in, its sidecar, a failed Proton start that
leaves the workload running, a `sitecustomize` the workload already had, the end on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from proton_tui.engine.workload import HookSettings
from proton_tui.records import read_sidecar

CLEAN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
         "PROTON_TUI_PROFILED", "PROTON_TUI_HOOK", "PYTHONPATH")


def hooked(tmp_path: Path, *, ranks: bool = False, profile: bool = False, extra: dict | None = None,
           user_path: Path | None = None) -> dict[str, str]:
    settings = HookSettings(tmp_path, "job", ranks, profile)
    settings.install()
    environ = {key: value for key, value in os.environ.items() if key not in CLEAN}
    if user_path is not None:
        environ["PYTHONPATH"] = str(user_path)
    return {**environ, **settings.env(environ), **(extra or {})}


def run(env: dict[str, str], code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_one_process_gets_a_sidecar_and_its_children_pass(tmp_path):
    code = """\
        import os, subprocess, sys
        print("parent", os.environ.get("PROTON_TUI_PROFILED") == str(os.getpid()))
        subprocess.run([sys.executable, "-c", "print('child ran')"], check=True)
    """
    done = run(hooked(tmp_path), code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["parent True", "child ran"]
    (sidecar,) = tmp_path.glob("*.sidecar.json")  # the child made none
    record = read_sidecar(sidecar)
    assert sidecar.name == "job.sidecar.json" and record.stem == "job" and record.rank is None
    assert record.finalized and record.pid > 0 and not record.profiling


def test_under_a_launcher_only_a_process_with_a_rank_acts(tmp_path):
    code = "print('no rank here')"
    assert run(hooked(tmp_path, ranks=True), code, tmp_path).stdout == "no rank here\n"
    assert not list(tmp_path.glob("*.sidecar.json"))
    done = run(hooked(tmp_path, ranks=True, extra={"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1"}),
               "print('rank three')", tmp_path)
    assert done.stdout == ""  # it went to the rank's log
    assert (tmp_path / "job.rank3.log").read_text() == "rank three\n"
    record = read_sidecar(tmp_path / "job.rank3.sidecar.json")
    assert (record.rank, record.world_size, record.local_rank, record.rank_variable) == (3, 4, 1, "SLURM_PROCID")


def test_a_proton_that_cannot_start_leaves_the_workload_running(tmp_path):
    """On a machine without a GPU Triton has no driver: the hook says so in one line and in the sidecar."""
    done = run(hooked(tmp_path, profile=True), "print('workload ran')", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "workload ran\n"
    record = read_sidecar(tmp_path / "job.sidecar.json")
    assert not record.profiling and record.proton_error and "active drivers" in record.proton_error
    assert record.triton_version
    assert f"proton-tui: Proton did not start in pid {record.pid}: " in done.stderr


def test_the_workloads_own_sitecustomize_still_runs(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "sitecustomize.py").write_text("import builtins\nbuiltins.USER_SITE_RAN = True\n")
    done = run(hooked(tmp_path, user_path=user), "print(USER_SITE_RAN)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"
    assert (tmp_path / "job.sidecar.json").exists()


def test_sigterm_ends_the_process_as_it_would_after_the_hooks_end(tmp_path):
    code = """\
        import time
        print("ready", flush=True)
        time.sleep(60)
    """
    env = hooked(tmp_path)
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == -signal.SIGTERM
    record = read_sidecar(tmp_path / "job.sidecar.json")
    assert record.finalized and record.finished_ns >= record.started_ns
    assert time.time_ns() >= record.finished_ns


def test_a_sigterm_during_the_hooks_end_at_exit_waits_for_it_then_ends_the_process(tmp_path):
    """A launcher's SIGTERM that comes while the hook's end runs at exit (here: sent from inside it, when the end
    asks the workload's torch whether it used a GPU) lets the end finish, then ends the process as SIGTERM does."""
    code = """\
        import os, signal, sys, types

        class Cuda:
            @staticmethod
            def is_initialized():
                os.kill(os.getpid(), signal.SIGTERM)
                return False

        sys.modules["torch"] = types.SimpleNamespace(__version__="0.0", cuda=Cuda)
        print("exiting", flush=True)
    """
    done = run(hooked(tmp_path), code, tmp_path)
    assert done.stdout == "exiting\n" and done.returncode == -signal.SIGTERM, done.stderr
    record = read_sidecar(tmp_path / "job.sidecar.json")
    assert record.finalized and record.finished_ns >= record.started_ns


def torch_that_signals(*signals: str, then: str = "") -> str:
    """A workload whose `torch` sends the process `signals` when the hook's end asks whether it used a GPU."""
    return textwrap.dedent(f"""\
        import os, signal, sys, time, types

        class Cuda:
            @staticmethod
            def is_initialized():
                for name in {list(signals)!r}:
                    os.kill(os.getpid(), getattr(signal, name))
                {then or "pass"}
                return False

        sys.modules["torch"] = types.SimpleNamespace(__version__="0.0", cuda=Cuda)
    """)


def test_a_sigint_during_the_end_a_sigterm_began_leaves_the_sigterm_to_end_the_process(tmp_path):
    code = torch_that_signals("SIGINT") + 'print("ready", flush=True)\ntime.sleep(60)\n'
    process = subprocess.Popen([sys.executable, "-c", code], env=hooked(tmp_path), cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == -signal.SIGTERM, process.stderr.read()
    assert read_sidecar(tmp_path / "job.sidecar.json").finalized


def test_a_second_signal_while_the_end_hangs_ends_the_process_at_once(tmp_path):
    code = torch_that_signals("SIGTERM", "SIGTERM", then="time.sleep(60)") + 'print("exiting", flush=True)\n'
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], env=hooked(tmp_path), cwd=tmp_path, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == -signal.SIGTERM and time.monotonic() - started < 20, done.stderr
    assert not read_sidecar(tmp_path / "job.sidecar.json").finalized  # the end never came: it hung


def test_an_uncaught_exception_stamps_the_end_before_the_workloads_exit_handlers(tmp_path):
    """The workload's own `sitecustomize` replaces `sys.excepthook` without chaining (as Ubuntu's apport does), and
    its exit handler takes a second: the hook's stamp is still the moment the exception reached the top."""
    user = tmp_path / "user"
    user.mkdir()
    (user / "sitecustomize.py").write_text("import sys\nsys.excepthook = lambda *args: sys.__excepthook__(*args)\n")
    code = """\
        import atexit, time
        atexit.register(time.sleep, 1.0)
        print(time.time_ns(), flush=True)
        raise RuntimeError("boom")
    """
    done = run(hooked(tmp_path, user_path=user), code, tmp_path)
    assert done.returncode == 1 and "RuntimeError: boom" in done.stderr
    raised_ns = int(done.stdout)
    record = read_sidecar(tmp_path / "job.sidecar.json")
    assert raised_ns <= record.ending_ns < raised_ns + 500_000_000  # not after the handler's second
    assert record.finished_ns >= record.ending_ns + 1_000_000_000


def test_a_child_forked_from_the_workload_leaves_its_sidecar_alone(tmp_path):
    """A forked child inherits the hook's exit and signal handlers; ending after its parent, it writes nothing."""
    code = """\
        import os, sys, time
        if os.fork() == 0:
            time.sleep(0.5)
            with open("child_ended", "w") as out:
                out.write(str(time.time_ns()))
            sys.exit(0)
    """
    done = run(hooked(tmp_path), code, tmp_path)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 30
    while not (tmp_path / "child_ended").exists() or not (tmp_path / "child_ended").read_text():
        assert time.monotonic() < deadline, "the child never ended"
        time.sleep(0.05)
    time.sleep(0.5)  # the child's exit, which before wrote the sidecar again
    child_ended = int((tmp_path / "child_ended").read_text())
    record = read_sidecar(tmp_path / "job.sidecar.json")
    assert record.finished_ns < child_ended and record.ending_ns < child_ended
