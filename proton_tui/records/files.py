"""Reading and writing a record: whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import msgspec


class RecordError(ValueError):
    """A record file that cannot be read as its record: the message is one line naming the file."""


class UnwrittenError(OSError):
    """A file that could not be written whole (a full disk, a file-size limit, no rights): one line naming it."""

    def __init__(self, path: Path, error: OSError):
        super().__init__(error.errno, f"{path}: cannot be written: {error.strerror or error}")

    def __str__(self) -> str:
        return self.strerror


_ENCODER = msgspec.json.Encoder(enc_hook=str)  # a value JSON has no type for is written as its text


def _write(path: Path, record: msgspec.Struct) -> Path:
    """Write a record as indented JSON through a temporary file renamed over `path`; nothing partial is left."""
    document = msgspec.json.format(_ENCODER.encode(record), indent=2) + b"\n"
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as error:
        raise UnwrittenError(path, error) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(document)
        os.replace(partial, path)
    except BaseException as error:
        Path(partial).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise UnwrittenError(path, error) from None
        raise
    return path


def _write_new(folder: Path, stem: str, record: msgspec.Struct) -> Path:
    """Write a record as `folder`/`stem`.json, or `stem`-2.json, -3, … where that name is taken: whole or not at all,
    never over a file already there (the name is claimed by a hard link, which fails where it exists), so several
    machines writing into one shared folder at once keep every report."""
    document = msgspec.json.format(_ENCODER.encode(record), indent=2) + b"\n"
    target = folder / f"{stem}.json"
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{stem}.", suffix=".partial", dir=folder)
    except OSError as error:
        raise UnwrittenError(target, error) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(document)
        for number in range(1, 10_000):
            target = folder / (f"{stem}.json" if number == 1 else f"{stem}-{number}.json")
            try:
                os.link(partial, target)
                return target
            except FileExistsError:
                continue
        raise FileExistsError(f"{folder / stem}.json and 9,999 more names are taken")
    except OSError as error:
        raise UnwrittenError(target, error) from None
    finally:
        Path(partial).unlink(missing_ok=True)


def _read(path: Path, kind: type[msgspec.Struct], name: str = "record"):
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise RecordError(f"{path}: {name} cannot be read: {error.strerror or error}") from None
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.DecodeError as error:
        raise RecordError(f"{path}: not a {name}: {error}") from None
