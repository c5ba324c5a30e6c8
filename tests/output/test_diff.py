"""Two real captures compared per kernel, through the model, the text and JSON renderings, and `proton-tui diff`."""

from __future__ import annotations

import json
import subprocess

import pytest
import typer
from typer.testing import CliRunner

from proton_tui.cli.diff import register
from proton_tui.hatchet import load_profile
from proton_tui.output.diff import DIFF_NAME_WIDTH, DiffError, diff_json, diff_profiles, diff_text
from tests.helpers import CLI, capture_path, kernel, scope

FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
READABLE_FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
                 "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
SHORT_FILL = "vectorized_elementwise_kernel<…, FillFunctor<…>, …>"
AUTO, FAIL = str(capture_path("vecadd_auto")), str(capture_path("vecadd_fail"))
MARKUP = "[bold red]x[/]"
BAD_FILES = ("missing", "cut", "cycles")  # no such file, truncated JSON, cycles against ns


def cycles_capture() -> list:
    """A capture of instrumented regions: cycles, no time."""
    region = {"frame": {"name": "add_kernel", "type": "function"},
              "metrics": {"cycles": 5000, "count": 1, "device_id": "0", "device_type": "CUDA"}, "children": []}
    return [scope("ROOT", region), {}]


def vecadd_diff():
    return diff_profiles(load_profile(AUTO), load_profile(FAIL))


def test_vecadd_auto_against_fail_per_kernel():
    comparison = vecadd_diff()
    by_name = {k.name: k for k in comparison.kernels}
    add = by_name["add_kernel"]
    assert (add.value_a, add.value_b, add.launches_a, add.launches_b) == (46112, 16064, 20, 5)
    assert add.delta == 16064 - 46112 and add.ratio == pytest.approx(16064 / 46112) and add.status == "both"
    fill = by_name[FILL]
    assert (fill.status, fill.value_a, fill.value_b, fill.delta, fill.ratio) == ("new", None, 1920, 1920, None)
    assert (fill.launches_a, fill.launches_b) == (0, 1)
    assert [k.status for k in comparison.kernels].count("both") == 5 and len(comparison.kernels) == 6
    assert (comparison.a.total, comparison.b.total, comparison.delta) == (67328, 39104, 39104 - 67328)


def test_sorted_by_absolute_delta_largest_first():
    deltas = [abs(k.delta) for k in vecadd_diff().kernels]
    assert deltas == sorted(deltas, reverse=True)
    assert [k.name for k in vecadd_diff().kernels[:2]] == ["add_kernel", FILL]  # -30048 ns, then +1920 ns


def test_swapped_captures_make_the_new_kernel_gone():
    comparison = diff_profiles(load_profile(FAIL), load_profile(AUTO))
    fill = next(k for k in comparison.kernels if k.name == FILL)
    assert (fill.status, fill.value_a, fill.value_b, fill.delta) == ("gone", 1920, None, -1920)
    assert comparison.count("gone") == 1 and comparison.count("new") == 0


def test_ns_against_cycles_is_refused(write_capture):
    cycles = load_profile(write_capture(cycles_capture(), name="cycles.hatchet"))
    with pytest.raises(DiffError) as caught:
        diff_profiles(load_profile(AUTO), cycles)
    message = str(caught.value)
    assert "\n" not in message and AUTO in message and str(cycles.path) in message and "cycles" in message


def test_empty_capture_compares_in_the_other_unit():
    comparison = diff_profiles(load_profile(capture_path("vecadd_instr")), load_profile(AUTO))
    assert comparison.unit == "ns" and {k.status for k in comparison.kernels} == {"new"}
    assert comparison.ratio is None and comparison.delta == 67328


