"""A real terminal for end-to-end tests: a tmux session on a private server, and proton-tui started in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

TMUX = shutil.which("tmux")
WIDTH, HEIGHT = 120, 40
SESSION = "e2e"
POLL_S = 0.05
NO_TMUX = "tmux is not installed: the end-to-end tests drive proton-tui in tmux (CI installs it with apt)"


class Terminal:
    """One tmux session on a private server (its own socket): send keys, read the screen, inspect the pane."""

    def __init__(self, socket: str) -> None:
        self.socket = socket
        self.socket_path: str | None = None

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=30)
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def start(self, argv: list[str], cwd: Path, env: dict[str, str], size: tuple[int, int] = (WIDTH, HEIGHT)) -> None:
        # -f /dev/null: no user configuration; remain-on-exit keeps the pane (and its exit status) after proton-tui
        # exits, so the test can read how it ended.
        subprocess.run([TMUX, "-L", self.socket, "-f", os.devnull, "new-session", "-d", "-s", SESSION,
                        "-x", str(size[0]), "-y", str(size[1]), "-c", str(cwd), *argv,
                        ";", "set-option", "-g", "remain-on-exit", "on"],
                       check=True, env=env, capture_output=True, timeout=30)
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip() or None

    def screen(self, history: bool = False) -> str:
        """What the pane shows; `history`: with the lines scrolled off the top, wrapped lines joined back."""
        return self.tmux("capture-pane", "-p", *(["-J", "-S", "-"] if history else []), "-t", SESSION, check=False)

    def pane(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", SESSION, fmt, check=False).strip()

    def modes(self, want: str, seconds: float = 10) -> str:
        """The terminal's modes (alternate screen, mouse reporting, cursor shown: "0 0 1" as a shell has them) once
        they are `want`, or as they are after `seconds`: tmux reads the program's last bytes on its own time."""
        deadline = time.monotonic() + seconds
        while (seen := self.pane("#{alternate_on} #{mouse_any_flag} #{cursor_flag}")) != want and \
                time.monotonic() < deadline:
            time.sleep(POLL_S)
        return seen

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", SESSION, *(["-l"] if literal else []), *keys)

    def wait_for(self, test, seconds: float, what: str):
        """Poll the screen until ``test(screen)`` is truthy and return that value; fail with the screen."""
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if result := test(screen):
                return result
            if self.pane("#{pane_dead}") == "1":
                raise AssertionError(f"proton-tui exited while waiting for {what}:\n{screen}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not on screen after {seconds:.0f} s; the screen:\n{screen}")
            time.sleep(POLL_S)

    def kill(self) -> None:
        """End the server and everything in it, and remove its socket (kill-server leaves the file)."""
        self.tmux("kill-server", check=False)
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)


def leftover_processes(marker: str) -> list[str]:
    """proton-tui or payload processes started by this test: the marker (its tmp folder) is in their command line
    or is their working directory. (The tmux server, whose command line names proton-tui too, is not one.)"""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = [arg.decode(errors="replace") for arg in (entry / "cmdline").read_bytes().split(b"\0") if arg]
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z" or not argv or os.path.basename(argv[0]).startswith("tmux"):
            continue
        if not any(os.path.basename(arg) in ("proton-tui", "vecadd.py") for arg in argv):
            continue
        if any(marker in arg for arg in argv) or cwd.startswith(marker):
            found.append(f"{entry.name}: {' '.join(argv)} (cwd {cwd})")
    return found


def start_proton_tui(term: Terminal, tmp_path: Path, *args: str, linger: bool = False,
                     size: tuple[int, int] = (WIDTH, HEIGHT), script: Path | None = None) -> Path:
    """Run the installed proton-tui with `args` in the terminal; the file its exit status will be written to. With
    `linger` the shell stays a while after it, so the terminal's state is read while a program still runs there.
    `script`: another installation's proton-tui (then run as that installation alone: no PYTHONPATH)."""
    hidden = ("TMUX", "TMUX_PANE", "COLUMNS", "LINES", "TEXTUAL", "NO_COLOR") + (("PYTHONPATH", "VIRTUAL_ENV")
                                                                              if script else ())
    script = script or Path(sys.executable).with_name("proton-tui")
    assert script.is_file(), f"no proton-tui console script at {script}"
    env = {key: value for key, value in os.environ.items() if key not in hidden}
    rc_file = tmp_path / f"exit-status-{uuid.uuid4().hex[:8]}"
    # sh records proton-tui's exit status (tmux's own #{pane_dead_status} is not always filled in).
    after = "; sleep 60" if linger else ""
    term.start(["sh", "-c", '"$@"; echo "$?" > "$0"' + after, str(rc_file), str(script), *args], tmp_path, env, size)
    return rc_file


def exit_status(term: Terminal, rc_file: Path, seconds: float, what: str) -> str:
    """proton-tui's exit status once it has exited (and its terminal closed); fails with the screen otherwise."""
    deadline = time.monotonic() + seconds
    while not (code := rc_file.read_text() if rc_file.is_file() else "").endswith("\n"):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not end proton-tui; the screen:\n{term.screen()}")
        time.sleep(POLL_S)
    while term.pane("#{pane_dead}") != "1":  # its terminal closed too
        if time.monotonic() > deadline:
            raise AssertionError(f"the pane is still open after proton-tui exited:\n{term.screen()}")
        time.sleep(POLL_S)
    return code.strip()


def assert_nothing_left(marker: str) -> None:
    deadline = time.monotonic() + 10  # a killed child may take a moment to leave the process table
    while left := leftover_processes(marker):
        if time.monotonic() > deadline:
            raise AssertionError("processes left behind after quitting:\n" + "\n".join(left))
        time.sleep(POLL_S)
