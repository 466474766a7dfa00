"""tsjit.ir.types against TorchScript itself: spellings, subtyping, unification and runtime-value types are
compared with the same types built through torch._C."""

import enum
import warnings
from typing import NamedTuple

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tsjit.errors import TsjitError
from tsjit.ir.types import (
    AnyClassType,
    AnyEnumType,
    AnyListType,
    AnyTupleType,
    AnyType,
    AwaitType,
    BoolType,
    CapsuleType,
    ClassType,
    ComplexType,
    DeviceType,
    DictType,
    EnumType,
    FloatType,
    FunctionType,
    FutureType,
    GeneratorType,
    InterfaceType,
    IntType,
    LayoutType,
    ListType,
    MemoryFormatType,
    NoneType,
    NumberType,
    OptionalType,
    PyObjectType,
    QSchemeType,
    QuantizerType,
    RRefType,
    ScalarTypeType,
    StorageType,
    StreamType,
    StringType,
    SymBoolType,
    SymFloatType,
    SymIntType,
    TensorType,
    TupleType,
    Type,
    UnionType,
    VarType,
    dtype_from_name,
    dtype_name,
    is_subtype,
    type_of,
    unify_type_list,
    unify_types,
    unshaped_type,
)

C = torch._C
warnings.filterwarnings("ignore", message=".*(ComplexHalf|quantize).*")

INT, FLOAT, COMPLEX, BOOL, STR, NONE = (
    IntType.get(),
    FloatType.get(),
    ComplexType.get(),
    BoolType.get(),
    StringType.get(),
    NoneType.get(),
)
TENSOR, NUMBER, ANY, DEVICE = TensorType.get(), NumberType.get(), AnyType.get(), DeviceType.get()
ALL_DTYPES = sorted({d for d in vars(torch).values() if isinstance(d, torch.dtype)}, key=str)


# ---- bridges to torch._C -----------------------------------------------------------------------------------
def graph_spelling(torch_type) -> str:
    """How PyTorch prints a value of `torch_type` in graph text."""
    g = C.Graph()
    value = g.addInput()
    value.setType(torch_type)
    g.registerOutput(value)
    first_line = str(g).splitlines()[0]
    return first_line[len("graph(%0 : ") : -len("):")]


def schema_type(text: str):
    """The torch type a schema argument spelled `text` has as written (its real_type)."""
    return C.parse_schema(f"f({text} a) -> ()").arguments[0].real_type


def parsed_tensor_type(text: str):
    """The torch type parse_ir gives a graph input annotated `text`."""
    g = C.parse_ir(f"graph(%a : {text}):\n  return (%a)")
    return next(iter(g.inputs())).type()


_LEAVES_IN_TORCH = {
    IntType: C.IntType.get,
    FloatType: C.FloatType.get,
    ComplexType: C.ComplexType.get,
    BoolType: C.BoolType.get,
    StringType: C.StringType.get,
    NoneType: C.NoneType.get,
    NumberType: C.NumberType.get,
    AnyType: C.AnyType.get,
    DeviceType: C.DeviceObjType.get,
    StreamType: C.StreamObjType.get,
    GeneratorType: C._GeneratorType.get,
    PyObjectType: C.PyObjectType.get,
    SymIntType: C.SymIntType.get,
    SymBoolType: C.SymBoolType.get,
    **{
        cls: (lambda text=text: schema_type(text))
        for cls, text in (
            (StorageType, "Storage"),
            (CapsuleType, "Capsule"),
            (QSchemeType, "QScheme"),
            (LayoutType, "Layout"),
            (ScalarTypeType, "ScalarType"),
            (MemoryFormatType, "MemoryFormat"),
            (QuantizerType, "Quantizer"),
            (AnyClassType, "AnyClassType"),
            (AnyEnumType, "AnyEnumType"),
        )
    },
}
_CONTAINERS_IN_TORCH = {
    ListType: C.ListType,
    OptionalType: C.OptionalType,
    FutureType: C.FutureType,
    RRefType: C.RRefType,
    AwaitType: C.AwaitType,
}


def to_torch(t: Type):
    """The torch._C type equal to `t`, built without tsjit's printer."""
    if type(t) in _LEAVES_IN_TORCH:
        return _LEAVES_IN_TORCH[type(t)]()
    if type(t) in _CONTAINERS_IN_TORCH:
        return _CONTAINERS_IN_TORCH[type(t)](to_torch(t.elem))
    if isinstance(t, TupleType):
        return C.TupleType([to_torch(e) for e in t.elements])
    if isinstance(t, DictType):
        return C.DictType(to_torch(t.key), to_torch(t.value))
    if isinstance(t, UnionType):
        return C.UnionType([to_torch(m) for m in t.types])
    if isinstance(t, VarType):
        return schema_type(t.name)
    return tensor_to_torch(t)


