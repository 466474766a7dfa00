"""Enums in TorchScript archives, against torch.jit.save / torch.jit.load: the `class Color(Enum):` definitions
and `__torch__.Color.RED` constants in the code, enum attributes pickled as `GLOBAL '__torch__ Color'` applied
to the value, and round trips tsjit->tsjit, tsjit->torch and torch->tsjit.

Enums loaded from an archive have no Python class in tsjit: their values are EnumValues (name and value), and a
Python member passed to a loaded function is converted by name and value, as torch.jit converts it."""

# ruff: noqa: UP006, UP035  (written as TorchScript users do)

from __future__ import annotations

import enum
import io
import pickletools
import re
import zipfile
from typing import Dict, List, Tuple

import pytest
import torch

from tsjit.api import script
from tsjit.api.archive import load, save
from tsjit.api.module import script_module
from tsjit.errors import TsjitError
from tsjit.ir import types as T

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


class Scale(enum.Enum):
    SMALL = 0.5
    LARGE = 2.0


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Palette(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.favourite = Color.GREEN
        self.moods = [Mood.HAPPY, Mood.SAD]
        self.scales = {"large": Scale.LARGE}
        self.level = Level.HIGH

    def forward(self, c: Color, x: torch.Tensor) -> Tuple[bool, Color, str, torch.Tensor, List[Color]]:
        y = x * self.scales["large"].value * self.level
        if c == Color.RED:
            y = y + 1
        return c == self.favourite, self.favourite, self.moods[1].value, y, [m for m in Color]


def choose(c: Color, m: Mood) -> Tuple[int, str, Color]:
    """Uses Scale only in constants: the archive still defines it."""
    s = Scale.SMALL if m == Mood.SAD else Scale.LARGE
    if c.value > 1:
        return c.value, s.name, Color.RED
    return -c.value, m.name, c


def tsjit_bytes(scripted) -> bytes:
    buffer = io.BytesIO()
    save(scripted, buffer)
    return buffer.getvalue()


def torch_bytes(scripted) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    return buffer.getvalue()


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name.partition("/")[2]: archive.read(name) for name in archive.namelist()}


def code(data: bytes) -> dict[str, str]:
    return {name: text.decode() for name, text in members(data).items() if name.endswith(".py")}


def plain(value):
    """Enum members (Python's or EnumValues) as (name, value) pairs, inside containers too."""
    if isinstance(value, enum.Enum | T.EnumValue):
        return value.name, value.value
    if isinstance(value, list | tuple):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


@pytest.fixture(scope="module", autouse=True)
def torch_knows_the_enums():
    """torch.jit turns loaded enum values into Python members only for Enum classes it has compiled itself."""
    torch.jit.script(Palette())
    torch.jit.script(choose)


MODULE_INPUTS = [(Color.RED, torch.ones(2)), (Color.GREEN, torch.arange(3.0))]
FUNCTION_INPUTS = [(Color.RED, Mood.SAD), (Color.GREEN, Mood.HAPPY)]


def test_module_code_and_constants_equal_torch_jit_save():
    ours, theirs = tsjit_bytes(script_module(Palette())), torch_bytes(torch.jit.script(Palette()))
    assert code(ours) == code(theirs)
    definitions = code(ours)["code/__torch__/test_enum_archives.py"]
    assert "class Color(Enum):\n  RED = 1\n  GREEN = 2\n" in definitions and '  HAPPY = "happy"\n' in definitions
    assert members(ours)["constants.pkl"] == members(theirs)["constants.pkl"]


def test_function_code_equals_torch_jit_save():
    ours, theirs = tsjit_bytes(script(choose)), torch_bytes(torch.jit.script(choose))
    assert code(ours) == code(theirs)
    assert "class Scale(Enum):\n  SMALL = 0.5\n  LARGE = 2.\n" in code(ours)["code/__torch__/test_enum_archives.py"]


def pickle_ops(data: bytes) -> list[tuple[str, object]]:
    """data.pkl's opcodes with memo writes dropped and memo reads shown as what they read (tsjit memoizes
    more values than torch.jit, which changes no value)."""
    memo: dict[int, object] = {}
    ops: list[tuple[str, object]] = []
    for opcode, argument, _ in pickletools.genops(members(data)["data.pkl"]):
        if "PUT" in opcode.name:
            memo[argument] = ops[-1]
        elif "GET" in opcode.name:
            ops.append(memo[argument])
        else:
            ops.append((opcode.name, argument))
    return ops


