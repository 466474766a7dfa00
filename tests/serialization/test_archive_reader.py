"""Reading untrusted zips (tsjit.serialization.archive_reader): every bad archive is a SerializationError.

Path traversal and misplaced names, several top-level directories, duplicate members, zip bombs (by declared
size and by compression ratio, refused before inflating), directories that lie about sizes, truncated and
corrupt zips, encryption, unknown compression methods and bad version records; plus the things a reader
must accept: torch's layout, `.data/version`, stored and deflated members, non-seekable files.
"""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from tsjit.errors import NotAnArchiveError, SerializationError
from tsjit.serialization.archive_reader import ArchiveLimits, ArchiveReader
from tsjit.serialization.archive_writer import ALIGNMENT, ArchiveWriter


def make_zip(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def valid(**extra: bytes) -> dict[str, bytes]:
    return {"m/version": b"3\n", "m/data.pkl": b"\x80\x02N.", **extra}


def test_reads_records_relative_to_the_top_level_directory():
    reader = ArchiveReader(make_zip(valid(**{"m/code/__torch__.py": b"x"})))
    assert reader.prefix == "m/" and reader.version() == 3
    assert reader.read_record("code/__torch__.py") == b"x" and reader.records_under("code") == ["code/__torch__.py"]
    assert reader.byteorder() == "little"


def test_version_six_and_later_live_in_dot_data():
    reader = ArchiveReader(make_zip({"m/.data/version": b"10\n", "m/data.pkl": b""}))
    assert reader.version() == 10


def test_writer_aligns_stored_members_like_torch():
    writer = ArchiveWriter("m")
    for index in range(5):
        writer.write_record(f"data/{index}", b"x" * (index * 37 + 1))
    data = writer.finish()
    for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
        local_header = 30 + len(info.filename.encode()) + len(info.extra)
        assert (info.header_offset + local_header) % ALIGNMENT == 0
    assert ArchiveReader(data).read_record("data/4") == b"x" * 149


@pytest.mark.parametrize("name", ["../m/version", "/m/version", "m/../../etc/passwd", "m/./version", "m\\version",
                                  "C:/m/version", "version"])
def test_unsafe_member_names_are_refused(name):
    with pytest.raises(SerializationError, match="unsafe or misplaced name"):
        ArchiveReader(make_zip({**valid(), name: b"3\n"}))


def test_exactly_one_top_level_directory():
    with pytest.raises(SerializationError, match="exactly one top-level directory"):
        ArchiveReader(make_zip({**valid(), "other/version": b"3\n"}))
    with pytest.raises(SerializationError, match="no 'version' record"):
        ArchiveReader(make_zip({"x/y/version": b"3\n"})).version()


def test_duplicate_members_are_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("m/version", b"3\n")
        archive.writestr("m/version", b"4\n")
    with pytest.raises(SerializationError, match="two members named"):
        ArchiveReader(buffer.getvalue())


def test_zip_bombs_are_refused_before_inflating():
    bomb = make_zip(valid(**{"m/data/0": bytes(50 << 20)}), zipfile.ZIP_DEFLATED)
    assert len(bomb) < 200_000
    with pytest.raises(SerializationError, match="zip bomb"):
        ArchiveReader(bomb)
    with pytest.raises(SerializationError, match="more than 1000"):
        ArchiveReader(make_zip(valid(**{"m/data/0": bytes(2000)})), ArchiveLimits(max_member_size=1000))
    with pytest.raises(SerializationError, match="would inflate"):
        ArchiveReader(make_zip(valid(**{"m/a": bytes(600), "m/b": bytes(600)})), ArchiveLimits(max_total_size=1000))
    with pytest.raises(SerializationError, match="members"):
        ArchiveReader(make_zip({f"m/{i}": b"" for i in range(20)}), ArchiveLimits(max_members=10))


def set_central_size(data: bytes, name: str, size: int) -> bytes:
    """Rewrite the uncompressed size the central directory (and local header) declare for `name`."""
    data = bytearray(data)
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            name_offset = start + (46 if signature == b"PK\x01\x02" else 30)
            if data[name_offset:name_offset + len(name)] == name.encode():
                data[start + offset:start + offset + 4] = struct.pack("<I", size)
            start += 4
    return bytes(data)


def test_a_directory_that_lies_about_sizes_is_caught():
    archive = make_zip(valid(**{"m/data/0": bytes(range(200))}))
    with pytest.raises(SerializationError, match="m/data/0"):
        ArchiveReader(set_central_size(archive, "m/data/0", 100)).read_record("data/0")


@pytest.mark.parametrize("cut", [0, 10, 22, 100, -30, -1])
def test_truncated_archives(cut):
    archive = make_zip(valid(**{"m/data/0": bytes(300)}))
    with pytest.raises(SerializationError):
        reader = ArchiveReader(archive[:cut] if cut > 0 else archive[:len(archive) + cut] if cut else b"")
        for name in reader.members:
            reader.read_record(name)


def test_corrupt_member_data_fails_its_crc():
    archive = bytearray(make_zip(valid(**{"m/data/0": b"A" * 64})))
    position = archive.find(b"A" * 64)
    archive[position] = ord("B")
    reader = ArchiveReader(bytes(archive))
    with pytest.raises(SerializationError, match="corrupt"):
        reader.read_record("data/0")


def test_encryption_and_unknown_compression_are_refused():
    archive = bytearray(make_zip(valid()))
    central = archive.find(b"PK\x01\x02")
    archive[central + 8] |= 1  # the "encrypted" flag
    with pytest.raises(SerializationError, match="encrypted"):
        ArchiveReader(bytes(archive))
    with pytest.raises(SerializationError, match="compression method"):
        ArchiveReader(make_zip(valid(), zipfile.ZIP_BZIP2))


@pytest.mark.parametrize("text", [b"0\n", b"11\n", b"abc", b"-3", b"", b"\xff"])
def test_bad_versions(text):
    with pytest.raises(SerializationError, match="version"):
        ArchiveReader(make_zip({"m/version": text})).version()


def test_not_a_zip():
    with pytest.raises(SerializationError, match="not a readable zip"):
        ArchiveReader(b"N." * 100)
    with pytest.raises(NotAnArchiveError, match="is a pickle"):
        ArchiveReader(b"\x80\x02N." * 100)


class Stream:
    """A binary file without seek (a pipe, a socket)."""

    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self.buffer.read(size)

    def seekable(self) -> bool:
        return False


def test_non_seekable_files_are_read_within_limits():
    archive = make_zip(valid())
    assert ArchiveReader(Stream(archive)).version() == 3
    with pytest.raises(SerializationError, match="larger than"):
        ArchiveReader(Stream(archive), ArchiveLimits(max_archive_bytes=100))


def test_missing_files_and_wrong_objects():
    with pytest.raises(SerializationError, match="cannot open"):
        ArchiveReader("/nonexistent/dir/model.pt")
    with pytest.raises(SerializationError, match="expected a path or a binary file"):
        ArchiveReader(42)