def tensor_to_torch(t: TensorType):
    """Build a refined tensor type in torch. parse_ir reads types with a dtype, whose strides (if any) are all
    known along with all sizes; other types come from merging two such types that differ where `t` is unknown.
    """
    if t.dtype is None:
        return _merged(t.with_dtype(torch.float32), t.with_dtype(torch.int64))
    if t.sizes is None:
        return _merged(t.with_sizes([2]), t.with_sizes([2, 2]))
    if t.strides is not None and None in t.sizes + t.strides:
        return _merged(
            *(
                t.with_sizes(
                    [fill if size is None else size for size in t.sizes],
                    [fill * 1000 + i if s is None else s for i, s in enumerate(t.strides)],
                )
                for fill in (2, 3)
            )
        )
    parts = ["*" if s is None else str(s) for s in t.sizes]
    if t.strides is not None:
        parts.append(f"strides=[{', '.join(map(str, t.strides))}]")
    if t.requires_grad is not None:
        parts.append(f"requires_grad={int(t.requires_grad)}")
    if t.device is not None:
        parts.append(f"device={t.device}")
    return parsed_tensor_type(f"{dtype_name(t.dtype)}({', '.join(parts)})")


def _merged(a: TensorType, b: TensorType):
    return C.unify_type_list([tensor_to_torch(a), tensor_to_torch(b)])


def torch_unify(a: Type, b: Type) -> str | None:
    try:
        return graph_spelling(C.unify_type_list([to_torch(a), to_torch(b)]))
    except RuntimeError:
        return None


# ---- spellings ---------------------------------------------------------------------------------------------
R23 = TensorType.create_from_tensor(torch.randn(2, 3))
TT, IT = C.TensorType.get(), C.IntType.get()
R23_TORCH = C.TensorType.create_from_tensor(torch.randn(2, 3))

SPELLING_CASES = [
    (TENSOR, TT),
    (INT, IT),
    (FLOAT, C.FloatType.get()),
    (COMPLEX, C.ComplexType.get()),
    (BOOL, C.BoolType.get()),
    (STR, C.StringType.get()),
    (NONE, C.NoneType.get()),
    (NUMBER, C.NumberType.get()),
    (ANY, C.AnyType.get()),
    (DEVICE, C.DeviceObjType.get()),
    (StreamType.get(), C.StreamObjType.get()),
    (GeneratorType.get(), C._GeneratorType.get()),
    (SymIntType.get(), C.SymIntType.get()),
    (SymBoolType.get(), C.SymBoolType.get()),
    (PyObjectType.get(), C.PyObjectType.get()),
    (StorageType.get(), schema_type("Storage")),
    (CapsuleType.get(), schema_type("Capsule")),
    (QSchemeType.get(), schema_type("QScheme")),
    (LayoutType.get(), schema_type("Layout")),
    (ScalarTypeType.get(), schema_type("ScalarType")),
    (MemoryFormatType.get(), schema_type("MemoryFormat")),
    (QuantizerType.get(), schema_type("Quantizer")),
    (AnyClassType.get(), schema_type("AnyClassType")),
    (AnyEnumType.get(), schema_type("AnyEnumType")),
    (VarType("t"), schema_type("t")),
    (ListType(INT), C.ListType(IT)),
    (ListType(ListType(INT)), C.ListType(C.ListType(IT))),
    (OptionalType(ListType(TENSOR)), C.OptionalType(C.ListType(TT))),
    (ListType(OptionalType(TENSOR)), C.ListType(C.OptionalType(TT))),
    (TupleType([TENSOR, INT]), C.TupleType([TT, IT])),
    (TupleType([]), C.TupleType([])),
    (TupleType([TENSOR, TupleType([INT, FLOAT])]), C.TupleType([TT, C.TupleType([IT, C.FloatType.get()])])),
    (DictType(STR, TENSOR), C.DictType(C.StringType.get(), TT)),
    (DictType(INT, ListType(TENSOR)), C.DictType(IT, C.ListType(TT))),
    (FutureType(INT), C.FutureType(IT)),
    (RRefType(TENSOR), C.RRefType(TT)),
    (AwaitType(INT), C.AwaitType(IT)),
    (ListType(R23), C.ListType(R23_TORCH)),
    (OptionalType(R23), C.OptionalType(R23_TORCH)),
    (TupleType([R23, INT]), C.TupleType([R23_TORCH, IT])),
    (DictType(STR, R23), C.DictType(C.StringType.get(), R23_TORCH)),
    (FutureType(R23), C.FutureType(R23_TORCH)),
    (RRefType(R23), C.RRefType(R23_TORCH)),
    (AwaitType(R23), C.AwaitType(R23_TORCH)),
    (ListType(DictType(INT, R23)), C.ListType(C.DictType(IT, R23_TORCH))),
    (DictType(TENSOR, OptionalType(R23)), C.DictType(TT, C.OptionalType(R23_TORCH))),
    (OptionalType(OptionalType(INT)), C.OptionalType(C.OptionalType(IT))),
    (OptionalType(NUMBER), C.OptionalType(C.NumberType.get())),
    (OptionalType(UnionType([INT, STR])), C.OptionalType(C.UnionType([IT, C.StringType.get()]))),
    (
        OptionalType(UnionType([INT, STR, NONE])),
        C.OptionalType(C.UnionType([IT, C.StringType.get(), C.NoneType.get()])),
    ),
    (
        OptionalType(UnionType([INT, FLOAT, COMPLEX])),
        C.OptionalType(C.UnionType([IT, C.FloatType.get(), C.ComplexType.get()])),
    ),
]


