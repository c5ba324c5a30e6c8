"""Two scopes of one real capture compared per kernel: `proton-tui diff FILE:SCOPE FILE:SCOPE`, the scope found by
name or path, and the rows checked against sums taken straight from the capture's JSON tree."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from proton_tui.hatchet import load_profile
from proton_tui.hatchet.scope import ScopeError, find_scope, split_target, within
from tests.helpers import capture_path
from tests.output.test_diff import bare_app

GPT2 = capture_path("gpt2_shadow")  # ROOT > step > forward, backward, optimizer > kernels


def kernels_under(path: list[str]) -> dict[str, tuple[int, int]]:
    """{kernel name: (time in ns, launches)} summed over the leaves under the node at `path` (names from the top
    level), read from the capture's JSON with no help from proton-tui."""
    node = json.loads(GPT2.read_text())[0]
    for name in path:
        (node,) = [child for child in node["children"] if child["frame"]["name"] == name]
    sums: dict[str, tuple[int, int]] = {}

    def walk(item: dict) -> None:
        if "time (ns)" in item["metrics"] and not item["children"]:
            time, count = sums.get(item["frame"]["name"], (0, 0))
            sums[item["frame"]["name"]] = (time + item["metrics"]["time (ns)"], count + item["metrics"]["count"])
        for child in item["children"]:
            walk(child)

    walk(node)
    return sums


