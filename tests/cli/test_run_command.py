"""`proton-tui run -- COMMAND`: a user's own command, run by the real console script as a real process: a script, a
module, pytest, and torchrun's ranks (gloo on the CPU) with the start-up hook."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from proton_tui.records import read_run_record, read_sidecar
from tests.e2e.terminal import leftover_processes
from tests.helpers import CLI

PYTHON = sys.executable
TORCHRUN = str(Path(sys.executable).with_name("torchrun"))
DDP = textwrap.dedent("""\
    import os, signal, sys
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.ones(4) * (rank + 1)
    dist.all_reduce(x)
    print(f"step0 rank={rank} sum={x.sum().item():g}", flush=True)
    if "--kill" in sys.argv and rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    if "--raise" in sys.argv and rank == 1:
        raise RuntimeError("boom on rank 1")
    dist.barrier()
    dist.destroy_process_group()
""")


def proton_tui(tmp_path: Path, *command: str, options: tuple[str, ...] = ("--no-profile",), cwd: Path | None = None,
               timeout: float = 180) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    return subprocess.run([CLI, "run", *options, "--output", str(tmp_path / "runs"), "--", *command],
                          cwd=cwd or tmp_path, capture_output=True, text=True, timeout=timeout, env=env)


def the_run(tmp_path: Path) -> Path:
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_a_script_named_alone_runs_with_the_runs_interpreter(tmp_path):
    """`run --no-profile -- train.py a b`: no interpreter named, so --python's runs it (not the file as a program)."""
    write(tmp_path / "train.py", """\
        import sys
        print("ran by", sys.executable, "args", sys.argv[1:])
    """)
    done = proton_tui(tmp_path, "train.py", "a", "b", options=("--no-profile", "--python", PYTHON))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    record = read_run_record(the_run(tmp_path) / "run.json")
    assert record.argv[:2] == [PYTHON, "train.py"] and record.exit_code == 0
    assert f"ran by {PYTHON} args ['a', 'b']" in (the_run(tmp_path) / "stdout.log").read_text()


def test_a_script_runs_in_its_folder_with_its_arguments(tmp_path):
    write(tmp_path / "work" / "train.py", """\
        import os, sys
        print("cwd", os.getcwd(), "args", sys.argv[1:])
    """)
    done = proton_tui(tmp_path, PYTHON, "train.py", "--lr", "3", cwd=tmp_path / "work")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"cwd {tmp_path / 'work'} args ['--lr', '3']" in done.stdout
    assert "verdict: PASS: the command exited 0 (not profiled)" in done.stdout
    record = read_run_record(the_run(tmp_path) / "run.json")
    assert record.workload == "script" and record.verdict == "PASS" and record.exit_code == 0
    assert record.params.command == [PYTHON, "train.py", "--lr", "3"] and record.params.name == "train"
    assert record.params.cwd == str(tmp_path / "work")


def test_a_module_and_its_exit_status(tmp_path):
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "job.py", """\
        import sys
        print("module job ran")
        sys.exit(3)
    """)
    done = proton_tui(tmp_path, PYTHON, "-m", "pkg.job")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "module job ran" in done.stdout
    assert "verdict: command failed: the command exited with code 3" in done.stdout
    record = read_run_record(the_run(tmp_path) / "run.json")
    assert record.workload == "module" and record.params.name == "job" and record.exit_code == 3


