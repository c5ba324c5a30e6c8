"""A rank set: a folder of one capture per rank, the ranks from their sidecars, their names or their order; every
number equal to what each rank's capture says alone."""

from __future__ import annotations

import shutil
import subprocess
import sys

import msgspec
import orjson
import pytest

from proton_tui.hatchet import open_capture
from proton_tui.output.ranks import RankSetError, open_rank_set
from proton_tui.records import RankRecord
from tests.helpers import CLI, FIXTURES
from tests.output.trace_format import merged_errors


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
    assert [rank.capture.total for rank in rank_set.ranks] == [profile.total for profile in alone]
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
    with pytest.raises(RankSetError, match=r"rank 0 has more than one capture \(file name\): job\.rank0\.hatchet, "
                                           r"other\.rank0\.hatchet: give one capture per rank"):
        open_rank_set([folder])
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run([CLI, "view", str(empty), "--plain"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("proton-tui: error: ") and "no Proton capture" in done.stderr


def trace_ranks(tmp_path, fixture: str, shifts_ns: tuple[int, ...]):
    folder = tmp_path / "traces"
    folder.mkdir()
    original = orjson.loads((FIXTURES / fixture).read_bytes())
    for number, shift in enumerate(shifts_ns):
        document = dict(original)
        if "baseTimeNanoseconds" in document:
            document["baseTimeNanoseconds"] += shift
        (folder / f"job.rank{number}.chrome_trace").write_bytes(orjson.dumps(document))
    return folder, original


def test_merged_traces_keep_every_event_with_flows_and_lanes_apart_and_clocks_aligned(tmp_path):
    folder, original = trace_ranks(tmp_path, "triton390_two_streams.chrome_trace", (0, 2_500_000))
    out = tmp_path / "merged.json"
    done = subprocess.run([CLI, "view", str(folder), "--export", str(out)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "clocks aligned by the traces' clock base (baseTimeNanoseconds)" in done.stdout + done.stderr
    merged = orjson.loads(out.read_bytes())
    events = merged["traceEvents"]
    inputs = {rank: (orjson.loads((folder / f"job.rank{rank}.chrome_trace").read_bytes()), f"rank {rank}")
              for rank in (0, 1)}
    assert merged_errors(merged, inputs) == []  # the format's rules; every event kept, flows apart, clocks moved
    names = {event["pid"]: event["args"]["name"] for event in events if event.get("name") == "process_name"}
    assert names == {0: "rank 0", 1000: "rank 1"}
    assert merged["baseTimeNanoseconds"] == original["baseTimeNanoseconds"]
    lanes = [lane.name for lane in open_capture(out).trace.lanes]  # opened alone, each rank's lanes told apart
    assert len(set(lanes)) == len(lanes) == 2 * len(open_capture(folder / "job.rank0.chrome_trace").trace.lanes)
    assert "rank 1 · CPU Thread 0" in lanes and "rank 0 · GPU Stream 7" in lanes


def test_a_ranks_lanes_of_one_name_in_two_of_its_processes_read_apart_on_the_ranks_timeline(tmp_path):
    """A 3.6 trace of a rank driving two GPUs (pid: the device, tid: the stream): each GPU's `stream 7` is a row of
    its own under the rank, not two rows alike."""
    from proton_tui.output.rank_timeline import rank_timeline

    folder = tmp_path / "traces"
    folder.mkdir()
    events = [{"ph": "X", "name": "k", "cat": "kernel", "pid": pid, "tid": 7, "ts": pid, "dur": 1} for pid in (0, 1)]
    for number in (0, 1):
        (folder / f"job.rank{number}.chrome_trace").write_bytes(orjson.dumps({"traceEvents": events}))
    model = rank_timeline(open_rank_set([folder]))
    for rank in (0, 1):
        rows = [row.label for row in model.rows if row.rank == rank and row.lane is not None]
        assert len(rows) == 2 and len(set(rows)) == 2, rows


def test_traces_without_a_clock_base_align_by_their_first_event(tmp_path):
    folder, original = trace_ranks(tmp_path, "vecadd_trace.chrome_trace", (0, 0))
    from proton_tui.output.ranks import merged_rank_trace

    merged, alignment = merged_rank_trace(open_rank_set([folder]))
    assert alignment == "each rank's first event"
    starts = [min(event["ts"] for event in merged["traceEvents"] if event.get("ph") == "X" and
                  event["pid"] // 1000 == rank) for rank in (0, 1)]
    assert starts == [0.0, 0.0]


@pytest.mark.parametrize("name", ["merged.csv", "merged"])
def test_a_merged_trace_named_other_than_json_is_refused(tmp_path, name):
    folder, _ = trace_ranks(tmp_path, "triton390_two_streams.chrome_trace", (0, 2_500_000))
    done = subprocess.run([CLI, "view", str(folder), "--export", str(tmp_path / name)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"{name}: the merged trace is a Chrome trace in JSON" in done.stderr and ".chrome_trace" in done.stderr
    assert not (tmp_path / name).exists()


def test_a_merged_trace_of_trees_is_refused(tmp_path):
    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet")
    done = subprocess.run([CLI, "view", str(folder), "--export", str(tmp_path / "m.json")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "needs a Chrome trace per rank" in done.stderr
    assert not (tmp_path / "m.json").exists()


def test_two_h200_ranks_name_the_slow_rank_and_the_kernel_it_loses_time_in():
    """Recorded with `run -- torchrun --nproc-per-node 2` on one H200 (gloo), rank 1 doing 16 more matmuls a step."""
    folder = FIXTURES / "ranks_h200"
    rank_set = open_rank_set([folder])
    assert [rank.source for rank in rank_set.ranks] == ["sidecar", "sidecar"]
    slow = [rank.rank for rank in rank_set.ranks if rank_set.flagged(rank)]
    assert slow == [1]
    worst = rank_set.kernels()[0]
    assert worst.name.startswith("_Z") and "Kernel2" in worst.name and rank_set.ranks[worst.slowest].rank == 1
    for rank in rank_set.ranks:
        assert rank.capture.total == open_capture(folder / f"ranks.rank{rank.rank}.hatchet").total
        assert rank.record.gpu_uuid and rank.record.world_size == 2


def test_captures_given_one_per_rank_take_their_rank_from_the_name_else_the_order(tmp_path):
    named = [tmp_path / "b.rank1.hatchet", tmp_path / "a.rank0.hatchet"]
    for path, fixture in zip(named, ("vecadd_fail.hatchet", "vecadd_hook.hatchet")):
        shutil.copy(FIXTURES / fixture, path)
    text = subprocess.run([CLI, "view", *map(str, named), "--plain"], capture_output=True, text=True, timeout=60)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("2 ranks (ranks from the file name)")
    assert text.stdout.splitlines()[2].split()[0] == "0" and text.stdout.splitlines()[2].endswith("SLOW")
    plain = [tmp_path / "second.hatchet", tmp_path / "first.hatchet"]
    for path, fixture in zip(plain, ("vecadd_hook.hatchet", "vecadd_fail.hatchet")):
        shutil.copy(FIXTURES / fixture, path)
    document = orjson.loads(subprocess.run([CLI, "view", *map(str, plain), "--json"], capture_output=True,
                                           timeout=60).stdout)
    assert document["rank_source"] == "order given"
    assert [rank["capture"] for rank in document["ranks"]] == [str(path) for path in plain]


def bad_rank_inputs(tmp_path) -> dict[str, tuple[list, str]]:
    folder = tmp_path / "folder"
    folder.mkdir()
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(FIXTURES / "vecadd_hook.hatchet", mixed / "job.rank0.hatchet")
    shutil.copy(FIXTURES / "vecadd_trace.chrome_trace", mixed / "job.rank1.chrome_trace")
    return {
        "trees and traces": ([mixed], "mix trees (.hatchet) and traces (.chrome_trace)"),
        "a missing file": ([mixed / "job.rank0.hatchet", tmp_path / "gone.hatchet"], "gone.hatchet: no such capture"),
        "a folder among files": ([mixed / "job.rank0.hatchet", folder], "a folder among the rank captures"),
    }


@pytest.mark.parametrize("case", ["trees and traces", "a missing file", "a folder among files"])
def test_bad_rank_set_input_is_one_line_and_exit_2(tmp_path, case):
    paths, said = bad_rank_inputs(tmp_path)[case]
    done = subprocess.run([CLI, "view", *map(str, paths), "--plain"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("proton-tui: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_kernels_prints_the_kernel_table_alone_and_a_flag_for_one_capture_is_refused(tmp_path):
    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet")
    full = subprocess.run([CLI, "view", str(folder), "--plain"], capture_output=True, text=True, timeout=60).stdout
    done = subprocess.run([CLI, "view", str(folder), "--kernels"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, *kernel_table = done.stdout.splitlines()
    assert first == full.splitlines()[0] and kernel_table[0].split()[:2] == ["r0", "r1"]
    assert "\n".join(kernel_table) + "\n" == full.split("\n\n", 1)[1]
    for flags in (["--csv"], ["--include", "add"], ["--depth", "2"], ["--sort", "name"], ["--plain", "--json"]):
        refused = subprocess.run([CLI, "view", str(folder), *flags], capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2 and refused.stdout == "", flags
        assert refused.stderr.startswith(f"proton-tui: error: {flags[0]}") and refused.stderr.count("\n") == 1


def test_a_rank_set_of_trees_is_read_and_written_without_numpy(tmp_path):
    """numpy (15 MiB of a process's memory) is for traces: a rank set of trees never loads it, as text or JSON."""
    folder = FIXTURES / "ranks_h200"
    no_numpy = ("import sys; sys.modules['numpy'] = None; sys.argv = ['proton-tui', *sys.argv[1:]]; "
                "from proton_tui.entry import main; main()")
    for flag in ("--plain", "--json", "--kernels"):
        alone = subprocess.run([sys.executable, "-c", no_numpy, "view", str(folder), flag], capture_output=True,
                               text=True, timeout=60)
        assert alone.returncode == 0 and "numpy" not in alone.stderr, alone.stderr[-2000:]
        usual = subprocess.run([CLI, "view", str(folder), flag], capture_output=True, text=True, timeout=60)
        assert alone.stdout == usual.stdout


def test_the_set_keeps_its_numbers_not_the_captures(tmp_path):
    """A rank set of 1,024 captures would otherwise hold 1,024 trees: it keeps each rank's totals and kernel times,
    and lets every capture go once read."""
    import gc
    import weakref

    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet", "gpt2_shadow.hatchet")
    read = []

    def opener(path):
        profile = open_capture(path)
        read.append(weakref.ref(profile))
        return profile

    rank_set = open_rank_set([folder], opener)
    gc.collect()
    assert len(read) == 3 and [ref() for ref in read] == [None] * 3
    alone = [open_capture(folder / f"job.rank{number}.hatchet") for number in range(3)]
    assert rank_set.names == frozenset(name for profile in alone for name in profile.names)
    for rank, profile in zip(rank_set.ranks, alone):
        assert (rank.capture.total, rank.capture.kernel_count, rank.capture.recorded_launches) == (
            profile.total, profile.kernel_count, profile.recorded_launches)


def test_a_rank_opened_again_is_its_file_as_the_set_read_it_else_refused(tmp_path):
    from proton_tui.output.ranks import open_rank

    folder = ranks_folder(tmp_path, "vecadd_hook.hatchet", "vecadd_fail.hatchet")
    rank_set = open_rank_set([folder])
    again = open_rank(rank_set.ranks[1])
    assert again.total == rank_set.ranks[1].capture.total == open_capture(folder / "job.rank1.hatchet").total
    shutil.copy(FIXTURES / "gpt2_shadow.hatchet", folder / "job.rank1.hatchet")
    with pytest.raises(RankSetError, match=r"job\.rank1\.hatchet: changed after the rank set was read"):
        open_rank(rank_set.ranks[1])
    (folder / "job.rank0.hatchet").unlink()
    with pytest.raises(RankSetError, match=r"job\.rank0\.hatchet: cannot be read again: No such file"):
        open_rank(rank_set.ranks[0])


def test_a_trace_changed_after_the_set_was_read_is_not_merged(tmp_path):
    from proton_tui.output.ranks import merged_rank_trace

    folder, _ = trace_ranks(tmp_path, "vecadd_trace.chrome_trace", (0, 0))
    rank_set = open_rank_set([folder])
    changed = folder / "job.rank1.chrome_trace"
    changed.write_bytes(changed.read_bytes() + b"\n")
    with pytest.raises(RankSetError, match=r"job\.rank1\.chrome_trace: changed after the rank set was read"):
        merged_rank_trace(rank_set)


def test_a_trace_gone_after_the_set_was_read_is_named_once_in_words(tmp_path):
    from proton_tui.output.ranks import merged_rank_trace

    folder, _ = trace_ranks(tmp_path, "vecadd_trace.chrome_trace", (0, 0))
    rank_set = open_rank_set([folder])
    (folder / "job.rank1.chrome_trace").unlink()
    with pytest.raises(RankSetError) as refused:
        merged_rank_trace(rank_set)
    said = str(refused.value)
    assert said.endswith("job.rank1.chrome_trace: cannot be read again: No such file or directory")
    assert said.count("job.rank1.chrome_trace") == 1 and "Errno" not in said
