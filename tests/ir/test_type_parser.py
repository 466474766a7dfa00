"""Type parsing in the three dialects, round trips through the type printers, and torch's graph text."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, NamedTuple, Optional, Union

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tsjit.errors import SourceParseError
from tsjit.ir import types as T
from tsjit.ir.alias_info import AliasInfo
from tsjit.ir.type_parser import TypeParser, parse_type
from tsjit.source.lexer import Lexer

INT, FLOAT, STR, BOOL = T.IntType.get(), T.FloatType.get(), T.StringType.get(), T.BoolType.get()
TENSOR = T.TensorType.get()


@pytest.mark.parametrize("text, expected", [
    ("Tensor", TENSOR), ("int", INT), ("SymInt", T.SymIntType.get()), ("ScalarType", T.ScalarTypeType.get()),
    ("Scalar", T.NumberType.get()), ("DeviceIndex", INT), ("None", T.NoneType.get()), ("t", T.VarType("t")),
    ("double", T.VarType("double")), ("t1[]", T.ListType(T.VarType("t1"))), ("int?", T.OptionalType(INT)),
    ("int[][]", T.ListType(T.ListType(INT))), ("Tensor?[]", T.ListType(T.OptionalType(TENSOR))),
    ("(int, (float, str))", T.TupleType((INT, T.TupleType((FLOAT, STR))))), ("()", T.TupleType(())),
    ("Dict(str, t)", T.DictType(STR, T.VarType("t"))), ("Future(t)", T.FutureType(T.VarType("t"))),
    ("Await(t)", T.AwaitType(T.VarType("t"))), ("RRef(t)", T.RRefType(T.VarType("t"))),
    ("Union(int, str)", T.UnionType((INT, STR))), ("Union(int, NoneType)", T.OptionalType(INT)),
    ("Union(int, float, complex, NoneType)", T.OptionalType(T.NumberType.get())),
    ("Layout[]?", T.OptionalType(T.ListType(T.LayoutType.get()))), ("AnyEnumType", T.AnyEnumType.get()),
    ("Any", T.AnyType.get()), ("Generator?", T.OptionalType(T.GeneratorType.get())),
])
def test_schema_dialect(text, expected):
    assert parse_type(text, "schema") == expected


@pytest.mark.parametrize("text, expected", [
    ("Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)",
     T.TensorType(torch.float32, torch.device("cpu"), False, (2, 3), (3, 1))),
    ("Float(2, *, requires_grad=1)", T.TensorType(torch.float32, None, True, (2, None))),
    ("Long(requires_grad=0, device=cpu)", T.TensorType(torch.int64, torch.device("cpu"), False, ())),
    ("LongTensor", T.TensorType(torch.int64)),
    ("FloatTensor(requires_grad=0, device=cpu)", T.TensorType(torch.float32, torch.device("cpu"), False)),
    ("Tensor(2, *)", T.TensorType(sizes=(2, None))), ("Tensor()", T.TensorType(sizes=())),
    ("Tensor(requires_grad=0)", T.TensorType(requires_grad=False)),
    ("Bool(2, device=cuda:1)", T.TensorType(torch.bool, torch.device("cuda:1"), sizes=(2,))),
    ("Float(SS(-3), 2)", T.TensorType(torch.float32, sizes=(-3, 2))),
    ("Tensor[Undefined]", T.TensorType(undefined=True)), ("Tensor[]", T.ListType(TENSOR)),
    ("Float(2)?", T.OptionalType(T.TensorType(torch.float32, sizes=(2,)))),
    ("(Tensor, (int, float))", T.TupleType((TENSOR, T.TupleType((INT, FLOAT))))),
    ("NamedTuple(a : int, b : Tensor)", T.TupleType((INT, TENSOR), ("a", "b"))),
    ("Future[int]", T.FutureType(INT)), ("Future(int)", T.FutureType(INT)), ("RRef[int]", T.RRefType(INT)),
    ("Union(Tensor, int)", T.UnionType((TENSOR, INT))), ("Dict(str, Tensor)", T.DictType(STR, TENSOR)),
    ("Scalar", T.NumberType.get()), ("number", T.NumberType.get()), ("NoneType", T.NoneType.get()),
    ("ScalarType", INT), ("MemoryFormat?", T.OptionalType(INT)), ("Layout[]", T.ListType(INT)),
    ("SymInt", INT),
    ("Tensor(a!)", TENSOR), ("Device", T.DeviceType.get()), ("Stream", T.StreamType.get()),
])
def test_ir_dialect(text, expected):
    assert parse_type(text, "ir") == expected


@pytest.mark.parametrize("text, expected", [
    ("List[int]", T.ListType(INT)), ("Optional[Tensor]", T.OptionalType(TENSOR)),
    ("Tuple[int, str]", T.TupleType((INT, STR))), ("Tuple[()]", T.TupleType(())),
    ("Dict[str, Tensor]", T.DictType(STR, TENSOR)), ("Union[int, str]", T.UnionType((INT, STR))),
    ("Union[int, None]", T.OptionalType(INT)), ("Final[List[int]]", T.ListType(INT)),
    ("typing.Optional[torch.Tensor]", T.OptionalType(TENSOR)), ("torch.device", T.DeviceType.get()),
    ("list[tuple[int, bool]]", T.ListType(T.TupleType((INT, BOOL)))), ("number", T.NumberType.get()),
    ("None", T.NoneType.get()), ("NoneType", T.NoneType.get()), ("Future[int]", T.FutureType(INT)),
])
def test_annotation_dialect(text, expected):
    assert parse_type(text, "annotation") == expected


def test_schema_types_come_as_written_and_as_carried():
    parser = TypeParser(Lexer("ScalarType[]? Tensor(a!)[] int"), "schema")
    assert parser.parse_fake_and_real_type() == (
        T.OptionalType(T.ListType(INT)), T.OptionalType(T.ListType(T.ScalarTypeType.get())), None)
    fake, real, alias_info = parser.parse_fake_and_real_type()
    assert fake == real == T.ListType(TENSOR)
    assert alias_info == AliasInfo((), (), True, (AliasInfo(("a",), ("a",), True),))
    assert parser.parse_type() == INT


@pytest.mark.parametrize("text, before, after, is_write", [
    ("Tensor(a)", {"a"}, {"a"}, False), ("Tensor(a!)", {"a"}, {"a"}, True),
    ("Tensor(*)", {"*"}, {"*"}, False),
    ("Tensor(a -> *)", {"a"}, {"*"}, False), ("Tensor(a|b)", {"a", "b"}, {"a", "b"}, False),
    ("Tensor(a! -> b|c)", {"a"}, {"b", "c"}, True), ("Tensor!", {"$0"}, set(), True),
])
def test_alias_annotations(text, before, after, is_write):
    alias_info = TypeParser(Lexer(text), "schema").parse_fake_and_real_type()[2]
    assert (alias_info.before_set, alias_info.after_set, alias_info.is_write) == (before, after, is_write)


def test_named_types_resolve_or_become_placeholders():
    module = T.ClassType("__torch__.M")
    assert parse_type("__torch__.M", "ir", resolve={"__torch__.M": module}.get) is module
    parser = TypeParser(Lexer("(__torch__.N, __torch__.N)"), "ir")
    pair = parser.parse_type()
    assert pair.elements[0] is pair.elements[1]
    assert parser.placeholders == {"__torch__.N": pair.elements[0]}
    assert isinstance(pair.elements[0], T.ClassType) and str(pair.elements[0]) == "__torch__.N"
    assert parse_type("__torch__.N", "ir") is not pair.elements[0]
    custom = "__torch__.torch.classes.quantized.Conv2dPackedParamsBase"
    assert parse_type(custom, "schema") is parse_type(custom, "ir") is T.custom_class(custom)
    record = torch.ops.profiler._record_function_enter_new("a", None)  # a torch.classes.profiler._RecordFunction
    assert T.type_of(record) is parse_type("__torch__.torch.classes.profiler._RecordFunction", "ir")
    torch.ops.profiler._record_function_exit(record)
    assert str(parse_type("Enum<__torch__.Color>", "ir")) == "Enum<__torch__.Color>"
    assert str(parse_type("InterfaceType<OneIface>", "ir")) == "InterfaceType<OneIface>"
    assert parse_type("__torch__.a.B", "annotation").qualified_name == "__torch__.a.B"


@pytest.mark.parametrize("text, dialect, message", [
    ("Foo?", "schema", "unknown type specifier 'Foo'. Common valid schema types include Tensor"),
    ("t[]", "ir", "unknown type specifier 't'"),
    ("List[int]", "schema", "unknown type specifier 'List'"),
    ("int[]", "annotation", "expected eof but found '\\[' here"),
    ("List[Optional]", "annotation", "Optional needs type arguments"),
    ("Optional[int, str]", "annotation", "takes 1 type argument"),
    ("Union(int)", "schema", "a Union needs two distinct types"),
    ("Dict(int[], int)", "schema", "Cannot create dict for key type"),
    ("Float(2, device=nowhere)", "ir", "cannot parse device type 'nowhere'"),
    ("Float(2, strides=[1, 1])", "ir", "Strides info is specified for some but not all dimensions"),
    ("Float(requires_grad=0, 2)", "ir", "should come after dimensions"),
    ("Float(2, shape=3)", "ir", "Unexpected specifier 'shape'"),
    ("Tensor(*|a)", "schema", "expected \\) but found 'ident' here"),
])
def test_errors_point_at_the_text(text, dialect, message):
    with pytest.raises(SourceParseError, match=message) as info:
        parse_type(text, dialect)
    assert "~ <--- HERE" in str(info.value)


def test_an_error_spanning_all_the_text_shows_it_without_underline():
    # TorchScript prints a range that covers its whole source as plain text
    with pytest.raises(SourceParseError) as info:
        parse_type("Foo", "ir")
    assert str(info.value) == "unknown type specifier 'Foo':\nFoo"


# ----------------------------------------------------------------------- round trips through the printers

DEVICES = [None, torch.device("cpu"), torch.device("cuda:0"), torch.device("meta")]
DTYPES = [None, torch.float32, torch.int64, torch.bool, torch.bfloat16, torch.complex64, torch.float8_e4m3fn]


@st.composite
def refined_tensors(draw):
    dtype = draw(st.sampled_from(DTYPES))
    sizes = draw(st.none() | st.lists(st.none() | st.integers(0, 9), max_size=3).map(tuple))
    strides = None
    if sizes and draw(st.booleans()):
        strides = tuple(draw(st.lists(st.integers(0, 99), min_size=len(sizes), max_size=len(sizes))))
    tensor = T.TensorType(dtype, draw(st.sampled_from(DEVICES)), draw(st.sampled_from([None, False, True])),
                          sizes, strides, draw(st.booleans()))
    # rank 0 without a dtype prints like unknown rank when anything else is known: `Tensor(requires_grad=0)`
    assume(not (dtype is None and sizes == () and (tensor.requires_grad is not None or tensor.device)))
    return tensor


LEAVES = [TENSOR, INT, FLOAT, T.ComplexType.get(), BOOL, STR, T.DeviceType.get(), T.AnyType.get(),
          T.NumberType.get(), T.GeneratorType.get(), T.StorageType.get(), T.StreamType.get()]
DICT_KEYS = [STR, INT, FLOAT, BOOL, TENSOR, T.DeviceType.get()]


def type_trees(leaves, named_tuples=False):
    def extend(children):
        options = [
            children.map(T.ListType), children.map(T.OptionalType), children.map(T.FutureType),
            children.map(T.AwaitType), children.map(T.RRefType),
            st.lists(children, max_size=3).map(lambda e: T.TupleType(tuple(e))),
            st.tuples(st.sampled_from(DICT_KEYS), children).map(lambda kv: T.DictType(*kv)),
            st.lists(children, min_size=2, max_size=3).map(T.UnionType.create),
        ]
        if named_tuples:
            options.append(st.lists(children, min_size=1, max_size=3).map(
                lambda e: T.TupleType(tuple(e), tuple(f"f{i}" for i in range(len(e))))))
        return st.one_of(options)

    return st.recursive(leaves, extend, max_leaves=6)


def printable(t: T.Type) -> bool:
    """PyTorch prints a Union holding int, float and complex in a form it cannot read back; skip those. Graph
    text prints Union members without tensor refinements, so `Union[List[Float(2)], List[Long(3)]]` prints as
    `Union(Tensor[], Tensor[])`, which names one type twice: skip Unions whose members print alike."""
    if isinstance(t, T.UnionType):
        members = [member.schema_str() for member in t.contained_types()]
        if t.can_hold_type(T.NumberType.get()) or len(set(members)) < len(members):
            return False
    return all(printable(c) for c in t.contained_types())


@settings(max_examples=300, deadline=None)
@given(type_trees(st.sampled_from(LEAVES)))
def test_schema_and_annotation_spellings_round_trip(t):
    assume(printable(t))
    assert parse_type(t.schema_str(), "schema") == t
    assert parse_type(t.annotation_str(), "annotation") == t


@settings(max_examples=300, deadline=None)
@given(type_trees(st.sampled_from(LEAVES) | refined_tensors(), named_tuples=True))
def test_graph_spelling_round_trips(t):
    assume(printable(t))
    parsed = parse_type(str(t), "ir")
    assert str(parsed) == str(t)


def graph_header_types(graph_text: str) -> list[str]:
    """The type text of each input in a printed graph's header."""
    types = []
    for line in graph_text.splitlines():
        types.append(re.search(r"%[\w.]+ : (.*?)(?:,|\):)$", line).group(1))
        if line.endswith("):"):
            return types
    raise AssertionError("no graph header")


