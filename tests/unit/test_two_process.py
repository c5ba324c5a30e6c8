"""Loading on two processes gives exactly the one-process profile, or steps aside; it never leaves a process behind
and never writes to the capture."""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import random
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from proton_tui.hatchet import CaptureError, load_profile, loader, split
from tests.helpers import REPO, capture_path, kernel, scope

COMPARED = ("names", "parents", "children", "depths", "own", "has_own", "is_kernel", "devices", "unit",
            "own_launches", "own_bytes", "inclusive", "launches", "bytes", "hidden_internal", "device_info")
H200 = {"CUDA": {"0": {"arch": "90", "bus_width": 6144, "clock_rate": 1980000, "memory_clock_rate": 3201000,
                       "num_sms": 132}}}
INTERNAL = "__proton_launch_metadata"


def proton_file(tmp_path: Path, tree: dict, name: str = "capture.hatchet") -> Path:
    """A capture laid out exactly as Triton 3.6's Proton writes it."""
    path = tmp_path / name
    path.write_text("\n" + json.dumps([tree, H200], indent=4, sort_keys=True) + "\n")
    return path


def load_both_ways(path: Path, monkeypatch, **options):
    """(one-process profile, two-process profile or the error each raised, whether two processes were used)."""
    for thread in threading.enumerate():  # e.g. a worker thread of an earlier TUI test, finishing its probe
        if thread is not threading.main_thread():
            thread.join(timeout=60)
    assert threading.active_count() == 1, "this test needs a single-threaded process: fork is refused otherwise"
    used = []
    real = split.Split.finish

    def spy(split):
        result = real(split)
        used.append(result is not None)
        return result

    monkeypatch.setattr(split.Split, "finish", spy)
    results = []
    for threshold in (10**18, 0):
        monkeypatch.setattr(loader, "TWO_PROCESS_MIN_BYTES", threshold)
        try:
            results.append(load_profile(path, **options))
        except CaptureError as error:
            results.append(str(error))
    return results[0], results[1], used == [True]


def assert_same(one, two) -> None:
    assert not isinstance(one, str) and not isinstance(two, str), (one, two)
    for name in COMPARED:
        assert getattr(two, name) == getattr(one, name), name
    for node in range(one.node_count):  # the child sends a plain kernel's metrics as None: rebuilt, they are equal
        assert repr(two.node_metrics(node)) == repr(one.node_metrics(node)), node
    assert two.kernel_stats() == one.kernel_stats() and two.device_totals() == one.device_totals()


def wide_tree(groups: int = 6, kernels: int = 8) -> dict:
    return scope("ROOT", *[
        scope(f"step_{g}", *[kernel(f"k{g}_{k}", 1000 + 37 * g + k, count=k + 1) for k in range(kernels)],
              scope(INTERNAL))
        for g in range(groups)
    ])


@pytest.mark.parametrize("name", ["gpt2_shadow", "multigpu", "vecadd_hook", "vecadd_auto"])
def test_real_captures_load_the_same(name, monkeypatch):
    one, two, used = load_both_ways(capture_path(name), monkeypatch)
    assert used and type(two._sent_metrics) is bytes  # the child's kernels with more metrics: unread
    assert_same(one, two)
    assert None in two.metrics  # a plain kernel of the child's part, rebuilt by node_metrics


@pytest.mark.parametrize("show_internal", [False, True])
def test_a_cut_among_the_roots_children(tmp_path, monkeypatch, show_internal):
    path = proton_file(tmp_path, wide_tree())
    one, two, used = load_both_ways(path, monkeypatch, show_internal=show_internal)
    assert used and two.hidden_internal == (0 if show_internal else 6)
    assert_same(one, two)
    depth, start, end = split.find_cut(path.read_bytes())
    assert depth == 0 and 0.3 <= (end - start) / path.stat().st_size <= 0.7


def test_a_filtered_view_of_a_two_process_load_is_the_same(monkeypatch):
    """Filtering copies every node's metrics, the child's part's (sent unread) too."""
    one, two, used = load_both_ways(capture_path("vecadd_hook"), monkeypatch)
    assert used and type(two._sent_metrics) is bytes and int in map(type, two.metrics)  # a hooked kernel's: unread
    include = re.compile("add_kernel").search
    assert_same(one.filtered(include), two.filtered(include))


