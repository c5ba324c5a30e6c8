"""Opening a capture as proton-tui shows it: read once, complete from the start with what its run says (the GPU a
pinned run chose, an instrumentation capture's launches, CTAs, sampled warps and SM clock), never changed after.

Every way in (``view``, ``diff``, the TUI's viewer and compare, a run's own capture) opens through here: a capture
opened on its own is completed by the run.json beside it when that run wrote it."""

from __future__ import annotations

from pathlib import Path

from proton_tui.hatchet.cycles import facts_from_record
from proton_tui.hatchet.devices import device_label
from proton_tui.hatchet.loader import PendingLoad, RunFacts
from proton_tui.hatchet.profile import Profile
from proton_tui.records import RUN_JSON, RecordError, RunRecord, read_run_record

BESIDE = f"{RUN_JSON} beside the capture"  # where the facts of a capture opened on its own come from
PINNING_DEVICE_TYPES = {"CUDA_VISIBLE_DEVICES": "CUDA", "HIP_VISIBLE_DEVICES": "HIP", "ROCR_VISIBLE_DEVICES": "HIP"}


def record_beside(path: Path) -> RunRecord | None:
    """The run.json in the capture's folder when it is the record of the run that wrote this capture."""
    try:
        record = read_run_record(Path(path).parent / RUN_JSON)
    except RecordError:
        return None
    if record.capture is None:
        return None
    try:
        same = Path(record.capture).resolve() == Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return record if same else None


def pinned_devices(record: RunRecord) -> tuple[dict[str, str], str] | None:
    """For a run pinned to one GPU: how its capture's device 0 is renamed to the GPU the user chose
    ({"CUDA:0": "CUDA:1"}) and the note that says so; None for a run not pinned."""
    if (pinned := record.pinned_to) is None:
        return None
    chosen, variable, value = pinned
    device_type = PINNING_DEVICE_TYPES.get(variable)
    if device_type is None:
        return None
    seen, chosen_label = device_label(device_type, 0), device_label(device_type, chosen)
    return ({seen: chosen_label},
            f"{chosen_label} is the GPU chosen, pinned with {variable}={value}: the capture file calls it {seen}")


def run_facts(record: RunRecord | None, source: str = "the run", sm_clock_khz: float | None = None,
              clock_flag: str = "--sm-clock-khz") -> RunFacts:
    """What `record` (and the SM clock the user gave) says of its capture, for the loader to build in."""
    if record is None:
        return RunFacts(sm_clock_khz=sm_clock_khz, clock_flag=clock_flag)
    device_map, note = pinned_devices(record) or (None, None)
    return RunFacts(device_map, note, facts_from_record(record, source), sm_clock_khz, clock_flag)


def pending_capture(path: str | Path, record: RunRecord | None = None, sm_clock: float | None = None, *,
                    show_internal: bool = False, settled: bool = False) -> PendingLoad:
    """A capture about to be opened (see PendingLoad): checked and mapped now, completed by `record` (else the
    run.json beside it) and `sm_clock` (kHz) as it is read. Raises CaptureError."""
    path = Path(path)
    source = "the run"
    if record is None and (record := record_beside(path)) is not None:
        source = BESIDE
    return PendingLoad(path, show_internal, settled, run_facts(record, source, sm_clock))


def open_capture(path: str | Path, record: RunRecord | None = None, sm_clock: float | None = None, *,
                 show_internal: bool = False, settled: bool = False) -> Profile:
    """The capture at `path`, complete (see `pending_capture`). Raises CaptureError with a one-line reason."""
    pending = pending_capture(path, record, sm_clock, show_internal=show_internal, settled=settled)
    try:
        return pending.finish()
    finally:
        pending.close()
