"""A device's label as every view shows it and run records rename it: its type, a colon, its index ("CUDA:0")."""

from __future__ import annotations


def device_label(device_type: str, device_id: object) -> str:
    """The label of device `device_id` of `device_type`: ``device_label("CUDA", 0) == "CUDA:0"``."""
    return f"{device_type}:{device_id}"


def device_index(label: str) -> str:
    """The index part of a device label: ``device_index("CUDA:1") == "1"``."""
    return label.partition(":")[2]
