"""The run folder ``<output>/<YYYYmmdd-HHMMSS>-<name>/`` and its ``run.json``. A run never overwrites another."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from proton_tui.records import RUN_JSON

__all__ = ["DEFAULT_OUTPUT", "RUN_JSON", "STDOUT_LOG", "create_run_dir", "relevant_env"]

DEFAULT_OUTPUT = Path("proton-runs")  # where runs and checks go unless told otherwise
STDOUT_LOG = "stdout.log"
# Variables that change what a run does or which libraries it loads, recorded in run.json.
RELEVANT_ENV_PREFIXES = ("TRITON_", "PROTON_", "CUDA_", "HIP_", "ROCR_", "ROCM_", "ROCPROF", "HSA_", "NVIDIA_")
RELEVANT_ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONUNBUFFERED", "VIRTUAL_ENV", "CONDA_PREFIX")


def create_run_dir(output: Path, name: str, now: datetime | None = None) -> Path:
    """Create a new, empty run folder; a taken name gets ``-2``, ``-3``, … (mkdir is the atomic claim)."""
    output.mkdir(parents=True, exist_ok=True)
    stem = f"{(now or datetime.now()).strftime('%Y%m%d-%H%M%S')}-{name}"
    for attempt in range(1, 10_000):
        run_dir = output / (stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            run_dir.mkdir()
        except FileExistsError:
            continue
        return run_dir.resolve()
    raise FileExistsError(f"{output / stem}: too many runs with this name in the same second")


def relevant_env(env: dict[str, str]) -> dict[str, str]:
    """The child's variables that matter for reproducing a run, sorted by name."""
    return {key: env[key] for key in sorted(env)
            if key.startswith(RELEVANT_ENV_PREFIXES) or key in RELEVANT_ENV_NAMES}