@pytest.mark.parametrize(("ours", "theirs"), SPELLING_CASES, ids=lambda x: getattr(x, "annotation_str", ""))
def test_spellings_match_torch(ours, theirs):
    assert str(ours) == graph_spelling(theirs)
    assert ours.annotation_str() == theirs.annotation_str
    assert to_torch(ours) == theirs


@pytest.mark.parametrize(
    "ours", [case[0] for case in SPELLING_CASES if not isinstance(case[0], PyObjectType)]
)
def test_schema_spelling_round_trips_through_torch_schema_parser(ours):
    # schemas cannot hold refined tensors: schema_str() drops the refinement, as C++ Type::str() does
    text = f"f({ours.schema_str()} a) -> ()"
    schema = C.parse_schema(text)
    assert str(schema) == text
    assert schema.arguments[0].real_type == to_torch(unshaped_type(ours))


@pytest.mark.parametrize(
    ("ours", "expected"),
    [
        (FutureType(INT), "Future(int)"),
        (RRefType(INT), "RRef(int)"),
        (ListType(R23), "Tensor[]"),
        (DictType(STR, R23), "Dict(str, Tensor)"),
        (SymFloatType.get(), "SymFloat"),
        (AnyListType.get(), "list"),
        (AnyTupleType.get(), "tuple"),
        (OptionalType(R23), "Tensor?"),
        (TupleType([R23]), "(Tensor)"),
    ],
)
def test_schema_str_is_cpp_type_str(ours, expected):
    assert ours.schema_str() == expected


def test_sym_types_annotate_as_their_ir_types():
    assert [t.get().annotation_str() for t in (SymIntType, SymFloatType, SymBoolType)] == [
        "int",
        "float",
        "bool",
    ]
    assert (SymIntType.get().annotation_str(), ListType(SymIntType.get()).annotation_str()) == (
        schema_type("SymInt").annotation_str,
        schema_type("SymInt[]").annotation_str,
    )


# ---- refined tensors ---------------------------------------------------------------------------------------
TENSORS = [
    torch.randn(2, 3),
    torch.tensor(3),
    torch.randn(2, 3, dtype=torch.float64).t(),
    torch.randn(3).expand(2, 3),
    torch.randn(1, 3, 4, 5).contiguous(memory_format=torch.channels_last),
    torch.empty(0, 3),
    torch.empty(2, 1),
    torch.empty(4, 2)[::2],
    torch.randn(4, requires_grad=True),
    torch.randn(2, 2, device="meta"),
    torch.randn(4).to_sparse(),
    torch.nn.Parameter(torch.randn(3, 2)),
    torch.randn(2, 3, 4).permute(2, 0, 1),
    *(torch.empty(2, 3, dtype=d) for d in ALL_DTYPES),
]


@pytest.mark.parametrize("tensor", TENSORS, ids=lambda t: f"{t.dtype}{tuple(t.shape)}")
def test_tensor_types_from_tensors_print_like_torch(tensor):
    ours = TensorType.create_from_tensor(tensor)
    assert str(ours) == graph_spelling(C.TensorType.create_from_tensor(tensor))
    assert ours.is_complete() == (tensor.layout == torch.strided)
    assert ours.annotation_str() == "Tensor" and ours.schema_str() == "Tensor"


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_prints_like_torch(dtype):
    assert str(TENSOR.with_dtype(dtype)) == graph_spelling(TT.with_dtype(dtype))
    assert str(TENSOR.with_dtype(dtype).with_sizes([2, None])) == graph_spelling(
        TT.with_dtype(dtype).with_sizes([2, None])
    )
    assert dtype_from_name(dtype_name(dtype)) is dtype


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (TENSOR.with_sizes([2, None]), TT.with_sizes([2, None])),
        (TENSOR.with_sizes([]), TT.with_sizes([])),
        (TENSOR.with_sizes([None, None]), TT.with_sizes([None, None])),
        (TENSOR.with_dtype(torch.int64), TT.with_dtype(torch.int64)),
        (TENSOR.with_device("cuda:0"), TT.with_device(torch.device("cuda:0"))),
        (TENSOR.with_device("cuda"), TT.with_device(torch.device("cuda"))),
        (
            TENSOR.with_sizes([5]).with_dtype(torch.half).with_device("cuda:1"),
            TT.with_sizes([5]).with_dtype(torch.half).with_device(torch.device("cuda:1")),
        ),
        (R23.with_sizes(None, R23.strides), R23_TORCH.with_sizes(None)),
    ],
)
def test_partially_refined_tensors_print_like_torch(ours, theirs):
    assert str(ours) == graph_spelling(theirs)


