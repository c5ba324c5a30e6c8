"""A capture rewritten or truncated while `view --json` or the viewer reads it: never a signal death or a traceback,
never a torn tree. Each outcome is the whole old file, the whole new file, or a one-line error naming the file."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

from tests.e2e.terminal import NO_TMUX, POLL_S, TMUX, Terminal, exit_status, start_proton_tui
from tests.helpers import CLI, REPO, finished_under_lease

TRIES = 12  # reads of a capture under a writer: four for each of the three ways of writing it
ERRORS = ("changed while it was read; open it again", "empty file", "truncated: the JSON ends early")


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> tuple[bytes, bytes]:
    """Two versions of a ~17 MB capture: the benchmark generator's, and the same with every time doubled. Made once
    for the module: every test writes them to a file of its own."""
    folder = tmp_path_factory.mktemp("versions")
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_capture.py"), "20000", "--out", str(folder)],
                   check=True, capture_output=True, timeout=120)
    (made,) = folder.glob("*.hatchet")
    old = made.read_bytes()
    made.unlink()
    new = old.replace(b'"time (ns)": 1', b'"time (ns)": 2')  # the same size, other totals
    assert len(new) == len(old) and new != old
    return old, new


def keep_writing(path, old: bytes, new: bytes, mode: str, delay: float, stop: threading.Event) -> None:
    """After `delay`, until `stop`: the capture truncated (at a random size) or rewritten with the new version (or
    half of it), in place as Proton writes, then written back whole, again and again."""
    rng = random.Random(delay)
    time.sleep(delay)
    while not stop.is_set():
        with open(path, "r+b") as handle:
            if mode == "truncate":
                handle.truncate(rng.randrange(len(old)))
            else:
                content = new if mode == "rewrite" else new[: len(new) // 2]
                handle.truncate(0)
                handle.write(content)
        time.sleep(0.005)
        with open(path, "r+b") as handle:
            handle.write(old)
        time.sleep(0.005)


@pytest.mark.longest
def test_a_capture_written_while_it_is_read(tmp_path, two_versions):
    old, new = two_versions
    path = tmp_path / "capture.hatchet"
    expected = {}
    for name, content in (("old", old), ("new", new)):
        path.write_bytes(content)
        expected[name] = json.loads(subprocess.run([CLI, "view", str(path), "--json"], capture_output=True,
                                                   timeout=120, check=True).stdout)["total"]
    assert expected["old"] != expected["new"]
    rng = random.Random(7)
    outcomes = []
    for attempt in range(TRIES):
        path.write_bytes(old)
        mode = ("truncate", "rewrite", "rewrite shorter")[attempt % 3]
        stop = threading.Event()
        writer = threading.Thread(target=keep_writing, args=(path, old, new, mode, rng.uniform(0.0, 0.3), stop))
        writer.start()
        try:
            result = subprocess.run([CLI, "view", str(path), "--json"], capture_output=True, text=True, timeout=120)
        finally:
            stop.set()
            writer.join()
        assert result.returncode in (0, 2), (mode, result.returncode, result.stderr[-500:])  # no signal death
        assert "Traceback" not in result.stderr
        if result.returncode == 0:
            total = json.loads(result.stdout)["total"]
            assert total in expected.values(), (mode, total)  # the whole old or the whole new file
            outcomes.append("old" if total == expected["old"] else "new")
        else:
            assert result.stderr.count("\n") == 1 and str(path) in result.stderr
            assert any(error in result.stderr for error in ERRORS), result.stderr
            outcomes.append(next(error for error in ERRORS if error in result.stderr))
    assert len(outcomes) == TRIES


def test_a_same_size_rewrite_in_progress_is_never_read_torn(tmp_path, two_versions):
    """A writer overwriting the capture in place with a same-size version, again and again: a read that falls inside
    one write sees the old bytes before it and the new after it, with the size and the time unchanged; the second
    read notices."""
    from proton_tui.hatchet import CaptureError, load_profile

    old, new = two_versions
    path = tmp_path / "capture.hatchet"
    totals = {}
    for name, content in (("old", old), ("new", new)):
        path.write_bytes(content)
        totals[load_profile(path).total] = name
    stop = threading.Event()

    def overwrite() -> None:
        while not stop.is_set():
            for content in (new, old):
                with open(path, "r+b") as handle:
                    handle.write(content)

    writer = threading.Thread(target=overwrite)
    writer.start()
    outcomes = []
    try:
        for _ in range(TRIES):
            try:
                outcomes.append(totals.get(load_profile(path).total, "torn"))
            except CaptureError as error:
                outcomes.append(str(error))
    finally:
        stop.set()
        writer.join()
    assert "torn" not in outcomes
    assert all(outcome in ("old", "new") or outcome.endswith("changed while it was read; open it again")
               for outcome in outcomes), outcomes


def test_a_writer_paused_in_the_middle_of_a_write_is_waited_for(tmp_path, two_versions, monkeypatch):
    """The worst case of a same-size rewrite: the writer has set the file's time and size, then pauses with only
    part of the new bytes written; every check at read time agrees with what was read. A file written that recently
    is read again a moment later, by which time the writer has moved on."""
    from proton_tui.hatchet import CaptureError, PendingLoad, source

    # the writer's pause here lasts as long as the first read takes, which on a loaded machine is longer than the
    # half second the viewer gives a real writer: the viewer waits longer, so that the test is of the rule itself
    monkeypatch.setattr(source, "SETTLE_S", 5.0)
    old, new = two_versions
    path = tmp_path / "capture.hatchet"
    path.write_bytes(new[: len(new) // 2] + old[len(old) // 2 :])  # a write paused halfway
    stamp = os.stat(path)
    pending = PendingLoad(path)  # read now, in its paused state
    time.sleep(0.2)  # long enough for a second read at once to see the same paused state
    with open(path, "r+b") as handle:  # the writer moves on: the rest of its bytes, the time it had set
        handle.write(new)
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    try:
        pending.finish()
        raise AssertionError("a torn capture was shown")
    except CaptureError as error:
        assert str(error) == f"{path}: changed while it was read; open it again"
    finally:
        pending.close()


def test_a_mapped_capture_holds_a_writer_off_until_it_is_read(tmp_path, monkeypatch, two_versions):
    """A capture large enough to be memory-mapped: a writer that truncates it meanwhile waits for the read lease
    (a truncated mapping would end the process with SIGBUS), and the read is the whole old file."""
    import mmap

    from proton_tui.hatchet import PendingLoad, load_profile, source

    old, _ = two_versions
    path = tmp_path / "capture.hatchet"
    path.write_bytes(old)
    whole = load_profile(path, settled=True)
    monkeypatch.setattr(source, "MAP_FROM_BYTES", 0)  # mapped as a large capture is
    pending = PendingLoad(path, settled=True)
    assert isinstance(pending.data, mmap.mmap)
    profile = finished_under_lease(pending, path)
    assert profile.total == whole.total and profile.node_count == whole.node_count


@pytest.mark.longest
@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason=NO_TMUX)
def test_a_capture_written_while_the_viewer_reads_it(tmp_path, two_versions):
    """The same in a real terminal: the viewer shows the whole old file's header or the whole new file's, or ends
    with the one-line error and exit status 2; never a signal death or a traceback."""
    old, new = two_versions
    path = tmp_path / "capture.hatchet"
    headers = {}
    for name, content in (("old", old), ("new", new)):
        path.write_bytes(content)
        plain = subprocess.run([CLI, "view", str(path), "--plain"], capture_output=True, text=True, timeout=120,
                               check=True).stdout
        headers[name] = plain.splitlines()[0]  # "capture.hatchet  GPU time 23.62 s  339,569 launches  96 kernels …"
    assert headers["old"] != headers["new"]
    rng = random.Random(11)
    outcomes = []
    for attempt in range(TRIES):
        path.write_bytes(old)
        mode = ("truncate", "rewrite", "rewrite shorter")[attempt % 3]
        stop = threading.Event()
        writer = threading.Thread(target=keep_writing, args=(path, old, new, mode, rng.uniform(0.0, 1.0), stop))
        term = Terminal(f"proton-stress-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            rc_file = start_proton_tui(term, tmp_path, "view", str(path))
            writer.start()
            deadline = time.monotonic() + 120
            while True:
                screen = term.screen()
                shown = [name for name, header in headers.items() if header in screen]
                if shown or rc_file.is_file() or time.monotonic() > deadline:
                    break
                time.sleep(POLL_S)
            stop.set()
            writer.join()
            if shown:
                outcomes.append(shown[0])
                term.keys("q")
                assert exit_status(term, rc_file, 30, "q") == "0"
                continue
            code = exit_status(term, rc_file, 30, "the load")
            screen = term.screen(history=True)
            assert code == "2", (mode, code, screen)  # no signal death
            assert "Traceback" not in screen
            (line,) = [line for line in screen.splitlines() if line.startswith("proton-tui: error:")]
            assert str(path) in line and any(error in line for error in ERRORS), line
            outcomes.append(next(error for error in ERRORS if error in line))
        finally:
            stop.set()
            if writer.is_alive():
                writer.join()
            term.kill()
    assert len(outcomes) == TRIES


LEASE_BREAK = "/proc/sys/fs/lease-break-time"


def _holds_lease(pid: int, inode: int) -> bool:
    with open("/proc/locks") as locks:
        return any("LEASE" in line and f":{inode} " in line + " " for line in locks)


@pytest.mark.skipif(os.geteuid() != 0 or not os.access(LEASE_BREAK, os.W_OK), reason="needs root: lease-break-time")
def test_a_large_capture_truncated_after_its_lease_is_broken_is_reported_changed(tmp_path):
    """A read of a large capture that outlasts the kernel's lease-break time (stopped here while another process
    truncates the file) ends as a file changed while it was read, exit status 2, never a SIGBUS."""
    path = tmp_path / "large.hatchet"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_capture.py"), "150000", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    os.rename(next(tmp_path.glob("proton_150000*.hatchet")), path)
    assert path.stat().st_size >= 128_000_000
    with open(LEASE_BREAK) as setting:
        saved = setting.read()
    reader = None
    try:
        with open(LEASE_BREAK, "w") as setting:
            setting.write("1")
        reader = subprocess.Popen([CLI, "view", str(path), "--json"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        inode, deadline = path.stat().st_ino, time.monotonic() + 60
        while not _holds_lease(reader.pid, inode):
            assert reader.poll() is None and time.monotonic() < deadline, "the reader never took its lease"
            time.sleep(0.01)
        time.sleep(0.2)
        os.kill(reader.pid, signal.SIGSTOP)
        subprocess.run([sys.executable, "-c", f"open({str(path)!r}, 'r+b').truncate(0)"], check=True, timeout=30)
        os.kill(reader.pid, signal.SIGCONT)
        _, error = reader.communicate(timeout=120)
    finally:
        if reader is not None and reader.poll() is None:
            os.kill(reader.pid, signal.SIGCONT)
            reader.kill()
        with open(LEASE_BREAK, "w") as setting:
            setting.write(saved)
    assert reader.returncode == 2, (reader.returncode, error[-300:])
    assert error.decode().strip() == f"proton-tui: error: {path}: changed while it was read; open it again"