def test_text_is_aligned_with_totals_and_full_names():
    text = diff_text(vecadd_diff())
    lines = text.splitlines()
    assert lines[:3] == [f"A: {AUTO}", f"B: {FAIL}", "1 new, 0 gone, 5 in both"]
    header, total, add, fill = lines[3:7]
    assert header.split() == ["kernel", "time", "A", "time", "B", "delta", "ratio", "launches", "A", "launches", "B"]
    assert total.split() == ["(total)", "67.33", "µs", "39.10", "µs", "-28.22", "µs", "0.58x", "26", "12"]
    assert add.split() == ["add_kernel", "46.11", "µs", "16.06", "µs", "-30.05", "µs", "0.35x", "20", "5"]
    assert fill.split() == [FILL, "1.92", "µs", "+1.92", "µs", "new", "1"]
    time_a = header.index("time A") + len("time A")
    for line in lines[4:]:  # the numbers aligned under their titles, after the kernel column
        if len(line.split("  ")[0]) <= DIFF_NAME_WIDTH:
            assert line[time_a - 1] != " " and line[time_a:time_a + 2] == "  ", line
    longest = max((k.name for k in load_profile(AUTO).kernel_stats()), key=len)
    assert len(longest) > DIFF_NAME_WIDTH and any(line.startswith(longest + "  ") for line in lines)  # never cut


def test_limit_keeps_the_largest_changes():
    text = diff_text(vecadd_diff(), limit=1)
    assert text.splitlines()[-2:][0].startswith("add_kernel  ") and text.endswith("(+5 more kernels)\n")
    document = diff_json(vecadd_diff(), limit=1)
    assert [k["name"] for k in document["kernels"]] == ["add_kernel"] and document["more_kernels"] == 5


def test_json_document_shape():
    document = json.loads(json.dumps(diff_json(vecadd_diff())))
    assert set(document) == {"schema", "unit", "a", "b", "delta", "ratio", "new", "gone", "kernels", "more_kernels"}
    assert document["schema"] == "proton-tui/1"
    assert document["unit"] == "ns" and (document["new"], document["gone"], document["more_kernels"]) == (1, 0, 0)
    assert document["a"] == {"file": AUTO, "scope": None, "total": 67328, "kernel_launches": 26, "distinct_kernels": 5}
    assert document["b"]["total"] == 39104 and document["b"]["distinct_kernels"] == 6
    assert document["kernels"][0] == {
        "name": "add_kernel", "readable_name": "add_kernel", "short_name": "add_kernel", "full_name": "add_kernel",
        "status": "both", "value_a": 46112, "value_b": 16064, "delta": -30048,
        "ratio": pytest.approx(0.34837, abs=1e-5), "launches_a": 20, "launches_b": 5,
    }
    assert document["kernels"][1]["status"] == "new" and document["kernels"][1]["value_a"] is None


# ---- the command, registered on a bare Typer app (no dependence on cli.py's wiring) ------------------------------


def bare_app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """A group, so that `diff` stays a subcommand."""

    register(app)
    return app


def test_registered_command_prints_text_and_json():
    runner = CliRunner()
    text = runner.invoke(bare_app(), ["diff", AUTO, FAIL, "--limit", "2"])
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[5].startswith("add_kernel  ") and "(+4 more kernels)" in text.stdout
    as_json = runner.invoke(bare_app(), ["diff", AUTO, FAIL, "--json", "--exclude", "^add_kernel$"])
    assert as_json.exit_code == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    assert "add_kernel" not in [k["name"] for k in document["kernels"]] and document["kernels"][0]["name"] == FILL


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["/nonexistent/a.hatchet", FAIL], "/nonexistent/a.hatchet: no such file"),
        ([AUTO, FAIL, "--include", "("], "--include '(' is not a valid regular expression"),
        ([AUTO, FAIL, "--exclude", "[x"], "--exclude '[x' is not a valid regular expression"),
        ([AUTO, FAIL, "--plain", "--json"], "exclusive"),
    ],
)
def test_registered_command_errors_are_one_line_exit_2(args, fragment):
    result = CliRunner().invoke(bare_app(), ["diff", *args])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("proton-tui: error: ") and fragment in result.stderr
    assert result.stderr.count("\n") == 1


