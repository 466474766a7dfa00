"""Fuzzing tsjit.load with mutated archives: every outcome is a load or a tsjit error, and nothing runs.

Valid archives (written by tsjit and by torch.jit, with submodules, storages shared by views, a `__setstate__`
class, an enum and a NamedTuple) and the crafted archives of hostile_archives.py are mutated at random: bytes of
the zip flipped or cut off; members rewritten with bytes flipped, inserted, deleted or truncated (behind a valid
CRC, so the mutation reaches the unpickler and the source importer); members dropped, renamed or duplicated;
pickle opcodes of data.pkl deleted, repeated, swapped for another opcode or given another argument; pickle
opcodes that call a canary function of this module spliced into data.pkl; code/ files edited as text. Loading
must then either succeed or raise a TsjitError within the deadline (fuzzing.py); any other exception is a bug.
The canary must never be called, and loading writes no file.
"""

from __future__ import annotations

import io
import os
import pickletools
import sys
import zipfile

import pytest
import torch
from fuzzing import FUZZ, deadline, mutated_text
from hostile_archives import CRAFTED
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "serialization"))

import archive_programs  # noqa: E402

from tsjit.api.archive import load  # noqa: E402
from tsjit.api.module import script_module  # noqa: E402
from tsjit.errors import TsjitError  # noqa: E402
from tsjit.serialization.serializer import serialize  # noqa: E402

CANARY_CALLS: list = []


def canary(*args):
    """Must never run: the spliced pickle opcodes name it as a global."""
    CANARY_CALLS.append(args)


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(3, 4)
        self.second = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(4, 2))
        self.scale = 0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x)) * self.scale


def torch_bytes(scripted) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    return buffer.getvalue()


def base_archives() -> list[bytes]:
    archives = [serialize(script_module(TwoLayers())), serialize(script_module(archive_programs.SharedStorage()))]
    try:
        archives += [torch_bytes(archive_programs.scripted_with_objects()), torch_bytes(torch.jit.script(TwoLayers()))]
    except Exception:  # noqa: BLE001 - without torch.jit, only tsjit's archives are fuzzed
        pass
    return archives


BASES = base_archives()
CORPUS = BASES + [data for name, (data, _) in sorted(CRAFTED.items()) if name != "setstate that never ends"]


def members(data: bytes) -> list[tuple[str, bytes]]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return [(name, archive.read(name)) for name in archive.namelist()]


