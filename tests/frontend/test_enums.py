"""Python Enum classes in scripted code: the graphs (torch.jit's, up to value names), the results (eager's and
torch.jit's), `.code`, enum-typed arguments, results, containers and module attributes, and torch.jit's errors."""

# ruff: noqa: UP006, UP035, UP045  (written as TorchScript users do)

from __future__ import annotations

import enum
import re
from typing import Dict, List, Optional, Tuple

import pytest
import torch

from tsjit.api import script
from tsjit.api.module import script_module
from tsjit.errors import CompileError, TsjitError
from tsjit.frontend.enum_values import enum_type_of
from tsjit.ir import types as T
from tsjit.ir.parser import parse_ir
from tsjit.passes.constant_pooling import constant_pooling
from tsjit.passes.inliner import inline_calls

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


class Scale(enum.Enum):
    SMALL = 0.5
    LARGE = 2.0


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shade(enum.Enum):
    RED = 1


GREEN = Color.GREEN


# ---- programs, run by eager Python, torch.jit and tsjit ------------------------------------------------------------
def compare(a: Color, b: Color) -> Tuple[bool, bool, bool]:
    return a == b, a != b, a == Color.RED


def name_and_value(c: Color, m: Mood, s: Scale) -> Tuple[str, int, str, str, float]:
    return c.name, c.value, m.name, m.value, s.value


def iterate() -> List[int]:
    values: List[int] = []
    for c in Color:
        values.append(c.value)
    return values


def as_list() -> List[Color]:
    return list(Color)


def names() -> List[str]:
    return [c.name for c in Color]


def containers(c: Color, m: Mood) -> Tuple[List[Color], Dict[str, Mood], Tuple[Color, Mood]]:
    return [c, Color.BLUE], {"mood": m}, (c, m)


def list_argument(colors: List[Color]) -> int:
    total = 0
    for c in colors:
        total += c.value
    return total


def optional(c: Optional[Color]) -> Color:
    if c is None:
        return Color.GREEN
    return c


def branch(c: Color) -> int:
    if c == Color.RED:
        return 10
    elif c == Color.GREEN:
        return 20
    return c.value


def default(c: Color = Color.BLUE) -> Color:
    return c


def global_member(c: Color) -> bool:
    return c == GREEN


def int_enum(level: Level) -> Tuple[int, bool]:
    return level.value, level == Level.HIGH


def other_enum(c: Color) -> bool:
    return c == Shade.RED


def folded() -> Tuple[int, str]:
    return Color.RED.value, Mood.SAD.name


PROGRAMS = [
    (compare, [(Color.RED, Color.RED), (Color.RED, Color.BLUE), (Color.GREEN, Color.BLUE)]),
    (name_and_value, [(Color.GREEN, Mood.SAD, Scale.LARGE)]),
    (iterate, [()]),
    (as_list, [()]),
    (names, [()]),
    (containers, [(Color.GREEN, Mood.HAPPY)]),
    (list_argument, [([Color.RED, Color.BLUE],), ([],)]),
    (optional, [(None,), (Color.BLUE,)]),
    (branch, [(Color.RED,), (Color.GREEN,), (Color.BLUE,)]),
    (default, [(), (Color.RED,)]),
    (global_member, [(Color.GREEN,), (Color.RED,)]),
    (int_enum, [(Level.LOW,), (Level.HIGH,)]),
    (other_enum, [(Color.RED,)]),
    (folded, [()]),
]
IDS = [fn.__name__ for fn, _ in PROGRAMS]


