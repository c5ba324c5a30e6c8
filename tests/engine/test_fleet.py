"""A fleet: box checks and doctor runs of several machines written into one shared folder, never over each other,
then viewed as one report: every GPU of every node flagged against the fleet's median with its likely cause, the
doctors of two Triton versions side by side."""

from __future__ import annotations

import os
import subprocess

import orjson
import pytest

from proton_tui.records import read_check, read_doctor, write_fleet_report
from tests.helpers import CLI, FIXTURES, on_a_terminal

FLEET = FIXTURES / "fleet"
STAMP = "20261203-070341"


def node_check(folder, host: str, scale: float = 1.0, process: dict | None = None) -> None:
    """The H200's recorded check.json as another node's: its GB/s scaled, another process on its GPU if given."""
    record = orjson.loads((FLEET / "h200-check.json").read_bytes())
    record["host"] = host
    for row in record["rows"]:
        row["gbps"] = row["capture_gbps"] = row["gbps"] * scale
        if process is not None:
            row["readings"]["after"]["processes"] = [process]
    (folder / f"check-{host}-{STAMP}.json").write_bytes(orjson.dumps(record))


def view(folder, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, "view", str(folder), *flags], capture_output=True, text=True, timeout=60)


def test_three_nodes_the_slow_one_flagged_against_the_fleet_with_its_cause(tmp_path):
    node_check(tmp_path, "node-a")
    node_check(tmp_path, "node-b", 0.7, {"pid": 4242, "name": "/usr/bin/python3", "used_memory_bytes": 2**30})
    node_check(tmp_path, "node-c", 1.01)
    done = view(tmp_path, "--plain")
    assert done.returncode == 1, done.stderr  # a GPU of the fleet is flagged
    lines = done.stdout.splitlines()
    table = [line for line in lines if "NVIDIA H200" in line]
    (slow,) = [line for line in table if line.startswith("node-b ")]
    assert "SLOW" in slow and "0.70x" in slow and "other process on the GPU: pid 4242 (python3)" in slow
    assert len(table) == 3 and not any("SLOW" in line for line in table if not line.startswith("node-b "))
    median = 4396.903715907141
    assert f"fleet median {median:.1f} GB/s over 3 GPUs" in done.stdout
    assert "node-b GPU 0: flagged: " in done.stdout and "fleet: FAIL: 3 GPUs, 0 failed, 1 flagged" in done.stdout
    as_json = orjson.loads(view(tmp_path, "--json").stdout)
    assert [(gpu["host"], gpu["flagged"]) for gpu in as_json["gpus"]] == [
        ("node-a", False), ("node-b", True), ("node-c", False)]
    assert as_json["median_gbps"] == median and as_json["exit_code"] == 1
    assert as_json["gpus"][1]["likely_cause"] == "other process on the GPU: pid 4242 (python3)"
    # each node's own report is unchanged: flagged against its own GPUs, it flagged none
    assert not any(row.flagged for row in read_check(tmp_path / f"check-node-b-{STAMP}.json").rows)


def test_doctors_of_two_triton_versions_side_by_side(tmp_path):
    for host, triton in (("node-a", "360"), ("node-b", "390")):
        (tmp_path / f"doctor-{host}-{STAMP}.json").write_bytes((FLEET / f"h200-doctor-triton{triton}.json").read_bytes())
    done = view(tmp_path, "--plain")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "node-a  3.6.0       24       0        8  PASS: 24 of 24 cells work as Triton 3.6.0 promises" in text
    assert "node-b  3.9.0       30       0       30  PASS: 30 of 30 cells work as Triton 3.9.0 promises" in text
    (header,) = [line for line in text.splitlines() if line.startswith("CELL ")]
    assert "node-a (3.6.0)" in header and "node-b (3.9.0)" in header
    # a cell only 3.9.0 has: "-" under 3.6.0
    (msgpack,) = [line for line in text.splitlines() if line.startswith("cupti/shadow/hatchet_msgpack/env ")]
    assert msgpack.split()[1:] == ["-", "ok"]
    cells = orjson.loads(view(tmp_path, "--json").stdout)["doctors"]
    assert [len(doctor["cells"]) for doctor in cells] == [32, 60]


def test_reports_of_one_node_never_overwrite_a_file_already_there(tmp_path):
    record = read_doctor(FLEET / "h200-doctor-triton390.json")
    record.host = "gpu/node 7"  # a host name as a file name can hold it
    first = write_fleet_report(tmp_path, record)
    assert first.name.startswith("doctor-gpu_node_7-") and first.suffix == ".json"
    mine = first.read_bytes()
    taken = tmp_path / first.name.replace("doctor-", "check-")
    taken.write_text("a file of the user's")
    copies = [write_fleet_report(tmp_path, record) for _ in range(3)]
    assert first.read_bytes() == mine and taken.read_text() == "a file of the user's"
    assert len({first, *copies}) == 4 and all(read_doctor(path).host == "gpu/node 7" for path in copies)
    assert not list(tmp_path.glob(".*.partial"))


def test_a_broken_report_or_an_empty_folder_is_one_line(tmp_path):
    (tmp_path / f"check-node-a-{STAMP}.json").write_text('{"schema": "proton-tui/1"')
    done = view(tmp_path, "--plain")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and f"check-node-a-{STAMP}.json" in done.stderr
    assert "Traceback" not in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = view(empty, "--plain")
    assert done.returncode == 2 and done.stderr.count("\n") == 1


@pytest.mark.slow
def test_a_cpu_check_and_a_doctor_run_write_their_reports_into_the_fleet_folder(tmp_path):
    """The real commands, as each node's task would run them: the report on stdout and a copy in the shared folder
    named for the host; `view` of the folder then shows both."""
    fleet = tmp_path / "fleet"
    env = {**os.environ, "COLUMNS": "200"}
    check = subprocess.run([CLI, "check", "--cpu", "--json", "--output", str(tmp_path / "runs"), "--report-dir",
                            str(fleet)], capture_output=True, text=True, timeout=180, env=env)
    assert check.returncode == 0, check.stderr
    (written,) = fleet.glob("check-*.json")
    assert f"report written to {written}" in check.stderr
    assert orjson.loads(written.read_bytes()) == orjson.loads(check.stdout)
    assert read_check(written).host == os.uname().nodename
    doctor = subprocess.run([CLI, "doctor", "--json", "--output", str(tmp_path / "runs"), "--report-dir",
                             str(fleet)], capture_output=True, text=True, timeout=180, env=env)
    assert doctor.returncode == 3, doctor.stderr  # no GPU: profiling not checked
    (doctor_copy,) = fleet.glob("doctor-*.json")
    assert read_doctor(doctor_copy).host == os.uname().nodename
    done = view(fleet, "--plain")
    assert done.returncode == 0, done.stderr
    assert "fleet: " in done.stdout and "1 box check and 1 doctor run from 1 node" in done.stdout


def test_a_report_folder_that_is_a_file_is_refused_before_anything_runs(tmp_path):
    taken = tmp_path / "fleet"
    taken.write_text("mine")
    done = subprocess.run([CLI, "check", "--cpu", "--report-dir", str(taken)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("proton-tui: error: --report-dir ")
    assert taken.read_text() == "mine" and not (tmp_path / "proton-runs").exists()


def test_a_fleet_folder_on_a_terminal_is_shown_as_its_report(tmp_path):
    """`view FOLDER` typed at a terminal: a fleet's folder is its report in words, not a rank set's viewer."""
    node_check(tmp_path, "node-a")
    assert "fleet: PASS: 1 GPU, 0 failed, 0 flagged" in on_a_terminal("view", str(tmp_path))