def rezip(entries: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            archive.writestr(zipfile.ZipInfo(name), data)
    return buffer.getvalue()


def mutate_bytes(data: bytes, draw) -> bytes:
    """Flip, insert or delete a few bytes, or truncate."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        position = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[position] ^= draw(st.integers(1, 255))
        elif kind == "insert":
            data[position:position] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[position:position + draw(st.integers(1, 8))]
        else:
            del data[position:]
    return bytes(data)


CANARY_GLOBAL = f"c{__name__}\ncanary\n".encode()
SPLICES = [CANARY_GLOBAL + b")R", CANARY_GLOBAL + b")\x81}b", b"cos\nsystem\nX\x02\x00\x00\x00ls\x85R",
           b"cbuiltins\neval\nX\x01\x00\x00\x001\x85R", b"\x8a\x09" + b"\xff" * 9, b"h\xff", b"(" * 50 + b"t" * 50]


@st.composite
def mutated_archives(draw):
    base = draw(st.sampled_from(CORPUS))
    mode = draw(st.sampled_from(["zip bytes", "member bytes", "member structure", "splice", "pickle opcodes",
                                 "code text"]))
    if mode == "zip bytes":
        return mutate_bytes(base, draw)
    entries = members(base)
    index = draw(st.integers(0, len(entries) - 1))
    name, data = entries[index]
    if mode == "member bytes":
        entries[index] = (name, mutate_bytes(data, draw))
    elif mode in ("splice", "pickle opcodes"):
        pickle_index = next(i for i, (n, _) in enumerate(entries) if n.endswith("/data.pkl"))
        name, data = entries[pickle_index]
        mutate = splice if mode == "splice" else mutate_opcodes
        entries[pickle_index] = (name, mutate(data, draw))
    elif mode == "code text":
        code = [i for i, (n, _) in enumerate(entries) if "/code/" in n and n.endswith(".py")]
        if code:
            index = draw(st.sampled_from(code))
            name, data = entries[index]
            entries[index] = (name, draw(mutated_text([data.decode()], CODE_FRAGMENTS)).encode())
    else:
        entries = restructure(entries, index, draw)
    return rezip(entries)


def splice(data: bytes, draw) -> bytes:
    position = draw(st.integers(2, len(data)))
    return data[:position] + draw(st.sampled_from(SPLICES)) + data[position:]


OPCODES = [b"(", b"N", b"\x88", b"K\x07", b"J\xff\xff\xff\x7f", b"X\x01\x00\x00\x00a", b")", b"\x85", b"\x86",
           b"t", b"]", b"e", b"l", b"}", b"d", b"u", b"s", b"q\x00", b"h\x00", b"j\x00\x01\x00\x00", b"\x81", b"R",
           b"b", b"Q", b".", b"0", b"ctorch\ndevice\n", b"c__torch__\nM\n", b"\x8a\x01\xff"]


def mutate_opcodes(data: bytes, draw) -> bytes:
    """Delete, repeat or replace whole opcodes (with their arguments), or change one argument's bytes."""
    try:
        positions = [position for _, _, position in pickletools.genops(data)]
    except Exception:  # noqa: BLE001 - a pickle the standard library cannot walk: mutate bytes instead
        return data
    bounds = list(zip(positions, positions[1:] + [len(data)]))
    for _ in range(draw(st.integers(1, 3))):
        start, end = draw(st.sampled_from(bounds))
        kind = draw(st.sampled_from(["delete", "repeat", "replace", "argument"]))
        if kind == "delete":
            data = data[:start] + data[end:]
        elif kind == "repeat":
            data = data[:end] + data[start:end] * draw(st.integers(1, 300)) + data[end:]
        elif kind == "replace":
            data = data[:start] + draw(st.sampled_from(OPCODES)) + data[end:]
        elif end - start > 1:
            position = draw(st.integers(start + 1, end - 1))
            data = data[:position] + bytes([draw(st.integers(0, 255))]) + data[position + 1:]
    return data


CODE_FRAGMENTS = ["self", "torch.add(x, 1)", "CONSTANTS.c0", "CONSTANTS.c99", "__torch__.", "ops.aten.save",
                  "torch.save(x, \"f\")", "while True:\n      pass\n", ": int", ": Tensor", "-> None", "\n  ",
                  "\n    ", "(", ")", "[", "]", ",", ".", "=", "def ", "class ", "Module", "return ", "List[int]",
                  "Final[int] = 3", "__annotations__[\"0\"] = int\n", "__setstate__", "unchecked_cast(int, x)"]


def restructure(entries, index, draw):
    name, data = entries[index]
    kind = draw(st.sampled_from(["drop", "rename", "duplicate under another name", "add junk"]))
    if kind == "drop":
        return entries[:index] + entries[index + 1:]
    if kind == "rename":
        new_name = draw(st.sampled_from(["../escape", "/abs", name + "x", name.replace("/", "/../", 1),
                                         "other/" + name.split("/", 1)[1], name.split("/", 1)[0] + "/version"]))
        return entries[:index] + [(new_name, data)] + entries[index + 1:]
    if kind == "duplicate under another name":
        return entries + [(name.split("/", 1)[0] + "/code/__torch__/extra.py", data)]
    return entries + [(name.split("/", 1)[0] + "/" + draw(st.sampled_from(["data/99", "code/x.py", "junk"])),
                       draw(st.binary(max_size=64)))]


@FUZZ
@given(archive=mutated_archives(), trusted=st.booleans())
def test_mutated_archives_load_or_fail_with_a_tsjit_error(archive, trusted, tmp_path_factory):
    directory = tmp_path_factory.mktemp("cwd")
    previous = os.getcwd()
    os.chdir(directory)
    try:
        with deadline():
            load(archive, trusted=trusted)
    except TsjitError as error:
        str(error)
    finally:
        os.chdir(previous)
    assert CANARY_CALLS == []
    assert os.listdir(directory) == []


@pytest.mark.parametrize("index", range(len(BASES)))
def test_unmutated_archives_load(index):
    load(BASES[index])
