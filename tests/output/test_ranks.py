"""A rank set: a folder of one capture per rank, the ranks from their sidecars, their names or their order; every
number equal to what each rank's capture says alone."""

from __future__ import annotations

import shutil
import subprocess

import msgspec
import orjson
import pytest

from proton_tui.hatchet import open_capture
from proton_tui.output.ranks import RankSetError, open_rank_set
from proton_tui.records import RankRecord
from tests.helpers import CLI, FIXTURES


def ranks_folder(tmp_path, *captures: str, sidecars: bool = False):
    folder = tmp_path / "run"
    folder.mkdir()
    for number, name in enumerate(captures):
        shutil.copy(FIXTURES / name, folder / f"job.rank{number}.hatchet")
        if sidecars:
            record = RankRecord(stem=f"job.rank{number}", rank=len(captures) - 1 - number, host=f"node{number}",
                                gpu_index=0, gpu_uuid=f"GPU-{number}")
            (folder / f"job.rank{number}.sidecar.json").write_bytes(msgspec.json.encode(record))
    return folder


def test_the_numbers_are_each_ranks_own(tmp_path):
    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet")
    rank_set = open_rank_set([folder])
    assert [rank.rank for rank in rank_set.ranks] == [0, 1] and rank_set.ranks[0].source == "file name"
    alone = [open_capture(folder / f"job.rank{number}.hatchet") for number in (0, 1)]
    assert [rank.profile.total for rank in rank_set.ranks] == [profile.total for profile in alone]
    for kernel in rank_set.kernels():
        for number, value in enumerate(kernel.values):
            own = {stats.name: stats.value for stats in alone[number].kernel_stats()}
            assert value == own.get(kernel.name)
    assert rank_set.flagged(rank_set.ranks[0]) and not rank_set.flagged(rank_set.ranks[1])


def test_ranks_come_from_the_sidecars_first(tmp_path):
    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet", sidecars=True)
    rank_set = open_rank_set([folder])
    assert rank_set.ranks[0].source == "sidecar"
    assert [(rank.rank, rank.host) for rank in rank_set.ranks] == [(0, "node1"), (1, "node0")]


def test_view_of_the_folder_as_text_and_json(tmp_path):
    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet")
    text = subprocess.run([CLI, "view", str(folder), "--plain"], capture_output=True, text=True, timeout=60)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("2 ranks (ranks from the file name)  median GPU time ")
    assert lines[2].split()[0] == "0" and lines[2].endswith("SLOW")
    document = orjson.loads(subprocess.run([CLI, "view", str(folder), "--json"], capture_output=True,
                                           timeout=60).stdout)
    assert document["kind"] == "rank set" and [rank["rank"] for rank in document["ranks"]] == [0, 1]
    assert document["ranks"][0]["total"] == open_capture(folder / "job.rank0.hatchet").total


def test_a_rank_twice_or_an_empty_folder_is_refused(tmp_path):
    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet")
    shutil.copy(FIXTURES / "vecadd_fail.hatchet", folder / "other.rank0.hatchet")
    with pytest.raises(RankSetError, match="rank 0 has more than one capture"):
        open_rank_set([folder])
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run([CLI, "view", str(empty), "--plain"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("proton-tui: error: ") and "no Proton capture" in done.stderr
