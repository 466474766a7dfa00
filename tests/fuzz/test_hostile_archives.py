"""The crafted archives of hostile_archives.py: each loads or fails with a SerializationError that says what is
wrong, within the fuzzers' deadline, and loading writes nothing."""

from __future__ import annotations

import os

import pytest
from fuzzing import deadline
from hostile_archives import CRAFTED, shared_tuples

from tsjit.errors import SerializationError
from tsjit.serialization import load
from tsjit.serialization.archive_reader import ArchiveReader
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
