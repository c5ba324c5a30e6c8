"""Proton `.hatchet` captures: the model (`profile`), the file reader (`reader`), large files read in pieces
(`pieces`), loading (`loader`), and opening a capture complete with what its run says (`opener`)."""

from proton_tui.hatchet.errors import CaptureError, LoadCancelled
from proton_tui.hatchet.loader import PendingLoad, RunFacts, load_profile
from proton_tui.hatchet.opener import open_capture, pending_capture
from proton_tui.hatchet.profile import KernelStats, Profile

__all__ = ["CaptureError", "KernelStats", "LoadCancelled", "PendingLoad", "Profile", "RunFacts", "load_profile",
           "open_capture", "pending_capture"]