def test_pytest_runs_as_a_command(tmp_path):
    write(tmp_path / "test_small.py", """\
        def test_one():
            assert 1 + 1 == 2
    """)
    done = proton_tui(tmp_path, "pytest", "-q", "-p", "no:cacheprovider", "test_small.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "verdict: PASS" in done.stdout
    assert read_run_record(the_run(tmp_path) / "run.json").workload == "pytest"


@pytest.mark.parametrize("command, message", [
    ((), "proton-tui: error: --: no command after it"),
    ((PYTHON, "missing.py"), "proton-tui: error: missing.py: no such script in "),
    (("missing.py",), "proton-tui: error: missing.py: no such script in "),
    (("srun", "hostname"), "proton-tui: error: srun: not installed here (not found on PATH)"),
    ((PYTHON, "-m"), f"proton-tui: error: {PYTHON} -m: no module named after it"),
])
def test_a_command_that_cannot_run_is_one_line_and_exit_2(tmp_path, command, message):
    env_path = os.environ.get("PATH", "")
    assert "srun" not in command or not any((Path(folder) / "srun").exists() for folder in env_path.split(":"))
    done = proton_tui(tmp_path, *command)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(message), line
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_torchrun_ranks_each_start_the_hook_once_and_the_launcher_never(tmp_path):
    write(tmp_path / "ddp.py", DDP)
    done = proton_tui(tmp_path, TORCHRUN, "--nproc-per-node", "2", "ddp.py")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout.splitlines()
    assert "[rank 0] step0 rank=0 sum=12" in out and "[rank 1] step0 rank=1 sum=12" in out
    assert "verdict: PASS: the command exited 0 (not profiled); 2 ranks ran" in out
    run_dir = the_run(tmp_path)
    sidecars = sorted(run_dir.glob("*.sidecar.json"))
    assert [path.name for path in sidecars] == ["ddp.rank0.sidecar.json", "ddp.rank1.sidecar.json"]
    record = read_run_record(run_dir / "run.json")
    assert record.workload == "launcher"
    for number, rank in enumerate(record.ranks):
        sidecar = read_sidecar(sidecars[number])
        assert rank.rank == sidecar.rank == number and rank.world_size == 2 and rank.local_rank == number
        assert rank.rank_variable == "RANK" and rank.finalized and not rank.profiling
        assert rank.stem == f"ddp.rank{number}" and rank.log == str(run_dir / f"ddp.rank{number}.log")
        assert "torch.distributed.run" not in " ".join(rank.argv) and "ddp.py" in rank.argv
        assert rank.torch_version and rank.pid > 0 and rank.host
    assert len({rank.pid for rank in record.ranks}) == 2
    assert (run_dir / "ddp.rank1.log").read_text().splitlines() == ["step0 rank=1 sum=12"]
    stdout_log = (run_dir / "stdout.log").read_text()
    assert "[rank 0] step0 rank=0 sum=12" in stdout_log


@pytest.mark.slow
def test_a_rank_killed_outright_is_named_and_nothing_is_left(tmp_path):
    write(tmp_path / "ddp.py", DDP)
    # as below: torchrun polls every 3 s, mostly sees both ranks gone in one poll and then names rank 0
    done = proton_tui(tmp_path, TORCHRUN, "--monitor-interval", "3", "--nproc-per-node", "2", "ddp.py", "--kill")
    assert done.returncode == 1, done.stdout + done.stderr
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("verdict: "))
    assert verdict.startswith("verdict: command failed: the command exited with code 1 (rank 1: killed by SIGKILL "
                              "(the first to fail); rank 0: "), verdict
    record = read_run_record(the_run(tmp_path) / "run.json")
    assert record.ranks[1].ended == "killed by SIGKILL" and record.ranks[1].finalized is False
    assert record.ranks[0].finalized  # it raised when rank 1's connection closed, or its launcher stopped it
    assert leftover_processes(str(tmp_path)) == []


@pytest.mark.slow
def test_a_rank_that_raises_is_named_with_its_exception_as_the_first_to_fail(tmp_path):
    # torchrun polls its ranks every 3 s here, so it mostly sees both exits in one poll and then names rank 0 as
    # its root cause; the ranks' own stamps say rank 1 raised first (rank 0 failed when rank 1's connection closed)
    write(tmp_path / "ddp.py", DDP)
    done = proton_tui(tmp_path, TORCHRUN, "--monitor-interval", "3", "--nproc-per-node", "2", "ddp.py", "--raise")
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("(rank 1: exited with code 1; raised RuntimeError: boom on rank 1 (the first to fail); rank 0: "
            in done.stdout), done.stdout
    ranks = read_run_record(the_run(tmp_path) / "run.json").ranks
    assert ranks[1].started_ns < ranks[1].ending_ns < ranks[0].ending_ns <= ranks[0].finished_ns


