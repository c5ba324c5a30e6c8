"""Proton `.hatchet` captures: the model (`profile`), the file reader (`reader`), large files read in pieces
(`pieces`), and loading (`loader`)."""

from .loader import PendingLoad, load_profile
from .profile import KernelStats, Profile
from .reader import CaptureError, LoadCancelled

__all__ = ["CaptureError", "KernelStats", "LoadCancelled", "PendingLoad", "Profile", "load_profile"]