@pytest.mark.parametrize(
    "text",
    [
        "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)",
        "Long(requires_grad=0, device=cpu)",
        "Float(2, *, requires_grad=0)",
        "Float(2, 3)",
        "Half(5, device=cuda:0)",
        "Float(2, 3, strides=[1, 2])",
        "Float(*, *)",
        "BFloat16(1, requires_grad=1, device=cpu)",
        "Bool()",
        "Float8_e4m3fn(3)",
        "UInt16(2, 2)",
    ],
)
def test_tensor_types_parse_ir_reads_print_the_same(text):
    assert graph_spelling(parsed_tensor_type(text)) == text
    assert str(ours_from_parsed(text)) == text


def ours_from_parsed(text: str) -> TensorType:
    """Our TensorType for a type parse_ir read, field by field."""
    theirs = parsed_tensor_type(text)
    sizes, strides = theirs.varyingSizes(), theirs.strides()
    requires_grad = None if "requires_grad" not in text else theirs.requires_grad()
    return TensorType(
        dtype=theirs.dtype(),
        device=theirs.device(),
        requires_grad=requires_grad,
        sizes=sizes,
        strides=strides if "strides" in text else None,
    )


@pytest.mark.parametrize(
    ("ours", "expected"),
    [
        (TENSOR.with_undefined(True), "Tensor[Undefined]"),
        (
            TensorType(dtype=torch.float32, sizes=(2,), requires_grad=False, undefined=True),
            "Float(2, requires_grad=0)[Undefined]",
        ),
        (TENSOR.with_undefined(None), "Tensor"),
        (TensorType(requires_grad=False), "Tensor(requires_grad=0)"),
        (TensorType(sizes=(2, None)), "Tensor(2, *)"),
        (
            TensorType(sizes=(None, None), requires_grad=True, device="cpu"),
            "Tensor(*, *, requires_grad=1, device=cpu)",
        ),
        (TensorType(dtype=torch.int64, device="cpu"), "LongTensor(device=cpu)"),
        (TensorType(sizes=(2, 3), strides=(None, 1)), "Tensor(2, 3)"),
    ],
)
def test_tensor_spellings_torch_cannot_build(ours, expected):
    # c10 prints these (TensorType's operator<<); parse_ir cannot read them and Python cannot make them
    assert str(ours) == expected


def test_tensor_helpers():
    assert R23.rank == 2 and TENSOR.rank is None and R23.unrefined() is TENSOR
    assert R23.with_requires_grad(True).requires_grad is True
    assert TENSOR.with_rank(3) == TensorType(sizes=(None, None, None)) and TENSOR.with_rank(None) == TENSOR
    assert not TensorType(dtype=torch.float32, sizes=(2,)).is_complete()
    assert TensorType(sizes=(2, 3), strides=(None, None)).strides is None
    assert TensorType() == TENSOR and hash(TensorType()) == hash(TENSOR)
    with pytest.raises(TsjitError):
        TensorType(dtype="float")


def test_tensor_merge_keeps_what_both_know():
    a = TensorType.create_from_tensor(torch.randn(2, 3))
    b = TensorType.create_from_tensor(torch.randn(2, 4))
    assert a.merge(b) == TensorType(
        dtype=torch.float32, device="cpu", requires_grad=False, sizes=(2, None), strides=(None, 1)
    )
    assert str(a.merge(b)) == graph_spelling(C.unify_type_list([to_torch(a), to_torch(b)]))
    assert a.merge(TensorType.create_from_tensor(torch.randn(2))).sizes is None
    assert a.merge(TENSOR.with_undefined(True)).undefined is None


# ---- Union and Optional canonical forms --------------------------------------------------------------------
UNION_CASES = [
    [TENSOR, INT],
    [INT, STR, NONE],
    [OptionalType(INT), STR],
    [INT, FLOAT, COMPLEX, STR],
    [INT, FLOAT, COMPLEX, TENSOR],
    [INT, FLOAT, COMPLEX, NONE],
    [NUMBER, NONE],
    [NUMBER, STR, NONE],
    [INT, FLOAT, STR],
    [INT, FLOAT, COMPLEX],
    [INT, NONE],
    [R23, INT],
    [R23, TensorType.create_from_tensor(torch.randn(3)), STR],
    [ListType(INT), ListType(FLOAT)],
    [UnionType([INT, STR]), BOOL],
    [STR, DictType(STR, INT), TupleType([]), ListType(TENSOR), FutureType(INT), DEVICE, TENSOR, BOOL, FLOAT],
    [TupleType([INT]), TupleType([STR])],
    [NONE, INT, NONE],
    [INT, INT, STR],
]