# --- GPU: a workload profiled for real (skipped without a GPU) ---------------------------------------------------
GPU_STEP = textwrap.dedent("""\
    import sys
    import torch
    import triton.profiler as proton
    x = torch.randn(512, 512, device="cuda")
    for step in range(2):
        with proton.scope(f"step{step}"):
            y = (x @ x).relu().sum()
    torch.cuda.synchronize()
    print("gpu step done", float(y) == float(y))
""")
GPU_RANKS = textwrap.dedent("""\
    import sys
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.randn(1024, 1024, device="cuda")
    for step in range(3):
        y = x @ x
        if rank == 1:  # the slow rank
            for _ in range(8):
                y = y @ x
        total = torch.tensor([float(y.sum())])
        dist.all_reduce(total)
    torch.cuda.synchronize()
    print(f"rank {rank} done", flush=True)
    if "--raise" in sys.argv and rank == 1:
        raise RuntimeError("rank 1 gave up")
    dist.destroy_process_group()
""")


def needs_gpu() -> None:
    from proton_tui.engine.probe import probe_interpreter

    if not probe_interpreter(PYTHON).gpu_count:
        pytest.skip("needs a CUDA or ROCm GPU with Proton; this machine has none")


def profiled(tmp_path: Path, *command: str, options: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return proton_tui(tmp_path, *command, options=options, timeout=560)


@pytest.mark.gpu
@pytest.mark.parametrize("how", ["script", "module"])
def test_gpu_a_script_is_captured_by_protons_cli_and_a_module_by_the_hook(tmp_path, how):
    needs_gpu()
    write(tmp_path / "gpustep.py", GPU_STEP)
    command = (PYTHON, "gpustep.py") if how == "script" else (PYTHON, "-m", "gpustep")
    done = profiled(tmp_path, *command)
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = the_run(tmp_path)
    capture = run_dir / "gpustep.hatchet"
    assert f"verdict: PASS: the command exited 0; capture {capture}" in done.stdout
    record = read_run_record(run_dir / "run.json")
    assert record.workload == how and record.capture == str(capture)
    assert ("triton.profiler.proton" in record.argv) == (how == "script")
    from proton_tui.hatchet import open_capture

    profile = open_capture(capture)
    assert not profile.is_empty and {"step0", "step1"} <= set(profile.names)


@pytest.mark.gpu
def test_gpu_two_ranks_on_one_gpu_each_leave_a_capture_and_a_sidecar(tmp_path):
    needs_gpu()
    write(tmp_path / "ranks.py", GPU_RANKS)
    done = profiled(tmp_path, TORCHRUN, "--nproc-per-node", "2", "ranks.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: PASS: the command exited 0; captured 2 of 2 ranks" in done.stdout
    run_dir = the_run(tmp_path)
    record = read_run_record(run_dir / "run.json")
    from proton_tui.hatchet import open_capture

    totals = []
    for number, rank in enumerate(record.ranks):
        assert rank.rank == number and rank.profiling and rank.finalized and rank.gpu_uuid
        assert rank.capture == str(run_dir / f"ranks.rank{number}.hatchet")
        totals.append(open_capture(rank.capture).total)
    assert totals[1] > totals[0]  # the slow rank's GPU time shows in its own capture


@pytest.mark.gpu
def test_gpu_a_rank_that_raises_is_named_and_the_other_still_leaves_its_capture(tmp_path):
    needs_gpu()
    write(tmp_path / "ranks.py", GPU_RANKS)
    done = profiled(tmp_path, TORCHRUN, "--nproc-per-node", "2", "ranks.py", "--raise")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "raised RuntimeError: rank 1 gave up (the first to fail)" in done.stdout, done.stdout
    assert (the_run(tmp_path) / "ranks.rank0.hatchet").is_file()