def diff_document(*args: str) -> dict:
    result = CliRunner().invoke(bare_app(), ["diff", *args, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_diff_of_two_scopes_of_one_capture_sums_each_subtree_alone():
    document = diff_document(f"{GPT2}:step/forward", f"{GPT2}:step/backward")
    forward, backward = kernels_under(["step", "forward"]), kernels_under(["step", "backward"])
    rows = {k["name"]: (k["value_a"], k["value_b"], k["launches_a"], k["launches_b"], k["status"])
            for k in document["kernels"]}
    assert rows == {
        name: (forward.get(name, (None,))[0], backward.get(name, (None,))[0],
               forward.get(name, (0, 0))[1], backward.get(name, (0, 0))[1],
               "both" if name in forward and name in backward else "gone" if name in forward else "new")
        for name in forward.keys() | backward.keys()
    }
    assert (document["a"]["scope"], document["b"]["scope"]) == ("step/forward", "step/backward")
    assert document["a"]["file"] == document["b"]["file"] == str(GPT2)
    assert document["a"]["total"] == sum(time for time, _ in forward.values()) == 10224437
    assert document["b"]["kernel_launches"] == sum(count for _, count in backward.values()) == 822
    assert (document["new"], document["gone"]) == (21, 17)  # both sides hold kernels of their own
    assert document["delta"] == document["b"]["total"] - document["a"]["total"]


def test_a_scope_is_named_by_its_name_alone_when_one_frame_has_it():
    assert diff_document(f"{GPT2}:optimizer", f"{GPT2}:step/optimizer")["kernels"] == \
        diff_document(f"{GPT2}:step/optimizer", f"{GPT2}:step/optimizer")["kernels"]


def test_text_names_the_scope_of_each_side():
    result = CliRunner().invoke(bare_app(), ["diff", f"{GPT2}:forward", str(GPT2), "--limit", "1"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[:2] == [f"A: {GPT2}, scope step/forward", f"B: {GPT2}"]
    assert diff_document(str(GPT2), str(GPT2))["a"]["scope"] is None  # a whole file names no scope


@pytest.mark.parametrize("scope, fragment", [
    ("warmup", f"{GPT2}: no frame is named 'warmup'"),
    ("backward/forward", "no frame is named 'backward/forward'"),  # forward is not under backward
    ("", "the scope '' names no frame"),
])
def test_a_scope_that_names_no_frame_is_one_line_exit_2(scope, fragment):
    result = CliRunner().invoke(bare_app(), ["diff", f"{GPT2}:{scope}", str(GPT2)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("proton-tui: error: ") and fragment in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_scope_that_names_several_frames_says_how_many_and_their_paths():
    multigpu = capture_path("multigpu")  # add_kernel under both gpu0 and gpu1
    result = CliRunner().invoke(bare_app(), ["diff", str(multigpu), f"{multigpu}:add_kernel", "--json"])
    assert result.exit_code == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "'add_kernel' matches 2 frames (gpu0/add_kernel, gpu1/add_kernel): name one by its path" in result.stderr
    document = diff_document(f"{multigpu}:gpu0/add_kernel", f"{multigpu}:gpu1/add_kernel")
    assert [k["status"] for k in document["kernels"]] == ["both"]


def test_a_path_holding_a_colon_opens_as_a_file(tmp_path):
    """A file whose path holds ':' is that file; a scope follows the last ':' whose left part is a file."""
    odd = shutil.copy(GPT2, tmp_path / "run:1.hatchet")
    assert split_target(str(odd)) == (odd, None)
    assert split_target(f"{odd}:step/forward") == (odd, "step/forward")
    assert split_target(f"{odd}:a:b") == (odd, "a:b")  # a scope's name may hold ':' too
    document = diff_document(str(odd), f"{odd}:step")
    assert document["a"]["scope"] is None and document["b"]["scope"] == "step" and document["delta"] == 0
    shadow = shutil.copy(GPT2, tmp_path / "run:1.hatchet:step")  # a whole existing path wins over a split
    assert split_target(str(shadow)) == (shadow, None)
    assert diff_document(str(shadow), f"{odd}:step/forward")["a"]["scope"] is None


def test_the_subtree_of_a_scope_keeps_its_lineage_and_the_share_of_the_whole():
    profile = load_profile(GPT2)
    forward = within(profile, "forward")
    assert forward.names[:3] == ["ROOT", "step", "forward"] and forward.inclusive[1] == forward.total == 10224437
    assert forward.percent(forward.total) == pytest.approx(100 * 10224437 / 31097204)
    assert within(profile, None) is profile
    assert find_scope(profile, "step/forward") == find_scope(profile, "forward")
    with pytest.raises(ScopeError):
        find_scope(profile, "step/forward/x")


def test_a_region_inside_a_kernel_is_timed_on_its_own():
    """An instrumentation capture's region: the kernel above it keeps no value of its own in the subtree."""
    profile = load_profile(capture_path("instr_scopes_tree"))  # k_scoped > kernel (153505 cycles) > load, …
    load = within(profile, "load")
    assert [(k.name, k.value) for k in load.kernel_stats()] == [("load", 30121)] and load.total == 30121
    assert [(k.name, k.value) for k in within(profile, "kernel").kernel_stats()] == [("kernel", 153505)]


def test_the_first_step_of_a_compiled_model_against_a_later_one():
    """A timm resnet18, torch.compile'd, three steps in scopes step0..step2, captured on an H200 through
    `run -- python timm_train.py`: step0 holds the autotuner's fill kernel, which step2 no longer launches."""
    import subprocess

    import orjson as _orjson

    from tests.helpers import CLI, FIXTURES

    capture = FIXTURES / "timm_resnet18_steps.hatchet"
    done = subprocess.run([CLI, "diff", f"{capture}:step0", f"{capture}:step2", "--json"], capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    document = _orjson.loads(done.stdout)
    fill = [row for row in document["kernels"] if row["short_name"].endswith("FillFunctor<int>, …>")]
    assert fill and fill[0]["status"] == "gone" and fill[0]["launches_a"] == 15448


def test_a_target_s_file_named_dash_is_standard_input_only_when_written_so(tmp_path, monkeypatch):
    from proton_tui.hatchet.source import STDIN, file_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_text("{}")
    assert split_target("-") == (STDIN, None)
    assert split_target("./-") == (tmp_path / "-", None)
    assert split_target("./-:step") == (tmp_path / "-", "step")
    assert split_target("-", file_path) == (tmp_path / "-", None)  # typed in the TUI: always a file