@pytest.mark.parametrize("members", UNION_CASES, ids=lambda ms: "|".join(m.annotation_str() for m in ms))
def test_unions_canonicalize_and_print_like_torch(members):
    ours = UnionType.create(members)
    theirs = C.UnionType([to_torch(m) for m in members])
    assert str(ours) == graph_spelling(theirs)
    assert ours.annotation_str() == theirs.annotation_str
    assert type(ours).__name__ == theirs.kind()


def test_union_edge_cases():
    # c10 refuses a Union whose members unify to one type; create() returns that type
    for members, single in (
        ([INT, INT], INT),
        ([ANY, INT], ANY),
        ([TupleType([INT]), TupleType([NONE])], TupleType([OptionalType(INT)])),
    ):
        assert UnionType.create(members) == single
        with pytest.raises(RuntimeError, match="single type"):
            C.UnionType([to_torch(m) for m in members])
    assert OptionalType(OptionalType(NUMBER)) == OptionalType(NUMBER)
    assert UnionType.create([INT, NONE]) == OptionalType(INT)
    assert UnionType.create([INT, FLOAT, COMPLEX, NONE]) == OptionalType(NUMBER)
    assert UnionType([STR, INT]) == UnionType([INT, STR]) and hash(UnionType([STR, INT])) == hash(
        UnionType([INT, STR])
    )
    with pytest.raises(TsjitError):
        UnionType([INT, INT])
    with pytest.raises(TsjitError):
        OptionalType(NONE)
    assert OptionalType(OptionalType(INT)) == OptionalType(INT)
    assert UnionType([INT, STR]).can_hold_type(INT) and not UnionType([INT, STR]).can_hold_type(NUMBER)


# ---- subtyping ---------------------------------------------------------------------------------------------
SUBTYPE_PAIRS = [
    (INT, OptionalType(INT)),
    (NONE, OptionalType(TENSOR)),
    (R23, TENSOR),
    (TENSOR, R23),
    (INT, NUMBER),
    (FLOAT, NUMBER),
    (COMPLEX, NUMBER),
    (BOOL, NUMBER),
    (BOOL, INT),
    (NUMBER, INT),
    (NUMBER, OptionalType(NUMBER)),
    (INT, ANY),
    (ListType(INT), ANY),
    (UnionType([INT, STR]), ANY),
    (ListType(R23), ListType(TENSOR)),
    (TupleType([NONE, R23]), TupleType([OptionalType(INT), TENSOR])),
    (FutureType(R23), FutureType(TENSOR)),
    (AwaitType(R23), AwaitType(TENSOR)),
    (RRefType(R23), RRefType(TENSOR)),
    (DictType(STR, R23), DictType(STR, TENSOR)),
    (OptionalType(INT), UnionType([INT, STR, NONE])),
    (OptionalType(UnionType([INT, STR])), UnionType([INT, STR, NONE])),
    (UnionType([INT, STR, NONE]), OptionalType(UnionType([INT, STR]))),
    (NUMBER, UnionType([INT, FLOAT, COMPLEX])),
    (UnionType([INT, FLOAT]), NUMBER),
    (NONE, UnionType([INT, STR])),
    (UnionType([INT, FLOAT]), OptionalType(NUMBER)),
    (UnionType([INT, STR]), UnionType([INT, STR, TENSOR])),
    (SymIntType.get(), INT),
    (INT, SymIntType.get()),
    (ListType(TENSOR), ListType(OptionalType(TENSOR))),
    (OptionalType(TENSOR), TENSOR),
    (TupleType([INT, INT]), TupleType([INT])),
    (VarType("t"), VarType("t")),
    (TensorType(sizes=(2, 3), requires_grad=False), TensorType(sizes=(2, None))),
    (TensorType(sizes=(2, None)), TensorType(sizes=(2, 3))),
    (TensorType(dtype=torch.float32), TENSOR),
]


@pytest.mark.parametrize(("a", "b"), SUBTYPE_PAIRS, ids=lambda t: t.annotation_str())
def test_subtyping_matches_torch(a, b):
    assert a.is_subtype_of(b) == to_torch(a).isSubtypeOf(to_torch(b))
    assert is_subtype(a, b) == a.is_subtype_of(b)


def test_subtyping_facts():
    assert INT.is_subtype_of(OptionalType(INT)) and NONE.is_subtype_of(OptionalType(INT))
    assert R23.is_subtype_of(TENSOR) and not TENSOR.is_subtype_of(R23)
    assert not TENSOR.with_undefined(True).is_subtype_of(TENSOR)
    assert ListType(INT).is_subtype_of(AnyListType.get()) and TupleType([INT]).is_subtype_of(
        AnyTupleType.get()
    )
    assert not ListType(INT).is_subtype_of(AnyTupleType.get())
    assert not ListType(R23).is_subtype_of(ListType(TENSOR))  # lists are invariant
    assert not ListType(INT).is_subtype_of(ListType(OptionalType(INT)))
    assert FutureType(INT).is_subtype_of(FutureType(OptionalType(INT)))
    assert TupleType([INT], names=("x",), qualified_name="__torch__.P").is_subtype_of(
        TupleType([OptionalType(INT)])
    )
    assert not TupleType([INT]).is_subtype_of(TupleType([INT], names=("x",)))
    assert not TupleType([INT], names=("x",)).is_subtype_of(TupleType([INT], names=("y",)))