def torch_typed_graph() -> str:
    graph = torch._C.Graph()
    tensor_type = torch._C.TensorType
    x = torch.randn(2, 3)
    complete = tensor_type.create_from_tensor(x)
    types = [
        complete, complete.with_sizes([2, None]), complete.with_sizes([None, None]),
        complete.with_sizes(None),
        tensor_type.get().with_dtype(torch.long), tensor_type.get().with_sizes([2, None]),
        tensor_type.get().with_sizes([]), tensor_type.create_from_tensor(torch.tensor(3)),
        tensor_type.create_from_tensor(torch.zeros(2, dtype=torch.bool, device="meta")),
        tensor_type.create_from_tensor(torch.zeros(2, 2, dtype=torch.bfloat16).t()),
        tensor_type.create_from_tensor(torch.zeros(0, dtype=torch.float8_e4m3fn)),
        tensor_type.create_from_tensor(torch.zeros(1, dtype=torch.uint16, requires_grad=False)),
        tensor_type.create_from_tensor(torch.zeros(1, dtype=torch.complex64)),
        tensor_type.create_from_tensor(torch.zeros(1, requires_grad=True)),
        torch._C.OptionalType(complete), torch._C.ListType(complete),
        torch._C.TupleType([complete, torch._C.IntType.get()]), tensor_type.get().with_sizes([2, 3]),
        torch._C.DictType(torch._C.StringType.get(), complete),
        torch._C.ListType(torch._C.OptionalType(torch._C.TensorType.get())),
        torch._C.TupleType([]), torch._C.DeviceObjType.get(), torch._C.NoneType.get(),
        torch._C.NumberType.get(), torch._C.AnyType.get(), torch._C.ComplexType.get(),
        torch._C.FutureType(torch._C.IntType.get()), torch._C.StreamObjType.get(),
        torch._C.UnionType([torch._C.IntType.get(), torch._C.StringType.get(), torch._C.NoneType.get()]),
    ]
    for i, t in enumerate(types):
        graph.addInput(f"x{i}").setType(t)
    return str(graph)


def test_reads_every_type_torch_prints_in_graph_text():
    texts = graph_header_types(torch_typed_graph())
    assert len(texts) == 29
    for text in texts:
        assert str(parse_type(text, "ir")) == text


class Color(Enum):
    RED = 1


class Pair(NamedTuple):
    a: int
    b: torch.Tensor


def many_types(a: torch.Tensor, b: list[int], c: Optional[torch.Tensor], d: tuple[int, tuple[float, str]],  # noqa: UP045
               e: dict[str, torch.Tensor], g: Union[torch.Tensor, int], h: Color, i: Pair,  # noqa: UP007
               k: torch.device, m: tuple[()], n: Any, p: Optional[list[int]]):  # noqa: UP045
    return a


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_reads_scripted_graph_types():
    texts = graph_header_types(str(torch.jit.script(many_types).graph))
    assert texts[6].startswith("Enum<__torch__.") and texts[7].startswith("NamedTuple(a : int")
    for text in texts:
        assert str(parse_type(text, "ir")) == text
