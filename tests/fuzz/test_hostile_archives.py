"""The crafted archives of hostile_archives.py: each loads or fails with a SerializationError that says what is
wrong, within the fuzzers' deadline, and loading writes nothing."""

from __future__ import annotations

import os

import pytest
from fuzzing import deadline
from hostile_archives import CRAFTED, shared_tuples

from tsjit.api.archive import load
from tsjit.api.archive import load as load_with_limits
from tsjit.errors import SerializationError
from tsjit.serialization.archive_reader import ArchiveLimits, ArchiveReader
from tsjit.serialization.unpickler import loads

TRUSTED = {name: case for name, case in CRAFTED.items() if name != "setstate that never ends"}


@pytest.mark.parametrize("name", sorted(TRUSTED))
def test_crafted_archive(name, tmp_path, monkeypatch):
    data, message = TRUSTED[name]
    monkeypatch.chdir(tmp_path)
    with deadline():
        if message is None:
            load(data)
        else:
            with pytest.raises(SerializationError, match=message):
                load(data)
    assert os.listdir(tmp_path) == []


def test_shared_tuples_stay_shared_and_cost_linear_time():
    """60 levels of memo-shared tuples: 2**60 paths, 61 objects; each level's two elements are one object."""
    with deadline():  # checking the list's element walked every path: 2**20 took 1.6 s
        value = loads(b"\x80\x02](" + shared_tuples(60) + b"e.", "data.pkl")[0]
    for _ in range(60):
        assert value[0] is value[1]
        value = value[0]
    assert value == ()


def test_a_member_that_does_not_fit_in_memory(monkeypatch):
    data, _ = CRAFTED["int attribute holding a nested list"]
    reader = ArchiveReader(data)

    def out_of_memory(info):
        raise MemoryError

    monkeypatch.setattr(reader, "_inflate", out_of_memory)
    with pytest.raises(SerializationError, match="does not fit in memory"):
        reader.read_record("data.pkl")


def memoized_lists(count: int) -> bytes:
    """`count` empty lists, list i in memo entry i, all on the stack above a MARK."""
    return b"(" + b"".join(b"]r" + index.to_bytes(4, "little") for index in range(count))


@pytest.mark.parametrize("name, body", [
    ("a chain of lists", b"]q\x00" + b"".join(b"(j" + (k - 1).to_bytes(4, "little") + b"lr" + k.to_bytes(4, "little")
                                             for k in range(1, 300))),
    # filled from the inside out, each list is 1 deep when appended: depth must reach the holders afterwards
    ("lists filled after they were nested", memoized_lists(300) + b"".join(
        b"j" + (k + 1).to_bytes(4, "little") + b"(j" + k.to_bytes(4, "little") + b"e"
        for k in reversed(range(299))) + b"l"),
    ("a list holding itself", b"]q\x00(h\x00e"),
])
def test_nesting_is_bounded_however_it_is_built(name, body):
    with pytest.raises(SerializationError, match=r"nest too deeply(.|\n)*ArchiveLimits.max_nesting=200"):
        loads(b"\x80\x02" + body + b".", "data.pkl")


def test_nesting_within_the_limit_and_wide_values_load():
    nested = loads(b"\x80\x02" + b"]" + b"(]" * 150 + b"e" * 150 + b".", "data.pkl")
    for _ in range(150):
        nested = nested[0]
    assert nested == []
    assert len(loads(b"\x80\x02(" + b"]" * 10000 + b"l.", "data.pkl")) == 10000


def test_the_memo_is_bounded():
    with pytest.raises(SerializationError, match=r"memo is full(.|\n)*max_memo_entries=3; to raise it"):
        loads(b"\x80\x02N" + b"q\x00q\x01q\x02q\x03" + b".", "data.pkl", limits=ArchiveLimits(max_memo_entries=3))


def test_code_files_are_bounded():
    data, _ = CRAFTED["int attribute holding a nested list"]
    with pytest.raises(SerializationError, match=r"code file hostile/code/__torch__.py of \d+ bytes(.|\n)*"
                                                 r"max_code_size=100"):
        load_with_limits(data, _limits=ArchiveLimits(max_code_size=100))