def test_enum_attributes_are_pickled_as_torch_pickles_them():
    ours = pickle_ops(tsjit_bytes(script_module(Palette())))
    assert ours == pickle_ops(torch_bytes(torch.jit.script(Palette())))
    color = ("GLOBAL", "__torch__.test_enum_archives Color")
    at = ours.index(("BINUNICODE", "favourite"))
    assert ours[at + 1:at + 4] == [color, ("BININT1", 2), ("REDUCE", None)]
    at = ours.index(("BINUNICODE", "level"))  # an IntEnum attribute is an int attribute, as torch.jit infers it
    assert ours[at + 1] == ("BININT1", 2)


def test_tsjit_save_torch_jit_load():
    loaded = torch.jit.load(io.BytesIO(tsjit_bytes(script_module(Palette()))))
    for args in MODULE_INPUTS:
        assert plain(loaded(*args)) == plain(Palette()(*args))
    assert loaded.favourite is Color.GREEN
    function = torch.jit.load(io.BytesIO(tsjit_bytes(script(choose))))
    for args in FUNCTION_INPUTS:
        assert function(*args) == choose(*args)


def test_torch_jit_save_tsjit_load():
    loaded = load(torch_bytes(torch.jit.script(Palette())))
    for args in MODULE_INPUTS:
        assert plain(loaded(*args)) == plain(Palette()(*args))
    assert plain(loaded.favourite) == ("GREEN", 2) and isinstance(loaded.favourite, T.EnumValue)
    assert plain(loaded.moods) == [("HAPPY", "happy"), ("SAD", "sad")]
    function = load(torch_bytes(torch.jit.script(choose)))
    for args in FUNCTION_INPUTS:
        assert plain(function(*args)) == plain(choose(*args))


def test_tsjit_save_tsjit_load():
    module = load(tsjit_bytes(script_module(Palette())))
    for args in MODULE_INPUTS:
        assert plain(module(*args)) == plain(Palette()(*args))
    function = load(tsjit_bytes(script(choose)))
    for args in FUNCTION_INPUTS:
        assert plain(function(*args)) == plain(choose(*args))


def test_loaded_enums_save_again_as_they_were_saved():
    """(tsjit.load gives the classes it loads fresh names where the process already has those names.)"""
    first = tsjit_bytes(script_module(Palette()))
    again = tsjit_bytes(load(first))
    unmangled = [(op, re.sub(r"\.?___torch_mangle_\d+", "", str(argument))) for op, argument in pickle_ops(again)]
    assert unmangled == [(op, str(argument)) for op, argument in pickle_ops(first)]
    assert sum(text.count("(Enum):") for text in code(again).values()) == 3


def test_loaded_enum_values_print_and_compare():
    loaded = load(torch_bytes(torch.jit.script(Palette())))
    assert repr(loaded.favourite).endswith(".Color.GREEN: 2>")
    same, _, _, _, _ = loaded(Color.GREEN, torch.ones(1))
    assert same


def enum_dict(d: Dict[str, Color]) -> List[str]:
    return [v.name for v in d.values()]


def test_enum_containers_as_arguments_of_loaded_functions():
    for data in (tsjit_bytes(script(enum_dict)), torch_bytes(torch.jit.script(enum_dict))):
        assert load(data)({"a": Color.RED, "b": Color.GREEN}) == ["RED", "GREEN"]


def test_enum_attributes_of_loaded_modules_take_python_members():
    """A Python member assigned to a loaded module's enum attribute is converted by name and value, as
    torch.jit converts it; a member of another enum is refused."""
    data = torch_bytes(torch.jit.script(Palette()))
    ours, theirs = load(data), torch.jit.load(io.BytesIO(data))
    for loaded in (ours, theirs):
        loaded.favourite = Color.RED
    assert plain(ours.favourite) == plain(theirs.favourite) == ("RED", 1)
    assert plain(ours(Color.RED, torch.ones(1))) == plain(theirs(Color.RED, torch.ones(1)))
    with pytest.raises(TsjitError, match="for field 'favourite'"):
        ours.favourite = Mood.SAD
    with pytest.raises(RuntimeError, match="Could not cast attribute 'favourite'"):
        theirs.favourite = Mood.SAD
