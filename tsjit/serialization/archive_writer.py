"""Writing TorchScript archives: a zip with one top-level directory, laid out as torch.jit.save lays it out.

    m/extra/<name>               _extra_files, raw bytes (written first)
    m/data/0, m/data/1 ...       storage bytes of the tensors in data.pkl, little-endian, no header
    m/data.pkl                   the pickled module object
    m/code/__torch__.py ...      TorchScript source, one file per qualifier (deflated)
    m/constants.pkl              the pickled tuple CONSTANTS.c0, c1 ...; storages in m/constants/<k>
    m/version                    "<n>\\n": the oldest loader version that can run this code
    m/byteorder                  "little"

Like torch, every member's data starts on a 64-byte boundary (padding in a local extra field with id "FB"), so
storages can be memory-mapped; torch's reader does not need it, but it costs nothing.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
from typing import BinaryIO

from tsjit.errors import SerializationError

ALIGNMENT = 64
_LOCAL_HEADER_SIZE = 30
_EXTRA_HEADER_SIZE = 4
_ZIP64_EXTRA_SIZE = 20


class ArchiveWriter:
    """Collects the records of one archive under `<archive_name>/`; `finish()` writes the zip."""

    def __init__(self, archive_name: str = "archive"):
        self.archive_name = archive_name
        self.records: dict[str, tuple[bytes, bool]] = {}

    def write_record(self, name: str, data: bytes, compress: bool = False) -> None:
        """Add `<archive_name>/<name>` (stored, or deflated for source files)."""
        if name in self.records:
            raise SerializationError(f"archive record '{name}' written twice")
        self.records[name] = (data, compress)

    def finish(self) -> bytes:
        """The zip's bytes, members in the order they were written."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", allowZip64=True) as archive:
            for name, (data, compress) in self.records.items():
                info = zipfile.ZipInfo(f"{self.archive_name}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
                info.external_attr = 0o644 << 16
                if not compress:
                    info.extra = _alignment_padding(archive.start_dir, info.filename, len(data))
                archive.writestr(info, data)
        return buffer.getvalue()


def _alignment_padding(header_offset: int, filename: str, size: int) -> bytes:
    """An "FB" extra field that makes the member's data start on an ALIGNMENT boundary (zipfile appends its
    own 20-byte zip64 field to the local header of members it considers large)."""
    name_length = len(filename.encode("utf-8"))
    zip64_field = _ZIP64_EXTRA_SIZE if size * 1.05 > zipfile.ZIP64_LIMIT else 0
    unpadded = header_offset + _LOCAL_HEADER_SIZE + name_length + _EXTRA_HEADER_SIZE + zip64_field
    padding = -unpadded % ALIGNMENT
    return b"FB" + struct.pack("<H", padding) + b"Z" * padding


def archive_name_for(target: str | os.PathLike | BinaryIO) -> str:
    """The top-level directory torch uses: the file's base name without extension, or "archive"."""
    if isinstance(target, str | os.PathLike):
        stem = os.path.splitext(os.path.basename(os.fspath(target)))[0]
        return stem or "archive"
    return "archive"


def write_archive_bytes(target: str | os.PathLike | BinaryIO, data: bytes) -> None:
    """Write a finished archive to a path or a writable binary file object."""
    if isinstance(target, str | os.PathLike):
        with open(target, "wb") as handle:
            handle.write(data)
        return
    if not hasattr(target, "write"):
        raise SerializationError(f"cannot save to a {type(target).__name__}: expected a path or a binary file")
    target.write(data)
