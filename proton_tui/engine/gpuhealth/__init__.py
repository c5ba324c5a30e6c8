"""What the GPU itself said around a box check's run, and the rules that turn it into a likely cause of a slow GPU.

Readings come from NVML (the ``nvidia-ml-py`` binding, module ``pynvml``, imported only when a check reads a GPU;
``pip install 'proton-tui[gpu]'``). Around each GPU's run the check takes a snapshot before the process starts,
samples a few fast fields while it runs, and takes a snapshot right after it ends. Everything is a plain JSON
object (``readings``), stored in check.json as NVML reports it (clocks in MHz, power in mW, energy in mJ,
violation counters in ns, temperatures in °C); a field NVML refuses is left out and named in the snapshot's
``unread`` with NVML's reason.

The cause rules (``likely_causes``, ``explain``) are pure functions of those objects: no NVML needed to judge a
check read back from disk. Never imports Textual.

The package: ``causes`` (the rules), ``nvml`` (the reader), ``text`` (the detail pane's lines).
"""

from proton_tui.engine.gpuhealth.causes import (
    NO_CAUSE,
    Cause,
    Explanation,
    cause_label,
    explain,
    likely_causes,
    reason_names,
)
from proton_tui.engine.gpuhealth.nvml import (
    INSTALL_HINT,
    READINGS_SOURCE,
    SAMPLE_INTERVAL_S,
    Nvml,
    Watch,
    nvml_reason,
    summarise_samples,
    unread_readings,
)
from proton_tui.engine.gpuhealth.text import detail_lines

__all__ = [
    "INSTALL_HINT", "NO_CAUSE", "READINGS_SOURCE", "SAMPLE_INTERVAL_S", "Cause", "Explanation", "Nvml", "Watch",
    "cause_label", "detail_lines", "explain", "likely_causes", "nvml_reason", "reason_names", "summarise_samples",
    "unread_readings",
]
