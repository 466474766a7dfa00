"""Reading TorchScript archives safely: a zip is untrusted input.

The reader checks the whole central directory before reading any member:

- member names are relative paths without `..`, backslashes, drive letters or NUL bytes, and all share one
  top-level directory (torch's own rule: `x/y/version` is not an archive); no name appears twice;
- declared sizes stay under per-member and total caps, and deflated members under a compression-ratio cap, so
  a zip bomb is refused before it is inflated; members are then inflated in chunks and cut off at the declared
  size, in case the directory lies;
- encryption and compression methods other than stored and deflated are refused.

Nothing is ever extracted to disk. Every failure, including a truncated or corrupt zip, is a
SerializationError naming the archive and the member.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass
from typing import BinaryIO

from tsjit.errors import NotAnArchiveError, SerializationError

MIN_VERSION = 1
MAX_VERSION = 10
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps on what an archive may make the reader allocate (override per call of `tsjit.load`)."""

    max_member_size: int = 1 << 34          # 16 GiB uncompressed per member
    max_total_size: int = 1 << 36           # 64 GiB uncompressed in all
    max_members: int = 1 << 16
    max_compression_ratio: int = 200        # only checked for deflated members above ratio_check_min_size
    ratio_check_min_size: int = 1 << 20
    max_archive_bytes: int = 1 << 36        # read into memory from non-seekable files
    max_setstate_steps: int = 1_000_000     # interpreter steps of each __setstate__ (with trusted=False)
    max_memo_entries: int = 1 << 22         # entries of a pickle's memo
    max_nesting: int = 200                  # containers inside containers in a pickle
    max_code_size: int = 1 << 26            # bytes of one code/ file

    def exceeded(self, what: str, limit: str) -> str:
        """The end of an error message: which limit was reached and how to raise it."""
        return (f"{what} (more than ArchiveLimits.{limit}={getattr(self, limit)}; to raise it, pass "
                f"_limits=ArchiveLimits({limit}=...) to tsjit.load)")


DEFAULT_LIMITS = ArchiveLimits()
_BAD_NAME = re.compile(r"(^/)|(^[A-Za-z]:)|\\|\x00")


