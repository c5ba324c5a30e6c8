"""Proton `.hatchet` captures: the model (`profile`), the file reader (`reader`), large files read in pieces
(`pieces`), and loading (`loader`)."""

from .errors import CaptureError, LoadCancelled
from .loader import PendingLoad, load_profile
from .profile import KernelStats, Profile

__all__ = ["CaptureError", "KernelStats", "LoadCancelled", "PendingLoad", "Profile", "load_profile"]
