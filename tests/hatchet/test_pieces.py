"""Reading a capture in pieces gives exactly the profile of reading it whole, or steps aside; it never writes to the
capture."""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from proton_tui.hatchet import CaptureError, LoadCancelled, load_profile, loader, pieces, reader, source
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


def load_both_ways(path: Path, monkeypatch, pieces_of: int = 5, **options):
    """(profile read whole, profile read in pieces of about a `pieces_of`-th of the file, or the error each raised,
    and whether the second read used pieces)."""
    used = []
    real = loader.load_in_pieces
    monkeypatch.setattr(source, "MAP_FROM_BYTES", 0)  # small files are mapped too, as a large one is

    def spy(*args, **_):
        result = real(*args, piece_bytes=max(1, path.stat().st_size // pieces_of))
        used.append(result is not None)
        return result

    results = []
    for read_in_pieces in (lambda *args, **_: None, spy):
        monkeypatch.setattr(loader, "load_in_pieces", read_in_pieces)
        try:
            results.append(load_profile(path, **options))
        except CaptureError as error:
            results.append(str(error))
    return results[0], results[1], used == [True]


def assert_same(one, two) -> None:
    assert not isinstance(one, str) and not isinstance(two, str), (one, two)
    for name in COMPARED:
        assert getattr(two, name) == getattr(one, name), name
    for node in range(one.node_count):  # a plain kernel's metrics are rebuilt from the arrays: equal all the same
        assert repr(two.node_metrics(node)) == repr(one.node_metrics(node)), node
    assert two.kernel_stats() == one.kernel_stats() and two.device_totals() == one.device_totals()


def wide_tree(groups: int = 6, kernels: int = 8) -> dict:
    return scope("ROOT", *[
        scope(f"step_{g}", *[kernel(f"k{g}_{k}", 1000 + 37 * g + k, count=k + 1) for k in range(kernels)],
              scope(INTERNAL))
        for g in range(groups)
    ])


@pytest.mark.parametrize("name", ["gpt2_shadow", "multigpu"])
def test_real_captures_load_the_same(name, monkeypatch):
    one, two, used = load_both_ways(capture_path(name), monkeypatch)
    assert used
    assert_same(one, two)


@pytest.mark.parametrize("show_internal", [False, True])
def test_a_cut_among_the_roots_children(tmp_path, monkeypatch, show_internal):
    path = proton_file(tmp_path, wide_tree())
    one, two, used = load_both_ways(path, monkeypatch, show_internal=show_internal)
    assert used and two.hidden_internal == (0 if show_internal else 6)
    assert_same(one, two)
    size = path.stat().st_size
    depth, start, end = pieces.find_cut(path.read_bytes(), size // 2)
    assert depth == 0 and size // 5 <= end - start <= size // 2


def test_a_filtered_view_of_a_capture_read_in_pieces_is_the_same(tmp_path, monkeypatch):
    """Filtering copies every node's metrics, those of hooked kernels (bytes) in the pieces too."""
    tree = wide_tree()
    for group in tree["children"]:
        group["children"][0]["metrics"]["bytes"] = 4096
    one, two, used = load_both_ways(proton_file(tmp_path, tree), monkeypatch)
    assert used and two.has_bytes
    include = re.compile("k[0-5]_0").search
    assert_same(one.filtered(include), two.filtered(include))


def test_a_cut_deeper_down_the_last_path(tmp_path, monkeypatch):
    """ROOT has one child, which has one child: the cut is found two levels down."""
    path = proton_file(tmp_path, scope("ROOT", scope("<module>", scope("train", *wide_tree(8).pop("children")))))
    one, two, used = load_both_ways(path, monkeypatch)
    size = path.stat().st_size
    assert used and pieces.find_cut(path.read_bytes(), size // 2)[0] == 2
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
    size = path.stat().st_size
    assert used and pieces.find_cut(path.read_bytes(), size // 2)[0] == 2  # among the kernel's regions
    assert_same(one, two)
    assert [k.name for k in two.kernel_stats()] == ["matmul", "other"] and two.total == 9005


def test_pieces_with_different_units_read_whole(tmp_path, monkeypatch):
    """Times only before the cut, cycles only after it: a piece alone would read as cycles."""
    tree = wide_tree()
    for group in tree["children"][3:]:
        for node in group["children"]:
            node["metrics"] = {"cycles": 100} if node["metrics"] else {}
    one, two, used = load_both_ways(proton_file(tmp_path, tree), monkeypatch)
    assert not used and one.unit == "ns"
    assert_same(one, two)


@pytest.mark.parametrize("bad_group", [1, 5])  # in what is left, or in a piece
def test_a_bad_metric_anywhere_gives_the_message_of_the_whole_read(tmp_path, monkeypatch, bad_group):
    tree = wide_tree()
    tree["children"][bad_group]["children"][3]["metrics"]["time (ns)"] = "fast"
    one, two, _ = load_both_ways(proton_file(tmp_path, tree), monkeypatch)
    assert isinstance(one, str) and "metric 'time (ns)' is 'fast', not a number" in one
    assert two == one


def test_layouts_other_than_protons_read_whole(tmp_path, monkeypatch):
    tree = wide_tree()
    compact = tmp_path / "compact.hatchet"
    compact.write_text(json.dumps([tree, H200]))
    unsorted = tmp_path / "unsorted.hatchet"  # children after frame and metrics
    unsorted.write_text(json.dumps([tree, H200], indent=4))
    for path in (compact, unsorted):
        assert pieces.find_cut(path.read_bytes(), path.stat().st_size) is None
        one, two, used = load_both_ways(path, monkeypatch)
        assert not used
        assert_same(one, two)


def test_the_file_is_untouched(tmp_path, monkeypatch):
    path = proton_file(tmp_path, wide_tree())
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    _, _, used = load_both_ways(path, monkeypatch)
    assert used and hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("pieces_of", [3, 5, 9, 17])
def test_many_pieces_at_several_depths_load_the_same(tmp_path, monkeypatch, pieces_of):
    """Pieces cut one after another from what is left, some hanging inside a later one."""
    path = proton_file(tmp_path, scope("ROOT", scope("<module>", scope("train", *wide_tree(12).pop("children"))),
                                       *wide_tree(4).pop("children")))
    one, two, used = load_both_ways(path, monkeypatch, pieces_of=pieces_of)
    assert used
    assert_same(one, two)


def test_a_hidden_frame_with_children_on_the_last_path_reads_whole(tmp_path, monkeypatch):
    tree = wide_tree()
    tree["children"].append(scope(INTERNAL, *wide_tree(3).pop("children")))
    one, two, used = load_both_ways(proton_file(tmp_path, tree), monkeypatch)
    assert not used
    assert_same(one, two)


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
    """Twelve random shapes: each loads the same both ways, and most of them offer a cut (the rest read whole)."""
    in_pieces = 0
    for seed in range(12):
        rng = random.Random(seed)
        tree = scope("ROOT", *[random_tree(rng, 1) for _ in range(rng.randrange(2, 9))])
        one, two, used = load_both_ways(proton_file(tmp_path, tree, f"random{seed}.hatchet"), monkeypatch, pieces_of=8)
        assert_same(one, two)
        in_pieces += used
    assert in_pieces >= 9


@pytest.mark.parametrize("name", ["gpt2_shadow", "multigpu", "vecadd_hook", "vecadd_auto", "vecadd_fail"])
def test_msgspec_and_orjson_read_the_same(name):
    """The whole-file read decodes into msgspec Structs; orjson's parse (the path that words errors) agrees."""
    path = capture_path(name)
    with source.mapped(path) as data:
        structs, parsed = reader.load_whole(path, data, False), reader.load_parsed(path, data, False)
    assert_same(parsed, structs)


def test_a_load_in_pieces_reports_progress_and_stops_when_cancelled(tmp_path, monkeypatch):
    """The share read grows piece by piece to the whole file; a cancel between pieces raises LoadCancelled, and the
    file can be read again afterwards."""
    path = proton_file(tmp_path, wide_tree(groups=12))
    monkeypatch.setattr(source, "MAP_FROM_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", path.stat().st_size // 6)
    pending = loader.PendingLoad(path)
    seen = []
    real = pending._read_so_far

    def read_so_far(done: int) -> None:
        real(done)
        seen.append(pending.bytes_read)

    monkeypatch.setattr(pending, "_read_so_far", read_so_far)
    profile = pending.finish()
    pending.close()
    assert len(seen) >= 2 and seen == sorted(seen) and 0 < seen[0] and seen[-1] < pending.size
    assert pending.bytes_read == pending.size and profile.node_count == load_profile(path).node_count

    pending = loader.PendingLoad(path)
    monkeypatch.setattr(pending, "_read_so_far", lambda done: pending.cancel())
    with pytest.raises(LoadCancelled):
        pending.finish()
    pending.close()
    assert load_profile(path).node_count == profile.node_count


def test_a_load_read_whole_stops_when_cancelled(tmp_path):
    path = proton_file(tmp_path, wide_tree())
    pending = loader.PendingLoad(path)
    pending.cancel()
    with pytest.raises(LoadCancelled):
        pending.finish()
    pending.close()


def test_an_abandoned_load_never_returns(tmp_path, monkeypatch):
    """Abandoned (the process is about to end), a load stops where it is and stays there: it neither returns nor
    unwinds (unwinding would free what it built while the process tries to end)."""
    path = proton_file(tmp_path, wide_tree(groups=12))
    monkeypatch.setattr(source, "MAP_FROM_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", path.stat().st_size // 6)
    pending = loader.PendingLoad(path)
    monkeypatch.setattr(pending, "_read_so_far", lambda done: pending.cancel(abandon=True))
    ended = []
    thread = threading.Thread(target=lambda: ended.append(pending.finish()), daemon=True)
    started = time.process_time()
    thread.start()
    thread.join(1.0)
    assert thread.is_alive() and not ended
    assert time.process_time() - started < 0.5  # parked, not spinning


def test_a_mapped_capture_can_be_read_on_another_thread(tmp_path, monkeypatch):
    """As the viewer reads it: mapped (with its read lease) on the main thread, read and released on another."""
    path = proton_file(tmp_path, wide_tree())
    monkeypatch.setattr(source, "MAP_FROM_BYTES", 0)
    pending = loader.PendingLoad(path)
    done = []
    thread = threading.Thread(target=lambda: done.append(pending.finish()))
    thread.start()
    thread.join(30)
    pending.close()
    assert [profile.node_count for profile in done] == [load_profile(path).node_count]
