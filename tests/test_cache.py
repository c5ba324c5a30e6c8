"""Where Python cannot keep the bytecode of what proton-tui imports beside the sources (an image installed without
bytecode, PYTHONDONTWRITEBYTECODE set), proton-tui keeps it in its cache folder, never beside a source, and the
processes it starts keep the environment they were given. Run with the real numpy, laid out without its bytecode."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

from helpers import CLI, FIXTURES, on_a_terminal

TRACE = FIXTURES / "vecadd_trace.chrome_trace"  # its text view imports numpy (a trace's events as columns)


def numpy_without_bytecode(folder: Path, but_its_first: bool = False) -> Path:
    """A site folder holding the installed numpy as its sources alone (each file linked, no __pycache__); with
    `but_its_first`, its `__init__` has its bytecode beside it, as a package installed with bytecode has."""
    installed = Path(importlib.util.find_spec("numpy").origin).parent
    site = folder / "site"
    for source in (installed, installed.with_name("numpy.libs")):
        if not source.exists():
            continue
        for root, dirs, files in os.walk(source):
            dirs[:] = [name for name in dirs if name not in ("__pycache__", "tests")]
            there = site / Path(root).relative_to(installed.parent)
            there.mkdir(parents=True, exist_ok=True)
            for name in files:
                if not name.endswith(".pyc"):
                    (there / name).symlink_to(Path(root) / name)
    if but_its_first:
        first = site / "numpy" / "__init__.py"
        py_compile.compile(str(first), cfile=str(first.parent / "__pycache__" / f"__init__.{sys.implementation.cache_tag}.pyc"),
                           doraise=True)
    return site


def environment(tmp_path: Path, site: Path | None, **more: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPYCACHEPREFIX", "PYTHONPATH")}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache"), **more})
    return env


def pycache_folders(folder: Path) -> list[Path]:
    return [Path(root) for root, dirs, _ in os.walk(folder) if Path(root).name == "__pycache__"]


def test_bytecode_that_cannot_be_kept_beside_the_sources_is_kept_in_the_cache(tmp_path):
    site = numpy_without_bytecode(tmp_path)
    env = environment(tmp_path, site)
    plain = on_a_terminal("view", str(TRACE), "--plain", env=environment(tmp_path / "installed", None))
    first = on_a_terminal("view", str(TRACE), "--plain", env=env)
    assert first == plain and "vecadd" in first
    kept = tmp_path / "cache" / "proton-tui" / "bytecode"
    tag = sys.implementation.cache_tag
    numpy_code = kept / str(site / "numpy").lstrip(os.sep) / f"__init__.{tag}.pyc"
    assert numpy_code.is_file(), sorted(str(path) for path in kept.rglob("*"))[:20]
    assert pycache_folders(site) == []  # nothing written beside a source
    stamps = {path: path.stat().st_mtime_ns for path in kept.rglob("*.pyc")}
    assert on_a_terminal("view", str(TRACE), "--plain", env=env) == plain
    assert {path: path.stat().st_mtime_ns for path in kept.rglob("*.pyc")} == stamps  # read again, not rewritten


def test_a_command_whose_output_is_not_a_terminal_keeps_no_bytecode(tmp_path):
    """Under a launcher every rank starts at once, its output a pipe or a file: a cold cache on a shared home folder
    would be written by all of them; such a command starts as Python would start it."""
    site = numpy_without_bytecode(tmp_path)
    done = subprocess.run([CLI, "view", str(TRACE), "--plain"], capture_output=True, text=True,
                          env=environment(tmp_path, site))
    assert done.returncode == 0 and "vecadd" in done.stdout, done.stderr
    assert not (tmp_path / "cache" / "proton-tui" / "bytecode").exists()
    assert pycache_folders(tmp_path / "site") == []


def test_processes_proton_tui_starts_keep_the_environment_they_were_given(tmp_path):
    site = numpy_without_bytecode(tmp_path)
    script = ("import subprocess, sys\n"
              "from proton_tui.cache import keep_bytecode\n"
              "print(keep_bytecode() is not None, sys.dont_write_bytecode)\n"
              "subprocess.run([sys.executable, '-c', 'import sys; print(sys.pycache_prefix, sys.dont_write_bytecode)'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=environment(tmp_path, site))
    assert done.stdout.split("\n")[:2] == ["True False", "None True"], done.stderr


def test_bytecode_beside_the_sources_or_a_prefix_of_the_users_own_is_left_as_it_is(tmp_path):
    site = numpy_without_bytecode(tmp_path)
    installed = numpy_without_bytecode(tmp_path / "installed", but_its_first=True)
    script = "from proton_tui.cache import keep_bytecode; import sys; print(keep_bytecode(), sys.pycache_prefix)"
    for env, said in ((environment(tmp_path, installed), "None None"),  # numpy installed with its bytecode
                      (environment(tmp_path, site, PYTHONPYCACHEPREFIX=str(tmp_path / "mine")),
                       f"None {tmp_path / 'mine'}"),
                      ({**environment(tmp_path, site), "PYTHONDONTWRITEBYTECODE": ""}, "None None")):  # written beside
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
        assert done.stdout.strip() == said, (env.get("PYTHONPATH"), done.stderr)
    assert not (tmp_path / "cache").exists()


def test_without_a_home_folder_it_starts_as_before(tmp_path):
    """A container run as a user the system does not know, with no HOME: no cache folder to be had."""
    site = numpy_without_bytecode(tmp_path)
    env = {name: value for name, value in environment(tmp_path, site).items() if name not in ("HOME", "XDG_CACHE_HOME")}
    script = ("import os, pwd\n"
              "pwd.getpwuid = lambda uid: (_ for _ in ()).throw(KeyError(uid))  # not in the password file\n"
              "from proton_tui.cache import keep_bytecode; import sys; print(keep_bytecode(), sys.pycache_prefix)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "None None", done.stderr


def test_a_relative_cache_folder_is_kept_where_it_was_when_proton_tui_started(tmp_path):
    site = numpy_without_bytecode(tmp_path)
    script = "from proton_tui.cache import keep_bytecode; print(keep_bytecode())"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env=environment(tmp_path, site, XDG_CACHE_HOME="relative"))
    assert done.stdout.strip() == str(tmp_path / "relative" / "proton-tui" / "bytecode"), done.stderr


def test_a_cache_folder_that_cannot_be_written_or_is_another_users_is_not_used(tmp_path):
    """Without a folder to write in, every start would compile everything (the bytecode beside the sources is not
    read once a prefix is set); another user's folder would be read as code."""
    site = numpy_without_bytecode(tmp_path)
    script = "from proton_tui.cache import keep_bytecode; import sys; print(keep_bytecode(), sys.pycache_prefix)"
    (tmp_path / "file").write_text("")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=environment(tmp_path, site, XDG_CACHE_HOME=str(tmp_path / "file" / "x")))
    assert done.stdout.strip() == "None None", done.stderr
    other = "import os; os.getuid = (lambda uid: lambda: uid + 1)(os.getuid())  # as someone else\n" + script
    done = subprocess.run([sys.executable, "-c", other], capture_output=True, text=True,
                          env=environment(tmp_path, site))
    assert done.stdout.strip() == "None None", done.stderr
