"""Proton `.hatchet` captures: the model (`profile`), the file reader (`reader`), and loading (`loader`, with the
split loader for large files in `split`)."""

from .loader import TWO_PROCESS_MIN_BYTES, PendingLoad, load_profile
from .profile import KernelStats, Profile
from .reader import CaptureError

__all__ = ["TWO_PROCESS_MIN_BYTES", "CaptureError", "KernelStats", "PendingLoad", "Profile", "load_profile"]