class ArchiveReader:
    """The records of one archive, by name relative to its top-level directory (`data.pkl`, `code/...`)."""

    def __init__(self, source: str | os.PathLike | BinaryIO | bytes, limits: ArchiveLimits = DEFAULT_LIMITS):
        self.limits = limits
        self.label = _label(source)
        self._owned_file: BinaryIO | None = None  # a file opened here, which ZipFile.close leaves open
        self.zip = self._open(source)
        try:
            self.prefix, self.members = self._check_directory()
        except SerializationError:
            self.close()
            raise

    def _open(self, source) -> zipfile.ZipFile:
        file = self._file(source)
        if file is not source:
            self._owned_file = file
        try:
            return zipfile.ZipFile(file)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, KeyError, IndexError,
                OverflowError, NotImplementedError) as error:
            starts_as_pickle = _starts_as_pickle(file)
            if self._owned_file is not None:
                self._owned_file.close()
            if starts_as_pickle:
                raise NotAnArchiveError(f"{self.label} is a pickle, not a TorchScript archive (a zip): a file of "
                                        "torch.save in its legacy format (_use_new_zipfile_serialization=False) or "
                                        "of pickle.dump. Load it with torch.load(f, weights_only=True)") from None
            raise SerializationError(f"{self.label} is not a readable zip archive: {error}") from None

    def _file(self, source) -> BinaryIO:
        if isinstance(source, bytes | bytearray | memoryview):
            return io.BytesIO(bytes(source))
        if isinstance(source, str | os.PathLike):
            try:
                return open(source, "rb")  # noqa: SIM115 (owned by the ZipFile, closed by close())
            except OSError as error:
                raise SerializationError(f"cannot open {self.label}: {error.strerror}") from None
        if not hasattr(source, "read"):
            raise SerializationError(f"cannot load from a {type(source).__name__}: expected a path or a binary file")
        if _seekable(source):
            return source
        data = source.read(self.limits.max_archive_bytes + 1)
        if len(data) > self.limits.max_archive_bytes:
            raise SerializationError(f"{self.label} is larger than {self.limits.max_archive_bytes} bytes")
        return io.BytesIO(data)

    def close(self) -> None:
        """Close the zip and the file opened for it (nothing the caller passed in)."""
        self.zip.close()
        if self._owned_file is not None:
            self._owned_file.close()

    # ---- the central directory ------------------------------------------------------------------------------
    def _check_directory(self) -> tuple[str, dict[str, zipfile.ZipInfo]]:
        infos = self.zip.infolist()
        if len(infos) > self.limits.max_members:
            self.fail(self.limits.exceeded(f"has {len(infos)} members", "max_members"))
        repeated = [name for name, count in Counter(info.filename for info in infos).items() if count > 1]
        if repeated:
            self.fail(f"has two members named '{repeated[0]}'")
        placed = [(*self._check_member(info), info) for info in infos]
        tops = {top for top, _, _ in placed}
        if len(tops) != 1:
            self.fail("must hold exactly one top-level directory" + (f", found {sorted(tops)}" if tops else ""))
        self._check_total_size(infos)
        return tops.pop() + "/", {relative: info for _, relative, info in placed if relative}

    def _check_member(self, info: zipfile.ZipInfo) -> tuple[str, str]:
        """The top-level directory and relative name of a member whose name, size and method are safe."""
        name = info.filename
        parts = name.split("/")
        if _BAD_NAME.search(name) or any(p in ("..", ".") for p in parts) or len(parts) < 2 or not parts[0]:
            self.fail(f"has a member with an unsafe or misplaced name '{name}'")
        if info.flag_bits & 0x1:
            self.fail(f"member '{name}' is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            self.fail(f"member '{name}' uses unsupported compression method {info.compress_type}")
        self._check_member_size(info)
        relative = "/".join(parts[1:])
        if info.is_dir() or relative.endswith("/"):
            relative = ""
        return parts[0], relative

    def _check_member_size(self, info: zipfile.ZipInfo) -> None:
        limits = self.limits
        if info.file_size > limits.max_member_size:
            self.fail(f"member '{info.filename}' is {info.file_size} bytes (more than {limits.max_member_size})")
        if info.compress_type == zipfile.ZIP_DEFLATED and info.file_size > limits.ratio_check_min_size:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_compression_ratio:
                self.fail(f"member '{info.filename}' inflates {ratio:.0f} times (a zip bomb?)")

    def _check_total_size(self, infos: list[zipfile.ZipInfo]) -> None:
        total = sum(info.file_size for info in infos)
        if total > self.limits.max_total_size:
            self.fail(f"would inflate to {total} bytes (more than {self.limits.max_total_size})")

    # ---- records -------------------------------------------------------------------------------------------
    def has_record(self, name: str) -> bool:
        return name in self.members

    def records_under(self, directory: str) -> list[str]:
        """The record names inside `directory/` (e.g. "extra"), in archive order."""
        prefix = directory.rstrip("/") + "/"
        return [name for name in self.members if name.startswith(prefix)]

    def read_record(self, name: str) -> bytes:
        """The bytes of record `name`, inflated at most to its declared size."""
        info = self.members.get(name)
        if info is None:
            self.fail(f"has no record '{self.prefix}{name}'")
        try:
            return self._inflate(info)
        except SerializationError:
            raise
        except MemoryError:
            raise SerializationError(f"{self.label}: member '{info.filename}' ({info.file_size} bytes) does not "
                                     "fit in memory") from None
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as error:
            raise SerializationError(f"{self.label}: member '{info.filename}' is corrupt: {error}") from None

    def _inflate(self, info: zipfile.ZipInfo) -> bytes:
        chunks, size = [], 0
        with self.zip.open(info) as stream:
            while size <= info.file_size:
                chunk = stream.read(min(_CHUNK, info.file_size + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        if size != info.file_size:
            self.fail(f"member '{info.filename}' holds {size} bytes, not the declared {info.file_size}")
        return b"".join(chunks)

    def read_text(self, name: str) -> str:
        try:
            return self.read_record(name).decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"record '{self.prefix}{name}' is not UTF-8 text")

    def refuse_torch_save_file(self) -> None:
        """A NotAnArchiveError for the zip torch.save writes: `data.pkl` and its storages, but no `code/`."""
        if self.has_record("data.pkl") and not self.records_under("code"):
            raise NotAnArchiveError(
                f"{self.label} was written by torch.save (a state_dict, tensors or other pickled objects), not by "
                "torch.jit.save or tsjit.save, so it holds no TorchScript code. Load it with "
                "torch.load(f, weights_only=True); put a state_dict into its module with module.load_state_dict")

    def version(self) -> int:
        """The archive's version (`.data/version`, written from version 6 on, or `version`): 1..10."""
        record = next((name for name in (".data/version", "version") if self.has_record(name)), None)
        if record is None:
            self.fail("has no 'version' record (is it a TorchScript archive?)")
        text = self.read_text(record).strip()
        if not (text.isdigit() and len(text) <= 4):
            self.fail(f"has a malformed version record {text[:20]!r}")
        version = int(text)
        if not MIN_VERSION <= version <= MAX_VERSION:
            self.fail(f"has version {version}; supported versions are {MIN_VERSION} to {MAX_VERSION}")
        return version

    def byteorder(self) -> str:
        if not self.has_record("byteorder"):
            return "little"
        order = self.read_text("byteorder").strip()
        if order not in ("little", "big"):
            self.fail(f"has an unknown byteorder {order[:20]!r}")
        return order

    def fail(self, message: str) -> None:
        raise SerializationError(f"{self.label} {message}")


def _label(source) -> str:
    if isinstance(source, str | os.PathLike):
        return f"archive '{os.fspath(source)}'"
    return "the archive"


def _starts_as_pickle(file: BinaryIO) -> bool:
    """Whether a file starts with a pickle's PROTO opcode (protocol 2 or later, as torch.save writes)."""
    try:
        file.seek(0)
        head = file.read(2)
    except (OSError, ValueError):
        return False
    return len(head) == 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _seekable(source) -> bool:
    try:
        return bool(source.seekable())
    except (AttributeError, OSError, ValueError):
        return False