# ---- unification -------------------------------------------------------------------------------------------
UNIFY_PAIRS = [
    (INT, NONE),
    (OptionalType(INT), STR),
    (ListType(INT), ListType(OptionalType(INT))),
    (TupleType([INT, NONE]), TupleType([NONE, STR])),
    (DictType(STR, INT), DictType(STR, NONE)),
    (FutureType(INT), FutureType(NONE)),
    (OptionalType(INT), NONE),
    (NUMBER, INT),
    (INT, FLOAT),
    (UnionType([INT, STR]), NONE),
    (UnionType([INT, STR]), INT),
    (UnionType([INT, STR]), FLOAT),
    (R23, TensorType.create_from_tensor(torch.randn(2, 4))),
    (ListType(R23), ListType(TensorType.create_from_tensor(torch.randn(5)))),
    (OptionalType(R23), TensorType.create_from_tensor(torch.randn(2, 4))),
    (TupleType([R23, INT]), TupleType([TENSOR, NONE])),
    (DictType(STR, R23), DictType(STR, TENSOR)),
    (TupleType([INT]), TupleType([INT, INT])),
    (ANY, INT),
    (NONE, NONE),
    (BOOL, INT),
    (TENSOR, INT),
    (FutureType(R23), FutureType(TensorType.create_from_tensor(torch.randn(3)))),
]


@pytest.mark.parametrize(("a", "b"), UNIFY_PAIRS, ids=lambda t: t.annotation_str())
def test_unification_matches_torch(a, b):
    ours = unify_types(a, b)
    assert (None if ours is None else str(ours)) == torch_unify(a, b)
    assert (None if unify_types(b, a) is None else str(unify_types(b, a))) == torch_unify(b, a)


def test_unify_default_to_union_and_type_hint():
    assert unify_types(INT, STR) is None
    assert unify_types(INT, STR, default_to_union=True) == UnionType([INT, STR])
    assert unify_types(TupleType([INT]), TupleType([STR]), default_to_union=True) == TupleType(
        [UnionType([INT, STR])]
    )
    assert unify_types(INT, FLOAT, default_to_union=True).annotation_str() == "Union[float, int]"
    assert unify_types(INT, STR, type_hint=ANY) == ANY
    assert unify_type_list([INT, NONE, INT]) == OptionalType(INT)
    assert unify_type_list([]) is None and unify_type_list([INT, STR]) is None
    point = TupleType([INT], names=("x",), qualified_name="__torch__.P")
    assert unify_types(point, TupleType([NONE])) == TupleType([OptionalType(INT)])  # names are dropped


def test_unshaped_type_drops_tensor_refinements_everywhere():
    nested = TupleType([ListType(R23), OptionalType(R23), DictType(STR, UnionType([R23, INT]))])
    assert unshaped_type(nested) == TupleType(
        [ListType(TENSOR), OptionalType(TENSOR), DictType(STR, UnionType([TENSOR, INT]))]
    )


# ---- named tuples, classes, interfaces, enums --------------------------------------------------------------
class Point(NamedTuple):
    x: int
    y: torch.Tensor


class Color(enum.Enum):
    RED = 1
    GREEN = 2