def normalized(text: str) -> str:
    """Graph text with source comments dropped and values renamed by first appearance."""
    names: dict[str, str] = {}
    lines = [re.sub(r" # .*$", "", line) for line in text.strip().splitlines()]
    return re.sub(r"%[\w.]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), "\n".join(lines))


@pytest.mark.parametrize(("fn", "inputs"), PROGRAMS, ids=IDS)
def test_results_match_eager_and_torch_jit(fn, inputs):
    ours, theirs = script(fn), torch.jit.script(fn)
    for args in inputs:
        expected = fn(*args)
        assert ours(*args) == expected == theirs(*args), args


@pytest.mark.parametrize(("fn", "inputs"), PROGRAMS, ids=IDS)
def test_graphs_match_torch_jit(fn, inputs):
    assert normalized(str(script(fn).graph)) == normalized(str(torch.jit.script(fn).graph))


@pytest.mark.parametrize(("fn", "inputs"), PROGRAMS, ids=IDS)
def test_code_matches_torch_jit(fn, inputs):
    assert script(fn).code == torch.jit.script(fn).code


@pytest.mark.parametrize(("fn", "inputs"), PROGRAMS, ids=IDS)
def test_graph_text_parses_back(fn, inputs):
    text = script(fn).graph.str(print_source_locations=False)  # the parser reads no `# file:line:col`
    assert str(parse_ir(text)) == text


@pytest.mark.parametrize(("fn", "inputs"), PROGRAMS, ids=IDS)
def test_torch_jit_graph_text_parses_back(fn, inputs):
    text = "\n".join(re.sub(r" # .*$", "", line) for line in str(torch.jit.script(fn).graph).splitlines()) + "\n"
    assert str(parse_ir(text)) == text


def test_node_kinds():
    kinds = {str(node.kind) for node in script(name_and_value).graph.nodes()}
    assert {"prim::EnumName", "prim::EnumValue"} <= kinds
    assert [str(n.kind) for n in script(compare).graph.nodes()].count("aten::eq") == 2
    constants = [n for n in script(iterate).graph.nodes() if str(n.kind) == "prim::Constant"]
    members = next(n for n in constants if isinstance(n.output().type, T.ListType))
    assert members.output().type == T.ListType(enum_type_of(Color))
    assert members.ival("value") == [Color.RED, Color.GREEN, Color.BLUE]


def test_enum_types():
    color = enum_type_of(Color)
    assert color is enum_type_of(Color) and color.names_values == (("RED", 1), ("GREEN", 2), ("BLUE", 3))
    assert str(color) == f"Enum<{color.qualified_name}>" and color.qualified_name.endswith("test_enums.Color")
    assert enum_type_of(Mood).value_type == T.StringType.get()
    assert enum_type_of(Scale).value_type == T.FloatType.get()
    assert T.type_of(Level.LOW) == T.IntType.get()  # as torch.jit infers module attributes holding one
    assert T.enum_type_of_member(Level.LOW) is enum_type_of(Level)
    assert T.type_of([Color.RED]) == T.ListType(color)
    assert script(default).schema.arguments[0].type is color


def test_default_in_schema_is_printed_as_torch_jit_prints_it():
    assert str(script(default).schema).partition("(")[2] == str(torch.jit.script(default).schema).partition("(")[2]


def test_identity_is_python_identity():
    """torch.jit's `is` compares its boxed enum values, so `c is Color.RED` is False there even for RED; tsjit's
    enum values are the Python members, and `is` answers as Python does."""
    def same(c: Color) -> Tuple[bool, bool]:
        return c is Color.RED, c is not Color.RED

    assert script(same)(Color.RED) == same(Color.RED) == (True, False)
    assert script(same)(Color.BLUE) == same(Color.BLUE) == (False, True)


def test_printing_an_enum(capfd):
    def show(c: Color, colors: List[Color]) -> str:
        print(c, colors)
        return c.name

    script(show)(Color.RED, [Color.GREEN])
    assert capfd.readouterr().out == "Enum<Color.RED> [Enum<Color.GREEN>]\n"


def test_members_of_other_enums_convert_by_name_and_value():
    """torch.jit converts an enum argument by its name and value, whatever its class."""
    assert script(optional)(Shade.RED) is torch.jit.script(optional)(Shade.RED) is Color.RED
    with pytest.raises(TsjitError, match="Expected a value of type"):
        script(branch)(Mood.SAD)


def repeated(c: Color, d: Color) -> Tuple[bool, bool]:
    return c == Color.RED, d == Color.RED


def folds_to_a_tuple() -> Tuple[Color, str]:
    return GREEN, GREEN.name


def compares_twice(c: Color, d: Color) -> Tuple[bool, bool]:
    return compare(c, d)[0], compare(d, c)[0]


def test_enum_constants_are_not_pooled():
    """torch.jit compares enum constants by the identity of their holders: one constant per use of a member."""
    assert normalized(str(script(repeated).graph)) == normalized(str(torch.jit.script(repeated).graph))


def test_copies_of_an_enum_constant_are_pooled():
    """Inlining a function twice copies its enum constants, and copies share their holder: they are pooled."""
    ours = script(compares_twice).graph.copy()
    inline_calls(ours)
    constant_pooling(ours)
    theirs = torch.jit.script(compares_twice).graph.copy()
    torch._C._jit_pass_inline(theirs)
    torch._C._jit_pass_constant_pooling(theirs)
    assert normalized(str(ours)) == normalized(str(theirs))


def test_tuples_of_enum_constants_fold():
    assert normalized(str(script(folds_to_a_tuple).graph)) == normalized(str(torch.jit.script(folds_to_a_tuple).graph))


def folds_an_int_enum() -> Tuple[Level, int]:
    pair = (Level.HIGH, 3)
    return pair[0], pair[1]


def test_folded_int_enum_members_keep_their_enum_type():
    """An IntEnum member is also an int: the folded constant takes the enum type of the value it replaces."""
    ours, theirs = script(folds_an_int_enum), torch.jit.script(folds_an_int_enum)
    assert normalized(str(ours.graph)) == normalized(str(theirs.graph))
    assert ours() == theirs() == (Level.HIGH, 3)


class Holder:
    def __init__(self, c: Color):
        self.c = c

    def mood(self) -> Mood:
        return Mood.HAPPY if self.c == Color.GREEN else Mood.SAD


def through_a_class(c: Color) -> Tuple[Color, Mood]:
    holder = Holder(c)
    return holder.c, holder.mood()


def test_enum_attributes_of_script_classes():
    for c in Color:
        assert script(through_a_class)(c) == torch.jit.script(through_a_class)(c) == through_a_class(c)


# ---- modules -------------------------------------------------------------------------------------------------------
class WithEnums(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.favourite = Color.GREEN
        self.moods = [Mood.HAPPY, Mood.SAD]
        self.by_name = {"large": Scale.LARGE}

    def forward(self, c: Color) -> Tuple[bool, Color, str, float, List[str]]:
        return (c == self.favourite, self.favourite, self.moods[1].value, self.by_name["large"].value,
                [m.name for m in Color])


def test_module_attributes():
    ours, theirs = script_module(WithEnums()), torch.jit.script(WithEnums())
    for c in Color:
        assert ours(c) == theirs(c) == WithEnums()(c)
    assert normalized(str(ours.graph)) == normalized(str(theirs.graph))
    assert ours.code == theirs.code
    assert ours.favourite is Color.GREEN and ours.moods == [Mood.HAPPY, Mood.SAD]


class IntEnumAttribute(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.level = Level.HIGH

    def forward(self, level: Level) -> Tuple[int, bool]:
        return self.level + 1, level == Level.LOW


class IntEnumAttributeValue(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.level = Level.HIGH

    def forward(self) -> int:
        return self.level.value


def test_int_enum_attributes_are_ints_as_torch_jit_infers_them():
    ours, theirs = script_module(IntEnumAttribute()), torch.jit.script(IntEnumAttribute())
    assert ours(Level.LOW) == theirs(Level.LOW) == (3, True)
    assert normalized(str(ours.graph)) == normalized(str(theirs.graph))
    with pytest.raises(RuntimeError, match="'int' object has no attribute or method 'value'"):
        torch.jit.script(IntEnumAttributeValue())
    with pytest.raises(CompileError, match="'int' object has no attribute or method 'value'"):
        script_module(IntEnumAttributeValue())


class PrintsALevel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.level = Level.HIGH

    def forward(self, count: int) -> int:
        print(self.level, count)
        return self.level


def test_int_enum_attributes_and_arguments_print_as_ints(capfd):
    """torch.jit takes IntEnum members as ints wherever no enum is expected: attributes, int arguments."""
    ours, theirs = script_module(PrintsALevel()), torch.jit.script(PrintsALevel())
    theirs(Level.LOW)
    expected = capfd.readouterr().out
    assert expected == "2 1\n"
    assert ours(Level.LOW) == theirs(Level.LOW) == 2
    assert capfd.readouterr().out == expected * 2
    assert type(ours.level) is type(theirs.level) is int


class EnumConstant(torch.nn.Module):
    __constants__ = ["k"]

    def __init__(self):
        super().__init__()
        self.k = Color.RED

    def forward(self, c: Color) -> bool:
        return c == self.k


def test_enums_are_no_module_constants():
    with pytest.raises(TypeError):
        torch.jit.script(EnumConstant())
    with pytest.raises(TsjitError, match="object in attribute 'EnumConstant.k' is not a valid constant"):
        script_module(EnumConstant())


# ---- errors --------------------------------------------------------------------------------------------------------
class Mixed(enum.Enum):
    A = 1
    B = "b"


class Pairs(enum.Enum):
    A = (1, 2)


def uses_mixed() -> Mixed:
    return Mixed.A


def takes_pairs(p: Pairs) -> Pairs:
    return p


def unknown_member() -> Color:
    return Color.PURPLE


def unknown_attribute(c: Color) -> int:
    return c.size


def class_as_value():
    return Color


def calls_the_class() -> Color:
    return Color(1)


def length() -> int:
    return len(Color)


def compares_with_int(c: Color) -> bool:
    return c == 1


ERRORS = [
    (uses_mixed, "Could not unify type list since element 1 of type str did not match the types before it (int)",
     "Mixed"),
    (takes_pairs, "Cannot create Enum with value type 'Any', only int, float and string are supported", "Pairs"),
    (unknown_member, "has no attribute 'PURPLE'", "Color.PURPLE"),
    (unknown_attribute, "object has no attribute or method 'size'.", "c.size"),
    (class_as_value, "EnumClass cannot be used as a value", "Color"),
    (calls_the_class, "cannot call a EnumClass", "Color"),
    (length, "EnumClass cannot be used as a value", "Color"),
    (compares_with_int, "aten::eq.enum(AnyEnumType a, AnyEnumType b) -> bool", "c == 1"),
]


@pytest.mark.parametrize(("fn", "message", "underlined"), ERRORS, ids=[fn.__name__ for fn, _, _ in ERRORS])
def test_errors(fn, message, underlined):
    with pytest.raises(CompileError) as ours:
        script(fn)
    with pytest.raises(RuntimeError):
        torch.jit.script(fn)
    text = str(ours.value)
    assert message in text
    lines = text.splitlines()
    marks = next(i for i, line in enumerate(lines) if "<--- HERE" in line)
    start = lines[marks].index("~")
    assert lines[marks - 1][start:lines[marks].index(" <---")] == underlined, text


def test_error_wording_matches_torch_jit():
    for fn in (unknown_member, unknown_attribute, class_as_value, calls_the_class, takes_pairs):
        with pytest.raises(CompileError) as ours:
            script(fn)
        with pytest.raises(RuntimeError) as theirs:
            torch.jit.script(fn)
        assert str(ours.value).splitlines()[0].rstrip(":") in str(theirs.value)


class Empty(enum.Enum):
    pass


def takes_empty(e: Empty) -> Empty:
    return e


def test_an_enum_without_members_is_refused():
    with pytest.raises(CompileError, match="No enum values defined for"):
        script(takes_empty)