# ---- the installed console script ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def console(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """`proton-tui diff` through the installed console script, every case started at once (each start takes about a
    second); skipped while cli.py does not register `diff` yet."""
    folder = tmp_path_factory.mktemp("diff")
    files = {
        "markup_a": [scope("ROOT", kernel(MARKUP, 100)), {}],
        "markup_b": [scope("ROOT", kernel(MARKUP, 300)), {}],
        "cycles": cycles_capture(),
    }
    for stem, content in files.items():
        (folder / f"{stem}.hatchet").write_text(json.dumps(content))
    (folder / "cut.hatchet").write_text('[{"frame": {"name": "ROOT"')
    cases = {
        "help": ["--help"],
        "text": [AUTO, FAIL],
        "json": [AUTO, FAIL, "--json"],
        "raw": [AUTO, FAIL, "--raw-names"],
        "markup": [str(folder / "markup_a.hatchet"), str(folder / "markup_b.hatchet"), "--plain"],
        **{bad: [AUTO, str(folder / f"{bad}.hatchet")] for bad in BAD_FILES},
    }
    started = {
        case: subprocess.Popen([CLI, "diff", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        for case, args in cases.items()
    }
    results = {}
    for case, process in started.items():
        stdout, stderr = process.communicate(timeout=60)
        results[case] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return results


def test_console_script_diff_text_and_json(console):
    text = console["text"]
    assert text.returncode == 0 and text.stderr == ""
    assert text.stdout.splitlines()[5].split()[0] == "add_kernel"
    assert SHORT_FILL in text.stdout and READABLE_FILL not in text.stdout and FILL not in text.stdout  # short first
    assert FILL in console["raw"].stdout and READABLE_FILL not in console["raw"].stdout
    document = json.loads(console["json"].stdout)
    assert document["kernels"][0]["delta"] == -30048 and document["new"] == 1
    fill = next(kernel for kernel in document["kernels"] if kernel["name"] == FILL)
    assert fill["readable_name"] == fill["full_name"] == READABLE_FILL  # JSON carries every form
    assert fill["short_name"] == SHORT_FILL


def test_console_script_prints_markup_like_names_as_written(console):
    row = console["markup"].stdout.splitlines()[5]
    assert row.startswith(MARKUP + "  ")
    assert row.removeprefix(MARKUP).split() == ["100", "ns", "300", "ns", "+200", "ns", "3.00x", "1", "1"]


@pytest.mark.parametrize("bad", BAD_FILES)
def test_console_script_bad_input_is_one_line_exit_2(bad, console):
    result = console[bad]
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("proton-tui: error: ") and result.stderr.count("\n") == 1
    assert f"{bad}.hatchet" in result.stderr and "Traceback" not in result.stderr


def test_launches_a_cycle_capture_does_not_record_are_null_and_a_dash():
    path = str(capture_path("instr_vecadd_3.7.1"))
    comparison = diff_profiles(load_profile(path), load_profile(path))
    assert {(kernel.launches_a, kernel.launches_b) for kernel in comparison.kernels} == {(None, None)}
    document = diff_json(comparison)
    assert document["a"]["kernel_launches"] is None and document["kernels"][0]["launches_a"] is None
    rows = diff_text(comparison).splitlines()
    total = next(line for line in rows if line.startswith("(total)"))
    assert total.split()[-2:] == ["—", "—"]


def test_a_side_with_no_kernel_is_said_in_the_counts_line():
    empty, auto = load_profile(capture_path("vecadd_instr")), load_profile(AUTO)
    assert diff_text(diff_profiles(auto, empty)).splitlines()[2] == \
        "0 new, 5 gone, 0 in both; B records no kernel: every kernel of A is gone"
    assert diff_text(diff_profiles(empty, auto)).splitlines()[2] == \
        "5 new, 0 gone, 0 in both; A records no kernel: every kernel of B is new"
    assert diff_text(diff_profiles(empty, empty)).splitlines()[2] == \
        "0 new, 0 gone, 0 in both; neither A nor B records a kernel"