def test_a_cut_deeper_down_the_last_path(tmp_path, monkeypatch):
    """ROOT has one child, which has one child: the cut is found two levels down."""
    path = proton_file(tmp_path, scope("ROOT", scope("<module>", scope("train", *wide_tree(8).pop("children")))))
    one, two, used = load_both_ways(path, monkeypatch)
    assert used and split.find_cut(path.read_bytes())[0] == 2
    assert_same(one, two)
    assert two.depths[-1] == 4 and two.path_of(two.node_count - 1).startswith("<module> / train / step_7")


def test_cycles_and_nested_regions_load_the_same(tmp_path, monkeypatch):
    regions = [scope(f"kernel_{i}", scope("load", cycles=10 * i), scope("store", cycles=5), cycles=40 * i + 15)
               for i in range(1, 9)]
    one, two, used = load_both_ways(proton_file(tmp_path, scope("ROOT", *regions)), monkeypatch)
    assert used and two.unit == "cycles"
    assert_same(one, two)


def test_a_cut_inside_a_kernel_adds_no_kernels(tmp_path, monkeypatch):
    """Intra-kernel regions cut in two: the kernel keeps its own time and the child's regions are not kernels."""
    regions = [scope(f"region_{i:02}", kernel(f"inner_{i}", 10 * i)) for i in range(40)]
    tree = scope("ROOT", kernel("other", 5), scope("step", kernel("matmul", 9000, count=3, **{"cycles": 7})))
    tree["children"][1]["children"][0]["children"] = regions
    path = proton_file(tmp_path, tree)
    one, two, used = load_both_ways(path, monkeypatch)
    assert used and split.find_cut(path.read_bytes())[0] == 2  # among the kernel's regions
    assert_same(one, two)
    assert [k.name for k in two.kernel_stats()] == ["matmul", "other"] and two.total == 9005


def test_parts_with_different_units_load_in_one_process(tmp_path, monkeypatch):
    """Times only before the cut, cycles only after it: the child's part alone would read as cycles."""
    tree = wide_tree()
    for group in tree["children"][3:]:
        for node in group["children"]:
            node["metrics"] = {"cycles": 100} if node["metrics"] else {}
    one, two, used = load_both_ways(proton_file(tmp_path, tree), monkeypatch)
    assert not used and one.unit == "ns"
    assert_same(one, two)


@pytest.mark.parametrize("bad_group", [1, 5])  # in this process's half, or in the forked child's
def test_a_bad_metric_in_either_half_gives_the_one_process_message(tmp_path, monkeypatch, bad_group):
    tree = wide_tree()
    tree["children"][bad_group]["children"][3]["metrics"]["time (ns)"] = "fast"
    one, two, _ = load_both_ways(proton_file(tmp_path, tree), monkeypatch)
    assert isinstance(one, str) and "metric 'time (ns)' is 'fast', not a number" in one
    assert two == one


def test_layouts_other_than_protons_load_in_one_process(tmp_path, monkeypatch):
    tree = wide_tree()
    compact = tmp_path / "compact.hatchet"
    compact.write_text(json.dumps([tree, H200]))
    unsorted = tmp_path / "unsorted.hatchet"  # children after frame and metrics
    unsorted.write_text(json.dumps([tree, H200], indent=4))
    for path in (compact, unsorted):
        assert split.find_cut(path.read_bytes()) is None
        one, two, used = load_both_ways(path, monkeypatch)
        assert not used
        assert_same(one, two)


def test_no_process_is_left_and_the_file_is_untouched(tmp_path, monkeypatch):
    path = proton_file(tmp_path, wide_tree())
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    _, _, used = load_both_ways(path, monkeypatch)
    assert used
    with pytest.raises(ChildProcessError):  # every forked child was waited for
        os.waitpid(-1, os.WNOHANG)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_threaded_process_never_forks(tmp_path, monkeypatch):
    path = proton_file(tmp_path, wide_tree())
    monkeypatch.setattr(loader, "TWO_PROCESS_MIN_BYTES", 0)
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            assert split.start_split(path, data, False) is None
    finally:
        release.set()
        worker.join()


