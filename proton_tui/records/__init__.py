"""The records proton-tui writes beside what it ran (run.json, a rank's sidecar, check.json, doctor.json), typed:
each record is one msgspec Struct with one write and one read (`base`: run.json and what every record shares;
`ranks`: the sidecar of each profiled process of a workload; `jobs`: check.json and doctor.json)."""

from proton_tui.records.base import *  # noqa: F403
from proton_tui.records.base import _read, _write  # noqa: F401
from proton_tui.records.jobs import *  # noqa: F403
from proton_tui.records.ranks import *  # noqa: F403
