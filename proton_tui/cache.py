"""What proton-tui keeps between runs and may remake at any time: its cache folder, $XDG_CACHE_HOME/proton-tui
(default ~/.cache/proton-tui); in it the interpreter probes (`engine.probe`) and, where Python cannot keep the
bytecode of the modules proton-tui imports beside them, that bytecode (`keep_bytecode`)."""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from pathlib import Path

# The module whose bytecode tells whether the packages proton-tui imports have theirs: numpy, the largest of them
# (compiled from its source, its import took 0.40 s on the H200 box against 0.08 s for Python's own start).
WITNESS = "numpy"


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "proton-tui"


def keep_bytecode() -> Path | None:
    """In proton-tui's own process (on a terminal: `entry`): when the packages it imports have no bytecode beside
    their sources and Python may not write it there (PYTHONDONTWRITEBYTECODE, a folder it cannot write: an image
    installed without bytecode), so that every start compiles them again, keep their bytecode in the cache's
    `bytecode` folder instead (Python's `sys.pycache_prefix`); never beside a source. Processes proton-tui starts keep
    the environment they were given. The folder used, or None: the bytecode beside the sources is read (or written)
    as usual, or the user chose a prefix of their own (PYTHONPYCACHEPREFIX)."""
    if sys.pycache_prefix is not None:
        return None
    try:
        spec = find_spec(WITNESS)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.cached or os.path.exists(spec.cached):
        return None
    package = os.path.dirname(os.path.dirname(spec.cached))
    if not sys.dont_write_bytecode and os.access(package, os.W_OK):
        return None  # Python writes it beside the sources on this start
    try:
        folder = cache_home().absolute() / "bytecode"
        folder.mkdir(parents=True, exist_ok=True)
        own = all(os.stat(path).st_uid == os.getuid() for path in (folder.parent, folder))
    except (RuntimeError, OSError):  # no home folder to be found, or none to write in: as before
        return None
    if not own or not os.access(folder, os.W_OK):  # another user's folder is not read as code; none to write in
        return None
    sys.pycache_prefix = str(folder)
    sys.dont_write_bytecode = False
    return folder
