"""What reading a capture raises: `CaptureError` for a file that cannot be read, `LoadCancelled` for a read
stopped on request."""


class CaptureError(Exception):
    """A capture that cannot be read; the message is one line that names the file."""


class LoadCancelled(Exception):
    """The load was cancelled (the user quit while it ran)."""