@torch.jit.interface
class OneInterface(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class _UsesNamedTypes(torch.nn.Module):
    def forward(self, p: Point, c: Color, ps: list[Point], i: OneInterface):
        return p


@pytest.fixture(scope="module")
def scripted_input_types():
    graph = torch.jit.script(_UsesNamedTypes()).graph
    return {v.debugName().split(".")[0]: v.type() for v in graph.inputs()}


def test_named_types_print_like_torchscript(scripted_input_types):
    theirs = scripted_input_types
    point_name = theirs["p"].annotation_str
    point = TupleType([INT, TENSOR], names=("x", "y"), qualified_name=point_name)
    assert str(point) == graph_spelling(theirs["p"]) == "NamedTuple(x : int, y : Tensor)"
    assert point.annotation_str() == point_name and point.schema_str() == point_name
    assert str(ListType(point)) == graph_spelling(theirs["ps"])
    assert ListType(point).annotation_str() == theirs["ps"].annotation_str
    color = EnumType(theirs["c"].annotation_str, INT, [("RED", 1), ("GREEN", 2)])
    assert (str(color), color.annotation_str()) == (graph_spelling(theirs["c"]), theirs["c"].annotation_str)
    interface = InterfaceType(theirs["i"].annotation_str, is_module=True)
    assert (str(interface), interface.annotation_str()) == (
        graph_spelling(theirs["i"]),
        theirs["i"].annotation_str,
    )
    module = ClassType("__torch__.M", is_module=True)
    assert (str(module), module.annotation_str(), module.name) == ("__torch__.M", "__torch__.M", "M")


def test_class_type_attribute_table():
    cls = ClassType("__torch__.M", is_module=True)
    assert cls.add_attribute("weight", TENSOR, is_parameter=True) == 0
    assert cls.add_attribute("running", TENSOR, is_buffer=True) == 1
    assert cls.add_attribute("count", INT) == 2
    assert cls.attribute_names == ("weight", "running", "count")
    assert cls.get_attribute("count") == INT and cls.attribute_index("running") == 1
    assert cls.is_parameter("weight") and cls.is_buffer("running") and not cls.is_parameter("count")
    assert cls.has_attribute("weight") and not cls.has_attribute("bias")
    with pytest.raises(TsjitError):
        cls.add_attribute("count", FLOAT)
    with pytest.raises(TsjitError):
        cls.get_attribute("bias")


def test_named_types_compare_by_identity():
    a, b = ClassType("__torch__.M"), ClassType("__torch__.M")
    assert a != b and a == a and len({a, b}) == 2
    assert a.is_subtype_of(AnyClassType.get()) and a.is_subtype_of(OptionalType(a)) and not a.is_subtype_of(b)
    color = EnumType("__torch__.Color", INT, [("RED", 1)])
    assert color.is_subtype_of(AnyEnumType.get()) and color != EnumType("__torch__.Color", INT, [("RED", 1)])


class Arg(NamedTuple):
    name: str
    type: Type


class Schema(NamedTuple):
    name: str
    arguments: tuple
    returns: tuple


class Method(NamedTuple):
    schema: Schema


def method(name, args, result):
    return Schema(name, (Arg("self", ANY), *(Arg(n, t) for n, t in args)), (Arg("", result),))


def test_classes_meet_interfaces_by_method_schemas():
    iface = InterfaceType("__torch__.Iface")
    iface.add_method(method("forward", [("x", R23)], OptionalType(TENSOR)))
    fits, wrong_name, wrong_type = (
        ClassType("__torch__.A"),
        ClassType("__torch__.B"),
        ClassType("__torch__.C"),
    )
    fits.methods["forward"] = Method(method("forward", [("x", TENSOR)], TENSOR))
    wrong_name.methods["forward"] = Method(method("forward", [("y", TENSOR)], TENSOR))
    wrong_type.methods["forward"] = Method(method("forward", [("x", INT)], TENSOR))
    assert fits.is_subtype_of(iface)
    assert not wrong_name.is_subtype_of(iface) and not wrong_type.is_subtype_of(iface)
    assert not ClassType("__torch__.D").is_subtype_of(iface)
    module_iface = InterfaceType("__torch__.ModIface", is_module=True)
    assert not fits.is_subtype_of(module_iface) and ClassType("__torch__.E", is_module=True).is_subtype_of(
        module_iface
    )
    narrower = InterfaceType("__torch__.Narrower")
    narrower.add_method(method("forward", [("x", TENSOR)], TENSOR))
    assert narrower.is_subtype_of(iface) and not iface.is_subtype_of(narrower)


def test_function_type():
    class Fn:
        qualname = "__torch__.f"

    fn = Fn()
    assert str(FunctionType(fn)) == "Function" and FunctionType(fn).annotation_str() == "__torch__.f"
    assert FunctionType(fn) == FunctionType(fn) and FunctionType(fn) != FunctionType(Fn())


# ---- contained types ---------------------------------------------------------------------------------------
def test_contained_types_and_free_variables():
    t = DictType(STR, ListType(VarType("t")))
    assert t.contained_types() == (STR, ListType(VarType("t"))) and t.has_free_variables()
    assert (
        t.with_contained([INT, FLOAT]) == DictType(INT, FLOAT)
        and not DictType(INT, FLOAT).has_free_variables()
    )
    point = TupleType([INT], names=("x",), qualified_name="__torch__.P")
    assert point.with_contained([FLOAT]) == TupleType([FLOAT], names=("x",), qualified_name="__torch__.P")
    assert INT.with_contained([]) is INT
    with pytest.raises(TsjitError):
        INT.with_contained([FLOAT])
    with pytest.raises(TsjitError, match="key type"):
        DictType(OptionalType(INT), INT)


def test_singletons():
    assert IntType.get() is IntType.get() and TensorType.get() is TensorType.get()
    assert IntType() == IntType.get() and IntType.get() != FloatType.get()
    with pytest.raises(AttributeError):
        INT.kind = 3
    assert repr(ListType(INT)) == "ListType('int[]')"


# ---- types of runtime values -------------------------------------------------------------------------------
VALUES = [
    1,
    True,
    1.5,
    1j,
    "x",
    None,
    [1, 2],
    [1, None],
    [[1], [2]],
    [None],
    (),
    (1, "a"),
    (1, (2.5, "b")),
    {"a": 1},
    {1: "a"},
    {1.5: 2},
    {True: 1},
    torch.device("cpu"),
    torch.float32,
    torch.strided,
    torch.per_tensor_affine,
    torch.Generator(),
    2**70,
    float("nan"),
    [torch.randn(2), torch.randn(3, 4)],
    {torch.randn(2): 1},
    Point(1, torch.randn(2)),
    [torch.randn(2), None],
    {"a": [torch.randn(2)]},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_type_of_matches_torch(value):
    theirs = C._jit_try_infer_type(value)
    assert theirs.success()
    assert str(unshaped_type(type_of(value))) == graph_spelling(theirs.type())


@pytest.mark.parametrize(
    "value",
    [
        [],
        {},
        [1, 2.0],
        [True, 1],
        {"a": 1, "b": 2.0},
        object(),
        len,
        [object()],
        torch.nn.Linear(2, 2),
        [[1], []],
        {(1, 2): 3},
    ],
)
def test_type_of_rejects_values_without_a_type(value):
    with pytest.raises(TsjitError):
        type_of(value)


def test_type_of_refines_tensors_except_inside_mutable_containers():
    x = torch.randn(2, 3)
    assert type_of(x) == TensorType.create_from_tensor(x) and type_of(x).is_complete()
    assert type_of((x, 1)) == TupleType([TensorType.create_from_tensor(x), INT])
    assert type_of([x, x]) == ListType(TENSOR) and type_of({"k": x}) == DictType(STR, TENSOR)
    assert type_of(torch.contiguous_format) == INT and type_of(torch.UntypedStorage(4)) == StorageType.get()


# ---- properties over random nested types -------------------------------------------------------------------
def _sizes():
    complete = st.lists(st.sampled_from([2, 3]), max_size=3).map(tuple)
    partial = st.lists(st.sampled_from([None, 2, 3]), max_size=3).map(tuple)
    return st.one_of(st.none(), complete, partial)


@st.composite
def tensor_types(draw):
    sizes = draw(_sizes())
    strided = sizes is not None and None not in sizes and draw(st.booleans())
    strides = tuple(int(torch.tensor(sizes[i + 1 :]).prod()) for i in range(len(sizes))) if strided else None
    return TensorType(
        dtype=draw(st.sampled_from([None, torch.float32, torch.int64])),
        device=draw(st.sampled_from([None, torch.device("cpu")])),
        requires_grad=draw(st.sampled_from([None, False, True])),
        sizes=sizes,
        strides=strides,
    )


LEAVES = st.sampled_from(
    [INT, FLOAT, COMPLEX, BOOL, STR, NONE, NUMBER, ANY, DEVICE, TENSOR, StreamType.get()]
)
KEYS = st.sampled_from([INT, FLOAT, STR, BOOL, TENSOR, DEVICE])


def _compound(children):
    return st.one_of(
        children.map(ListType),
        children.filter(lambda t: t != NONE).map(OptionalType),
        children.map(FutureType),
        children.map(RRefType),
        children.map(AwaitType),
        st.lists(children, max_size=3).map(TupleType),
        st.builds(DictType, KEYS, children),
        st.lists(children, min_size=2, max_size=3).map(UnionType.create),
    )


TYPES = st.recursive(st.one_of(LEAVES, tensor_types()), _compound, max_leaves=6)
PROPERTY_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rebuild(t: Type) -> Type:
    """A structurally equal copy of `t`, built afresh."""
    contained = t.contained_types()
    return t.with_contained([_rebuild(c) for c in contained]) if contained else t


@PROPERTY_SETTINGS
@given(TYPES)
def test_equality_hash_and_spelling_are_structural(t):
    copy = _rebuild(t)
    assert copy == t and hash(copy) == hash(t)
    assert str(copy) == str(t) and copy.annotation_str() == t.annotation_str()
    assert (
        t.is_subtype_of(t) and t.is_subtype_of(ANY) and t.is_subtype_of(OptionalType(t) if t != NONE else t)
    )
    assert unify_types(t, t) == t


@PROPERTY_SETTINGS
@given(TYPES)
def test_random_types_print_like_torch(t):
    theirs = to_torch(t)
    assert str(t) == graph_spelling(theirs)
    assert t.annotation_str() == theirs.annotation_str


@PROPERTY_SETTINGS
@given(TYPES, TYPES)
def test_random_subtyping_and_unification_match_torch(a, b):
    ta, tb = to_torch(a), to_torch(b)
    assert a.is_subtype_of(b) == ta.isSubtypeOf(tb)
    assert b.is_subtype_of(a) == tb.isSubtypeOf(ta)
    unified = unify_types(a, b)
    assert (None if unified is None else str(unified)) == torch_unify(a, b)


@PROPERTY_SETTINGS
@given(tensor_types(), tensor_types())
def test_tensor_merge_is_the_least_common_supertype(a, b):
    merged = a.merge(b)
    assert a.is_subtype_of(merged) and b.is_subtype_of(merged)
    assert merged == b.merge(a)
    assert str(merged) == graph_spelling(C.unify_type_list([to_torch(a), to_torch(b)]))
