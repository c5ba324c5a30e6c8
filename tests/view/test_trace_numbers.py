"""Every number a trace's views show, checked against the values recorded in `tests/fixtures/trace_numbers/`: the
kernel tree of the trace, each lane's busy time, idle time and gaps, the warp timeline's launches, each scope's
count, min, median, p99 and max and its stragglers, the `--plain` text and the `--json` document, on the real
traces of `tests/fixtures/` and on traces made by the project's generators. A change to how traces are read or
summed must leave every one of them equal (floats to the last bit, integers exactly).

Record them again (only when a view is meant to change): `python tests/view/test_trace_numbers.py`."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import CLI, FIXTURES, REPO

EXPECTED = FIXTURES / "trace_numbers"
REAL = ["vecadd_trace.chrome_trace", "triton371_vecadd_trace.chrome_trace", "triton390_two_streams.chrome_trace",
        "instr_scopes_trace.chrome_trace", "instr_vecadd_trace_3.7.1.chrome_trace",
        "instr_vecadd_warps02_trace_3.6.0.chrome_trace"]
# the generators' traces, small enough for a test: (script, its arguments)
GENERATED = {"instr_48x3": ("make_instr_trace.py", ["--ctas", "48", "--launches", "3", "--seed", "5"]),
             "instr_200x2": ("make_instr_trace.py", ["--ctas", "200", "--launches", "2", "--seed", "9"]),
             "kernels_3000": ("make_trace.py", ["3000", "--seed", "3"])}
SM_CLOCK_KHZ = "1980000"


def generated(name: str, folder: Path) -> Path:
    script, arguments = GENERATED[name]
    folder = folder / name
    subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *arguments, "--out", str(folder)], check=True,
                   capture_output=True, timeout=120)
    (path,) = folder.glob("*.chrome_trace")
    return path


def view(path: Path, *options: str) -> str:
    done = subprocess.run([CLI, "view", str(path), *options], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout.replace(str(path.parent), "FOLDER")


def numbers(path: Path) -> dict:
    """What the views of the trace at `path` show: the tree, `--plain` and `--json` (an instrumentation trace's also
    at an SM clock)."""
    from proton_tui.hatchet import load_profile

    trace = load_profile(path).trace
    found = {"tree": trace.tree()}
    clocks = (("", ()), (" at the SM clock", ("--sm-clock-khz", SM_CLOCK_KHZ))) if trace.has_warps else (("", ()),)
    for label, options in clocks:
        found["plain" + label] = view(path, "--plain", *options).splitlines()
        document = json.loads(view(path, "--json", *options))
        found["json" + label] = document
    return found


def recorded(name: str) -> dict:
    with gzip.open(EXPECTED / f"{name}.json.gz", "rt") as file:
        return json.load(file)


def check(found: dict, expected: dict) -> None:
    assert found.keys() == expected.keys()
    for key in expected:
        assert found[key] == expected[key], f"{key} differs"
        assert json.dumps(found[key], sort_keys=True) == json.dumps(expected[key], sort_keys=True), f"{key}: a number's type or last digit differs"


@pytest.mark.parametrize("name", REAL)
def test_a_real_traces_numbers_are_the_recorded_ones(name):
    check(numbers(FIXTURES / name), recorded(Path(name).stem))


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_a_generated_traces_numbers_are_the_recorded_ones(name, tmp_path):
    check(numbers(generated(name, tmp_path)), recorded(name))


def record() -> None:
    import tempfile

    EXPECTED.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        paths = {Path(name).stem: FIXTURES / name for name in REAL}
        paths |= {name: generated(name, Path(folder)) for name in GENERATED}
        for name, path in paths.items():
            with gzip.GzipFile(EXPECTED / f"{name}.json.gz", "wb", mtime=0) as file:
                file.write(json.dumps(numbers(path), sort_keys=True).encode())
            print(name)


if __name__ == "__main__":
    record()