def test_a_failed_fork_loads_in_one_process(tmp_path, monkeypatch):
    path = proton_file(tmp_path, wide_tree())

    def no_fork():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    one, two, used = load_both_ways(path, monkeypatch)
    assert not used
    assert_same(one, two)


@pytest.mark.parametrize("threshold", [0, 10**18])  # two processes, one
def test_the_child_works_between_the_start_of_a_load_and_its_finish(tmp_path, monkeypatch, threshold):
    """What `view` does between starting a load and finishing it (import the TUI, draw its first screen) overlaps
    the forked child's part; a failed part still ends with the one-process message, and no process is left."""
    tree = wide_tree()
    tree["children"][5]["children"][3]["metrics"]["time (ns)"] = -1  # the child's part fails: one process takes over
    good, bad = proton_file(tmp_path, wide_tree(), "good.hatchet"), proton_file(tmp_path, tree, "bad.hatchet")
    monkeypatch.setattr(loader, "TWO_PROCESS_MIN_BYTES", threshold)

    def child_exists() -> bool:
        try:  # running or done (WNOWAIT: the loader still reaps it)
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            return True
        except ChildProcessError:
            return False

    pending = loader.PendingLoad(good, False)
    assert child_exists() == (threshold == 0)
    assert pending.finish().node_count == 1 + 6 * 9
    pending = loader.PendingLoad(bad, False)
    assert child_exists() == (threshold == 0)
    with pytest.raises(CaptureError, match="negative time"):
        pending.finish()
    assert not child_exists()


def test_a_load_given_up_leaves_no_process(tmp_path, monkeypatch):
    """The viewer quit (or failed) before finishing the load: closing it ends the child and releases the file."""
    monkeypatch.setattr(loader, "TWO_PROCESS_MIN_BYTES", 0)
    pending = loader.PendingLoad(proton_file(tmp_path, wide_tree()), False)
    assert pending.split is not None
    pending.close()
    pending.close()  # twice is harmless
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)
    assert pending.data.closed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_benchmark_shaped_captures_load_the_same(tmp_path, monkeypatch, seed):
    """The benchmark's generator: nested scopes, real mangled names, hooked kernels with bytes, internal frames."""
    generator = REPO / "benchmarks" / "make_capture.py"
    subprocess.run([sys.executable, str(generator), "5000", "--seed", str(seed), "--out", str(tmp_path)], check=True,
                   capture_output=True)
    (path,) = tmp_path.glob("*.hatchet")
    one, two, used = load_both_ways(path, monkeypatch)
    assert used and one.node_count > 4000 and one.has_bytes
    assert_same(one, two)


def random_tree(rng: random.Random, depth: int = 0) -> dict:
    """A node with random children: scopes, kernels (some with bytes), instrumented regions with cycles nested
    under kernels, internal frames; names repeat so kernel summaries merge across parts."""
    kind = rng.random()
    if depth >= 4 or (depth and kind < 0.35):
        extra = {"bytes": rng.randrange(1, 10**9)} if rng.random() < 0.3 else {}
        node = kernel(f"k{rng.randrange(12)}", rng.randrange(1, 10**6), count=rng.randrange(1, 50),
                      device=str(rng.randrange(2)), **extra)
        if rng.random() < 0.15:
            node["children"] = [scope(f"region{i}", cycles=rng.randrange(1, 1000)) for i in range(rng.randrange(1, 4))]
        return node
    if depth and kind < 0.42:
        return scope(INTERNAL)
    return scope(f"s{rng.randrange(6)}", *[random_tree(rng, depth + 1) for _ in range(rng.randrange(1, 7))])


def test_random_trees_load_the_same(tmp_path, monkeypatch):
    """Twelve random shapes: each loads the same both ways, and most of them offer a cut (the rest load in one)."""
    forked = 0
    for seed in range(12):
        rng = random.Random(seed)
        tree = scope("ROOT", *[random_tree(rng, 1) for _ in range(rng.randrange(2, 9))])
        one, two, used = load_both_ways(proton_file(tmp_path, tree, f"random{seed}.hatchet"), monkeypatch)
        assert_same(one, two)
        forked += used
    assert forked >= 9
