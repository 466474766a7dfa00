"""TorchScript's type system: every Value in a graph and every schema argument carries one of these.

Types are immutable and compare structurally (`ListType(IntType.get()) == ListType(IntType.get())`),
except the named types that stand for one declaration (ClassType, InterfaceType, EnumType), which compare
by identity.
Each type has three spellings, all byte for byte PyTorch's:

    str(t)              graph text (C++ operator<<) Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)[]
    t.schema_str()      schemas (C++ Type::str())   Tensor[]     (also inside Dict, Union and Await)
    t.annotation_str()  Python annotations          List[Tensor]

Subtyping (`is_subtype_of`), unification (`unify_types`) and the Union canonical form follow c10's rules,
quirks included, so that graphs and error messages match TorchScript's.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import torch

from tsjit.errors import TsjitError

# c10's TypeKind, in c10's order: Union members are sorted by it (then by their spelling).
TypeKind = enum.IntEnum("TypeKind", """
    AnyType EnumType AnyEnumType TensorType StorageType TupleType ListType DictType NumberType FloatType
    ComplexType FutureType AwaitType RRefType IntType NoneType StringType GeneratorType QuantizerType BoolType
    OptionalType VarType DeviceObjType StreamObjType FunctionType ClassType PyObjectType CapsuleType
    InterfaceType QSchemeType ScalarTypeType LayoutType MemoryFormatType AnyListType AnyTupleType AnyClassType
    SymIntType SymFloatType SymBoolType UnionType
""", start=0)

# how a type printer spells a type, or None for the type's own spelling (see Type.annotation_str)
TypePrinter = Callable[["Type"], "str | None"]


class Type:
    """Base of all TorchScript types."""

    kind: ClassVar[TypeKind]

    def schema_str(self) -> str:
        """C++ `Type::str()`: the spelling in FunctionSchema text (`Tensor?`, `Dict(str, int)`)."""
        raise NotImplementedError

    def __str__(self) -> str:
        """The spelling in graph text; differs from schema_str() only where refined tensors can show."""
        return self.schema_str()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def annotation_str(self, printer: TypePrinter | None = None) -> str:
        """The spelling as a Python type annotation (`List[int]`, `Optional[Tensor]`). `printer` may spell any
        type (itself or one it contains) otherwise by returning a string (c10's TypePrinter: the archive writer
        gives named types the unique names of the archive); None keeps the usual spelling."""
        if printer is not None:
            spelled = printer(self)
            if spelled is not None:
                return spelled
        return self._annotation_str(printer)

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return self.schema_str()

    def contained_types(self) -> tuple[Type, ...]:
        """The types this one is built from (element, key and value, members)."""
        return ()

    def with_contained(self, types: Sequence[Type]) -> Type:
        """The same kind of type built from `types` instead of `contained_types()`."""
        if types:
            raise TsjitError(f"{self} contains no types")
        return self

    def has_free_variables(self) -> bool:
        """Whether a schema type variable (`t`, `t1`) occurs in this type."""
        return any(t.has_free_variables() for t in self.contained_types())

    def is_subtype_of(self, other: Type) -> bool:
        """Whether a value of this type may be used where `other` is expected (c10's Type::isSubtypeOf)."""
        if isinstance(other, AnyType) or self == other:
            return True
        if isinstance(other, OptionalType):
            return self.is_subtype_of(other.elem)
        if isinstance(other, UnionType):
            return any(self.is_subtype_of(member) for member in other.types)
        return False


class _LeafType(Type):
    """A type without parameters: one shared instance per class, returned by `get()`."""

    _spelling: ClassVar[str]
    _annotation: ClassVar[str | None] = None
    _instances: ClassVar[dict[type, _LeafType]] = {}

    @classmethod
    def get(cls) -> _LeafType:
        """The shared instance of this type."""
        instance = _LeafType._instances.get(cls)
        if instance is None:
            instance = _LeafType._instances[cls] = cls()
        return instance

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def schema_str(self) -> str:
        return self._spelling

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return self._annotation or self._spelling


def _leaf(name: str, kind: TypeKind, spelling: str, annotation: str | None = None) -> Any:
    """Declare a parameterless type class: its TypeKind, schema spelling and (if different) annotation."""
    attributes = {"kind": kind, "_spelling": spelling, "_annotation": annotation, "__module__": __name__,
                  "__doc__": f"TorchScript's `{spelling}` type."}
    return type(name, (_LeafType,), attributes)


AnyType = _leaf("AnyType", TypeKind.AnyType, "Any")
BoolType = _leaf("BoolType", TypeKind.BoolType, "bool")
StringType = _leaf("StringType", TypeKind.StringType, "str")
DeviceType = _leaf("DeviceType", TypeKind.DeviceObjType, "Device")
StreamType = _leaf("StreamType", TypeKind.StreamObjType, "Stream")
GeneratorType = _leaf("GeneratorType", TypeKind.GeneratorType, "Generator")
StorageType = _leaf("StorageType", TypeKind.StorageType, "Storage")
CapsuleType = _leaf("CapsuleType", TypeKind.CapsuleType, "Capsule")
PyObjectType = _leaf("PyObjectType", TypeKind.PyObjectType, "PyObject")
QuantizerType = _leaf("QuantizerType", TypeKind.QuantizerType, "Quantizer")
QSchemeType = _leaf("QSchemeType", TypeKind.QSchemeType, "QScheme")
LayoutType = _leaf("LayoutType", TypeKind.LayoutType, "Layout")
ScalarTypeType = _leaf("ScalarTypeType", TypeKind.ScalarTypeType, "ScalarType")
MemoryFormatType = _leaf("MemoryFormatType", TypeKind.MemoryFormatType, "MemoryFormat")
SymIntType = _leaf("SymIntType", TypeKind.SymIntType, "SymInt", "int")
SymFloatType = _leaf("SymFloatType", TypeKind.SymFloatType, "SymFloat", "float")
SymBoolType = _leaf("SymBoolType", TypeKind.SymBoolType, "SymBool", "bool")
AnyListType = _leaf("AnyListType", TypeKind.AnyListType, "list")
AnyTupleType = _leaf("AnyTupleType", TypeKind.AnyTupleType, "tuple")
AnyClassType = _leaf("AnyClassType", TypeKind.AnyClassType, "AnyClassType")
AnyEnumType = _leaf("AnyEnumType", TypeKind.AnyEnumType, "AnyEnumType")


class NumberType(_LeafType):
    """`Scalar` in schemas (`number` in annotations): int, float or complex."""

    kind = TypeKind.NumberType
    _spelling = "Scalar"
    _annotation = "number"

    def is_subtype_of(self, other: Type) -> bool:
        if isinstance(other, UnionType):
            return other.can_hold_type(self)
        return super().is_subtype_of(other)


class _NumberMember(_LeafType):
    """int, float and complex: each is a subtype of Scalar."""

    def is_subtype_of(self, other: Type) -> bool:
        return isinstance(other, NumberType) or super().is_subtype_of(other)


class IntType(_NumberMember):
    """TorchScript's `int` (64-bit); also the IR type of dtypes, layouts and memory formats."""

    kind = TypeKind.IntType
    _spelling = "int"


class FloatType(_NumberMember):
    """TorchScript's `float` (a C double)."""

    kind = TypeKind.FloatType
    _spelling = "float"


class ComplexType(_NumberMember):
    """TorchScript's `complex` (two C doubles)."""

    kind = TypeKind.ComplexType
    _spelling = "complex"


class NoneType(_LeafType):
    """The type of None; a subtype of every Optional."""

    kind = TypeKind.NoneType
    _spelling = "NoneType"

    def is_subtype_of(self, other: Type) -> bool:
        return isinstance(other, OptionalType) or super().is_subtype_of(other)


# ---------------------------------------------------------------------------------------------------- tensors

_DTYPE_SPELLINGS = (
    ("uint8", "Byte"), ("int8", "Char"), ("int16", "Short"), ("int32", "Int"), ("int64", "Long"),
    ("float16", "Half"), ("float32", "Float"), ("float64", "Double"), ("complex32", "ComplexHalf"),
    ("complex64", "ComplexFloat"), ("complex128", "ComplexDouble"), ("bool", "Bool"), ("qint8", "QInt8"),
    ("quint8", "QUInt8"), ("qint32", "QInt32"), ("bfloat16", "BFloat16"), ("quint4x2", "QUInt4x2"),
    ("quint2x4", "QUInt2x4"), ("bits1x8", "Bits1x8"), ("bits2x4", "Bits2x4"), ("bits4x2", "Bits4x2"),
    ("bits8", "Bits8"), ("bits16", "Bits16"), ("float8_e5m2", "Float8_e5m2"),
    ("float8_e4m3fn", "Float8_e4m3fn"), ("float8_e5m2fnuz", "Float8_e5m2fnuz"),
    ("float8_e4m3fnuz", "Float8_e4m3fnuz"), ("uint16", "UInt16"), ("uint32", "UInt32"), ("uint64", "UInt64"),
    ("float8_e8m0fnu", "Float8_e8m0fnu"), ("float4_e2m1fn_x2", "Float4_e2m1fn_x2"),
    *((f"uint{bits}", f"UInt{bits}") for bits in range(1, 8)),
    *((f"int{bits}", f"Int{bits}") for bits in range(1, 8)),
)
_DTYPE_NAMES: dict[torch.dtype, str] = {
    getattr(torch, attribute): spelling
    for attribute, spelling in _DTYPE_SPELLINGS if hasattr(torch, attribute)
}
_DTYPES_BY_NAME = {spelling: dtype for dtype, spelling in _DTYPE_NAMES.items()}


def dtype_name(dtype: torch.dtype) -> str:
    """c10's name of a dtype, as refined tensor types print it (`Float`, `Long`, `BFloat16`)."""
    return _DTYPE_NAMES[dtype]


def dtype_from_name(name: str) -> torch.dtype | None:
    """The dtype c10 calls `name` (`Float` -> torch.float32), or None if no dtype has that name."""
    return _DTYPES_BY_NAME.get(name)


Dims = tuple[int | None, ...] | None


def _dims(values: Iterable[int | None] | None) -> Dims:
    """Sizes or strides as a tuple whose unknown entries are None; None when the rank is unknown."""
    return None if values is None else tuple(None if v is None else int(v) for v in values)


def _merge_value(a: Any, b: Any) -> Any:
    """What two refinements have in common: the value if both know the same one, else unknown (None)."""
    return a if a == b else None


def _merge_dims(a: Dims, b: Dims) -> Dims:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(_merge_value(x, y) for x, y in zip(a, b))


def _format_dims(dims: tuple[int | None, ...]) -> str:
    return ", ".join("*" if d is None else str(d) for d in dims)


@dataclass(frozen=True, repr=False)
class TensorType(Type):
    """A Tensor, optionally refined with what is statically known about it.

    None means unknown: `sizes=None` is unknown rank, a None entry of `sizes` an unknown dimension.
    `undefined` is False for ordinary tensors, True for the undefined tensors autograd uses for zero
    gradients, and None when either is possible. Strides that are all unknown are stored as None, and a
    0-d tensor's strides are always ().
    """

    dtype: torch.dtype | None = None
    device: torch.device | None = None
    requires_grad: bool | None = None
    sizes: Dims = None
    strides: Dims = None
    undefined: bool | None = False

    kind = TypeKind.TensorType

    def __post_init__(self) -> None:
        if self.dtype is not None and not isinstance(self.dtype, torch.dtype):
            raise TsjitError(f"TensorType dtype must be a torch.dtype, got {self.dtype!r}")
        if isinstance(self.device, str):
            object.__setattr__(self, "device", torch.device(self.device))
        sizes, strides = _dims(self.sizes), _dims(self.strides)
        if sizes == ():
            strides = ()  # a 0-d tensor has no strides that could be unknown
        elif strides is not None and set(strides) == {None}:
            strides = None
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "strides", strides)

    @classmethod
    def get(cls) -> TensorType:
        """The unrefined `Tensor` type."""
        return _UNREFINED_TENSOR

    @classmethod
    def create_from_tensor(cls, tensor: torch.Tensor) -> TensorType:
        """The complete type of a tensor: dtype, device, requires_grad, sizes and (if strided) strides."""
        strided = tensor.layout == torch.strided and not tensor.is_nested
        return cls(dtype=tensor.dtype, device=tensor.device, requires_grad=tensor.requires_grad,
                   sizes=tuple(tensor.shape) if strided else None,
                   strides=tensor.stride() if strided else None)

    @property
    def rank(self) -> int | None:
        """The number of dimensions, or None when unknown."""
        return None if self.sizes is None else len(self.sizes)

    def is_complete(self) -> bool:
        """Whether dtype, device, every size and every stride are known (requires_grad may not be)."""
        return (self.dtype is not None and self.device is not None and self._dims_complete(self.sizes)
                and self._dims_complete(self.strides))

    def _dims_complete(self, dims: Dims) -> bool:
        return dims is not None and len(dims) == self.rank and None not in dims

    def with_dtype(self, dtype: torch.dtype | None) -> TensorType:
        return dataclasses.replace(self, dtype=dtype)

    def with_device(self, device: torch.device | str | None) -> TensorType:
        return dataclasses.replace(self, device=torch.device(device) if isinstance(device, str) else device)

    def with_requires_grad(self, requires_grad: bool | None) -> TensorType:
        return dataclasses.replace(self, requires_grad=requires_grad)

    def with_sizes(self, sizes: Iterable[int | None] | None, strides: Iterable[int | None] | None = None
                   ) -> TensorType:
        """This type with new sizes; strides are unknown unless given, since old strides may not fit."""
        return dataclasses.replace(self, sizes=_dims(sizes), strides=_dims(strides))

    def with_rank(self, rank: int | None) -> TensorType:
        """This type with `rank` dimensions of unknown size (unknown rank if None)."""
        return self.with_sizes(None if rank is None else (None,) * rank)

    def with_undefined(self, undefined: bool | None) -> TensorType:
        return dataclasses.replace(self, undefined=undefined)

    def unrefined(self) -> TensorType:
        """The plain `Tensor` type."""
        return TensorType.get()

    def merge(self, other: TensorType) -> TensorType:
        """The most refined type both are subtypes of: only what the two agree on stays known."""
        return TensorType(dtype=_merge_value(self.dtype, other.dtype),
                          device=_merge_value(self.device, other.device),
                          requires_grad=_merge_value(self.requires_grad, other.requires_grad),
                          sizes=_merge_dims(self.sizes, other.sizes),
                          strides=_merge_dims(self.strides, other.strides),
                          undefined=_merge_value(self.undefined, other.undefined))

    def is_subtype_of(self, other: Type) -> bool:
        if isinstance(other, TensorType):
            return self.merge(other) == other
        return super().is_subtype_of(other)

    def schema_str(self) -> str:
        return "Tensor"

    def __str__(self) -> str:
        """`Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)`, `LongTensor`, `Tensor(2, *)`..."""
        return self._base_name() + self._details() + ("[Undefined]" if self.undefined else "")

    def _base_name(self) -> str:
        if self.dtype is None:
            return "Tensor"
        return dtype_name(self.dtype) + ("Tensor" if self.sizes is None else "")

    def _details(self) -> str:
        """The parenthesized part; shown when anything besides dtype is known."""
        parts = [_format_dims(self.sizes)] if self.sizes else []
        if self.rank and self.strides is not None and self._dims_complete(self.strides):
            parts.append(f"strides=[{_format_dims(self.strides)}]")
        if self.requires_grad is not None:
            parts.append(f"requires_grad={int(self.requires_grad)}")
        if self.device is not None:
            parts.append(f"device={self.device}")
        if self.sizes is None and not parts:
            return ""
        return "(" + ", ".join(parts) + ")"


_UNREFINED_TENSOR = TensorType()


# ------------------------------------------------------------------------------------------------ containers

@dataclass(frozen=True, repr=False)
class DictType(Type):
    """`Dict(K, V)` / `Dict[K, V]`: a mutable dict. Keys are limited to the hashable types c10 allows."""

    key: Type
    value: Type
    kind = TypeKind.DictType
    _KEY_TYPES: ClassVar[tuple[type, ...]] = (AnyType, IntType, BoolType, FloatType, ComplexType, StringType,
                                              TensorType, DeviceType)

    def __post_init__(self) -> None:
        if not isinstance(self.key, self._KEY_TYPES):
            raise TsjitError(f"Cannot create dict for key type '{self.key.schema_str()}', only int, float, "
                             "complex, Tensor, device and string keys are supported")

    def schema_str(self) -> str:
        return f"Dict({self.key.schema_str()}, {self.value.schema_str()})"

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return f"Dict[{self.key.annotation_str(printer)}, {self.value.annotation_str(printer)}]"

    def contained_types(self) -> tuple[Type, ...]:
        return (self.key, self.value)

    def with_contained(self, types: Sequence[Type]) -> Type:
        return DictType(*types)


@dataclass(frozen=True, repr=False)
class _SingleElementType(Type):
    """A type with one element type; the formats spell it around the element's own spelling."""

    elem: Type
    _schema_format: ClassVar[str]
    _graph_format: ClassVar[str]
    _annotation_format: ClassVar[str]

    def schema_str(self) -> str:
        return self._schema_format.format(self.elem.schema_str())

    def __str__(self) -> str:
        return self._graph_format.format(self.elem)

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return self._annotation_format.format(self.elem.annotation_str(printer))

    def contained_types(self) -> tuple[Type, ...]:
        return (self.elem,)

    def with_contained(self, types: Sequence[Type]) -> Type:
        return type(self)(*types)

    def _covariant_subtype_of(self, other: Type) -> bool:
        if Type.is_subtype_of(self, other):
            return True
        return type(other) is type(self) and self.elem.is_subtype_of(other.elem)


@dataclass(frozen=True, repr=False)
class ListType(_SingleElementType):
    """`T[]` / `List[T]`: a mutable list. Invariant in T, since a list can be written through."""

    kind = TypeKind.ListType
    _schema_format = _graph_format = "{}[]"
    _annotation_format = "List[{}]"

    def is_subtype_of(self, other: Type) -> bool:
        return isinstance(other, AnyListType) or super().is_subtype_of(other)


@dataclass(frozen=True, repr=False)
class FutureType(_SingleElementType):
    """`Future[T]`: the result of `fork`; covariant in T."""

    kind = TypeKind.FutureType
    _schema_format = "Future({})"
    _graph_format = _annotation_format = "Future[{}]"
    is_subtype_of = _SingleElementType._covariant_subtype_of


@dataclass(frozen=True, repr=False)
class AwaitType(_SingleElementType):
    """`Await[T]`: a lazily computed value; covariant in T. Graph text, too, spells it `Await(T)`."""

    kind = TypeKind.AwaitType
    _schema_format = "Await({})"
    _annotation_format = "Await[{}]"
    is_subtype_of = _SingleElementType._covariant_subtype_of

    def __str__(self) -> str:
        return self.schema_str()


@dataclass(frozen=True, repr=False)
class RRefType(_SingleElementType):
    """`RRef[T]`: a remote reference (torch.distributed.rpc); invariant in T."""

    kind = TypeKind.RRefType
    _schema_format = "RRef({})"
    _graph_format = _annotation_format = "RRef[{}]"


@dataclass(frozen=True, repr=False)
class TupleType(Type):
    """`(A, B)` / `Tuple[A, B]`; a NamedTuple when `names` are given (and `qualified_name`, if declared)."""

    elements: tuple[Type, ...]
    names: tuple[str, ...] | None = None
    qualified_name: str | None = None
    kind = TypeKind.TupleType

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", tuple(self.elements))
        if self.names is not None:
            object.__setattr__(self, "names", tuple(self.names))
            if len(self.names) != len(self.elements):
                raise TsjitError(f"NamedTuple has {len(self.names)} names for {len(self.elements)} fields")
        elif self.qualified_name is not None:
            raise TsjitError(f"NamedTuple {self.qualified_name} needs field names")

    def schema_str(self) -> str:
        if self.qualified_name is not None:
            return self.qualified_name
        return "(" + ", ".join(e.schema_str() for e in self.elements) + ")"

    def __str__(self) -> str:
        if self.names is None:
            return "(" + ", ".join(map(str, self.elements)) + ")"
        fields = ", ".join(f"{name} : {e}" for name, e in zip(self.names, self.elements))
        return f"NamedTuple({fields})"

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        if self.qualified_name is not None:
            return self.qualified_name
        if not self.elements:
            return "Tuple[()]"  # typing's spelling of the empty tuple
        return "Tuple[" + ", ".join(e.annotation_str(printer) for e in self.elements) + "]"

    def contained_types(self) -> tuple[Type, ...]:
        return self.elements

    def with_contained(self, types: Sequence[Type]) -> Type:
        return TupleType(tuple(types), self.names, self.qualified_name)

    def is_subtype_of(self, other: Type) -> bool:
        if super().is_subtype_of(other) or isinstance(other, AnyTupleType):
            return True
        if not isinstance(other, TupleType) or len(self.elements) != len(other.elements):
            return False
        if other.names is not None and self.names != other.names:
            return False  # a plain tuple is no NamedTuple; a NamedTuple is a tuple
        return all(a.is_subtype_of(b) for a, b in zip(self.elements, other.elements))


def requires_grad(type_: Type) -> bool:
    """Whether a value of this type is typed as requiring grad: a tensor typed so, or a tuple holding one (what
    keeps autograd-breaking rewrites such as fusion off a graph's inputs)."""
    if isinstance(type_, TensorType):
        return bool(type_.requires_grad)
    return isinstance(type_, TupleType) and any(requires_grad(t) for t in type_.elements)


# -------------------------------------------------------------------------------------------- Union, Optional

def _flatten_union(types: Iterable[Type]) -> list[Type]:
    """Union members with nested Unions and Optionals spliced in, and Scalar spelled int, float, complex."""
    flat: list[Type] = []
    for t in types:
        if isinstance(t, UnionType):
            flat.extend(_flatten_union(t.types))
        elif isinstance(t, OptionalType):
            flat.extend([*_flatten_union([t.elem]), NoneType.get()])
        elif isinstance(t, NumberType):
            flat.extend(_number_members())
        else:
            flat.append(t)
    return flat


def _coalesce_pair(a: Type, b: Type) -> Type | None:
    """The one Union member that can stand for both, if any; None is never folded into an Optional here."""
    if isinstance(a, NoneType) != isinstance(b, NoneType):
        return None
    return unify_types(a, b)


def _coalesce(types: list[Type]) -> list[Type]:
    """c10's filterDuplicateSubtypes: right to left, fold each member into an earlier one it unifies with."""
    types = list(types)
    end = len(types) - 1
    for i in range(len(types) - 1, 0, -1):
        for j in range(i - 1, -1, -1):
            unified = _coalesce_pair(types[i], types[j])
            if unified is not None:
                types[j], types[i] = unified, types[end]
                end -= 1
                break
    return types[:end + 1]


def _standardize_union(types: Iterable[Type]) -> tuple[Type, ...]:
    """The canonical member list of a Union: flat, without members that others subsume, sorted."""
    members = _coalesce(_flatten_union(types))
    return tuple(sorted(members, key=lambda t: (t.kind, t.schema_str())))


@dataclass(frozen=True, repr=False)
class UnionType(Type):
    """`Union(A, B)` / `Union[A, B]`. The constructor canonicalizes the members; use `create` to also turn
    a Union of T and None into `Optional[T]`."""

    types: tuple[Type, ...]
    kind = TypeKind.UnionType

    def __post_init__(self) -> None:
        members = _standardize_union(self.types)
        if len(members) < 2:
            raise TsjitError(f"a Union needs two distinct types, {list(map(str, self.types))} unify to one")
        object.__setattr__(self, "types", members)

    @staticmethod
    def create(types: Iterable[Type]) -> Type:
        """The canonical type for a Union of `types`: an OptionalType where one fits, the type itself where
        the members unify to one, else a UnionType."""
        members = _standardize_union(types)
        if len(members) == 1:
            return members[0]
        others = [t for t in members if not isinstance(t, NoneType)]
        if len(others) == len(members):
            return UnionType(members)
        if len(others) == 1:
            return OptionalType(others[0])
        if set(others) == set(_number_members()):
            return OptionalType(NumberType.get())
        return UnionType(members)

    def can_hold_type(self, t: Type) -> bool:
        """Whether a value of type `t` fits one of the members (Scalar needs int, float and complex)."""
        if isinstance(t, NumberType):
            return all(self.can_hold_type(member) for member in _number_members())
        return any(t.is_subtype_of(member) for member in self.types)

    def schema_str(self) -> str:
        return self._spell("Union(", ")", lambda t: t.schema_str())

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return self._spell("Union[", "]", lambda t: t.annotation_str(printer))

    def _spell(self, open_: str, close: str, spell: Callable[[Type], str]) -> str:
        """c10's unionStr, byte for byte: int, float and complex print as one Scalar at the end, and the
        separator logic keys off the member index, so `Union(, str, Scalar)` and `Union(TensorScalar)`
        are what PyTorch prints too."""
        holds_number = self.can_hold_type(NumberType.get())
        text, separated = open_, False
        for i, member in enumerate(self.types):
            if holds_number and isinstance(member, _NumberMember):
                continue
            if i > 0:
                text, separated = text + ", ", True
            text += spell(member)
        if holds_number:
            text += (", " if separated else "") + spell(NumberType.get())
        return text + close

    def contained_types(self) -> tuple[Type, ...]:
        return self.types

    def with_contained(self, types: Sequence[Type]) -> Type:
        return UnionType.create(types)

    def is_subtype_of(self, other: Type) -> bool:
        targets = _union_targets(other)
        return all(any(t.is_subtype_of(target) for target in targets) for t in self.types)


def _number_members() -> tuple[Type, ...]:
    return IntType.get(), FloatType.get(), ComplexType.get()


def _union_targets(other: Type) -> tuple[Type, ...]:
    """The types a Union member may fit into when checking `Union[...] <: other`."""
    if isinstance(other, UnionType):
        return other.types
    if isinstance(other, OptionalType):
        elem = _number_members() if isinstance(other.elem, NumberType) else (other.elem,)
        return (NoneType.get(), *elem)
    if isinstance(other, NumberType):
        return _number_members()
    return (other,)


@dataclass(frozen=True, repr=False)
class OptionalType(_SingleElementType):
    """`T?` / `Optional[T]`: T or None. Canonicalized like c10: Optional[Optional[T]] is Optional[T],
    Optional[Union[A, None]] is Optional[A], and Optional of int/float/complex is `Scalar?`."""

    kind = TypeKind.OptionalType
    _schema_format = _graph_format = "{}?"
    _annotation_format = "Optional[{}]"

    def __post_init__(self) -> None:
        if isinstance(self.elem, UnionType | OptionalType | NumberType | NoneType):
            object.__setattr__(self, "elem", _optional_element(self.elem))

    def is_subtype_of(self, other: Type) -> bool:
        if isinstance(other, OptionalType):
            return self.elem.is_subtype_of(other.elem)
        if isinstance(other, UnionType):
            # c10 asks whether the element as a whole fits one member, so Optional[Union[A, B]] is not a
            # subtype of Union[A, B, None]
            return other.can_hold_type(NoneType.get()) and other.can_hold_type(self.elem)
        return super().is_subtype_of(other)


def _optional_element(elem: Type) -> Type:
    """The element c10 keeps for Optional[elem] when elem is itself a Union, Optional, Scalar or None."""
    others = [t for t in _standardize_union([elem, NoneType.get()]) if not isinstance(t, NoneType)]
    if not others:
        raise TsjitError("Optional[NoneType] is not a type")
    if len(others) == 1:
        return others[0]
    if set(others) == set(_number_members()):
        # c10 checks the element's form here and so makes Optional[Optional[Scalar]] `Union(Scalar)?`, a
        # type that becomes `Scalar?` when rebuilt; checking the members keeps the canonical form stable
        return NumberType.get()
    return UnionType(tuple(others))


# ------------------------------------------------------------------------------------------------ other types

@dataclass(frozen=True, repr=False)
class VarType(Type):
    """A type variable of a schema (`t`, `t1`), bound when an overload is matched."""

    name: str
    kind = TypeKind.VarType

    def schema_str(self) -> str:
        return self.name

    def has_free_variables(self) -> bool:
        return True


@dataclass(frozen=True, repr=False)
class FunctionType(Type):
    """The type of a first-class TorchScript function value; `function` needs a `qualname` (or `name`)."""

    function: Any
    kind = TypeKind.FunctionType

    def schema_str(self) -> str:
        return "Function"

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return getattr(self.function, "qualname", None) or self.function.name


class _NamedType(Type):
    """A declared type (class, interface, enum): one object per declaration, compared by identity."""

    def __init__(self, qualified_name: str) -> None:
        self.qualified_name = qualified_name

    @property
    def name(self) -> str:
        """The unqualified name: `M` for `__torch__.M`."""
        return self.qualified_name.rpartition(".")[2]

    def schema_str(self) -> str:
        return self.qualified_name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.qualified_name!r})"


class ClassAttribute(NamedTuple):
    """One slot of a ClassType: its name, type, and whether it holds a parameter or a buffer."""

    name: str
    type: Type
    is_parameter: bool = False
    is_buffer: bool = False


class ClassType(_NamedType):
    """A TorchScript class or module: an ordered attribute table, constants and methods.

    Unlike other types it is mutable (attributes and methods are added while the class is compiled), so it
    compares by identity.
    """

    kind = TypeKind.ClassType

    def __init__(self, qualified_name: str, is_module: bool = False) -> None:
        super().__init__(qualified_name)
        self.is_module = is_module
        self._attributes: list[ClassAttribute] = []
        self.constants: dict[str, Any] = {}
        self.methods: dict[str, Any] = {}
        self.properties: dict[str, tuple[str, str | None]] = {}  # name -> (getter, setter or None) method names

    def add_attribute(self, name: str, type: Type, is_parameter: bool = False, is_buffer: bool = False
                      ) -> int:
        """Append an attribute slot and return its index."""
        if self.has_attribute(name):
            raise TsjitError(f"attribute '{name}' already defined on class {self.qualified_name}")
        self._attributes.append(ClassAttribute(name, type, is_parameter, is_buffer))
        return len(self._attributes) - 1

    @property
    def attributes(self) -> tuple[ClassAttribute, ...]:
        return tuple(self._attributes)

    @property
    def attribute_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self._attributes)

    def has_attribute(self, name: str) -> bool:
        """Whether the class has attribute `name` (a scan: no tuple of names built, it runs on every method call)."""
        for attribute in self._attributes:
            if attribute.name == name:
                return True
        return False

    def attribute_index(self, name: str) -> int:
        """The slot of attribute `name`; TsjitError if the class has none."""
        if not self.has_attribute(name):
            raise TsjitError(f"class {self.qualified_name} has no attribute '{name}'")
        return self.attribute_names.index(name)

    def get_attribute(self, name: str) -> Type:
        """The type of attribute `name`."""
        return self._attributes[self.attribute_index(name)].type

    def is_parameter(self, name: str) -> bool:
        return self._attributes[self.attribute_index(name)].is_parameter

    def is_buffer(self, name: str) -> bool:
        return self._attributes[self.attribute_index(name)].is_buffer

    def method_schema(self, name: str) -> Any:
        """The schema of method `name`, or None if the class has no such method."""
        method = self.methods.get(name)
        return None if method is None else method.schema

    def is_subtype_of(self, other: Type) -> bool:
        if isinstance(other, AnyClassType):
            return True
        if isinstance(other, InterfaceType):
            return other.is_implemented_by(self)
        return super().is_subtype_of(other)


CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."
_custom_classes: dict[str, ClassType] = {}


def custom_class(qualified_name: str) -> ClassType:
    """The one ClassType of a `__torch__.torch.classes.ns.Name` custom class (created on first use), as torch's
    custom class registry holds one per name."""
    found = _custom_classes.get(qualified_name)
    if found is None:
        found = _custom_classes[qualified_name] = ClassType(qualified_name)
    return found


def _type_of_script_object(value: torch.ScriptObject) -> ClassType:
    """A custom class instance returned by an operator (`profiler::_record_function_enter_new` gives a
    `torch.classes.profiler._RecordFunction`)."""
    return custom_class(value._type().qualified_name())


class InterfaceType(_NamedType):
    """A TorchScript interface: method schemas that any class or interface with matching methods meets."""

    kind = TypeKind.InterfaceType

    def __init__(self, qualified_name: str, is_module: bool = False) -> None:
        super().__init__(qualified_name)
        self.is_module = is_module
        self.methods: dict[str, Any] = {}

    def add_method(self, schema: Any) -> None:
        """Declare a method by its FunctionSchema (whose first argument is `self`)."""
        self.methods[schema.name] = schema

    def method_schema(self, name: str) -> Any:
        return self.methods.get(name)

    def schema_str(self) -> str:
        return f"InterfaceType<{self.name}>"

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return self.qualified_name

    def is_implemented_by(self, candidate: ClassType | InterfaceType) -> bool:
        """Whether `candidate` has every method of this interface with a compatible schema; a module
        interface is only met by modules."""
        return self.why_not_implemented_by(candidate) is None

    def why_not_implemented_by(self, candidate: ClassType | InterfaceType) -> str | None:
        """None if `candidate` implements this interface, else why not, in c10's words (for error messages)."""
        what = "Interface" if isinstance(candidate, InterfaceType) else "Class"
        if self.is_module and not candidate.is_module:
            return (f"{what} '{candidate.qualified_name}' is not a subtype of the module interface "
                    f"'{self.qualified_name}' , only ScriptModule class can be subtype of module interface.")
        for name, schema in self.methods.items():
            own = candidate.method_schema(name)
            if own is None:
                return (f"{what} '{candidate.qualified_name}' does not have method '{name}' but "
                        f"'{self.qualified_name}' does.")
            if not _method_fits(own, schema):
                return (f"Method on {what.lower()} '{candidate.qualified_name}' (1) is not compatible with interface "
                        f"'{self.qualified_name}' (2)\n  (1) {own}\n  (2) {schema}")
        return None

    def is_subtype_of(self, other: Type) -> bool:
        if isinstance(other, InterfaceType):
            return other.is_implemented_by(self)
        return super().is_subtype_of(other)


def _method_fits(own: Any, declared: Any) -> bool:
    """c10's FunctionSchema::isSubtypeOf for methods: arguments after self are contravariant, returns
    covariant, and names must agree."""
    if own is None:
        return False
    return (_arguments_fit(declared.arguments[1:], own.arguments[1:])
            and _arguments_fit(own.returns, declared.returns))


def _arguments_fit(children: Sequence[Any], parents: Sequence[Any]) -> bool:
    if len(children) != len(parents):
        return False
    return all(c.name == p.name and c.type.is_subtype_of(p.type) for c, p in zip(children, parents))


class EnumType(_NamedType):
    """A Python Enum used in TorchScript: its value type and its (name, value) members."""

    kind = TypeKind.EnumType

    def __init__(self, qualified_name: str, value_type: Type, names_values: Iterable[tuple[str, Any]]
                 ) -> None:
        super().__init__(qualified_name)
        self.value_type = value_type
        self.names_values = tuple(names_values)

    def schema_str(self) -> str:
        return f"Enum<{self.qualified_name}>"

    def _annotation_str(self, printer: TypePrinter | None) -> str:
        return self.qualified_name

    def is_subtype_of(self, other: Type) -> bool:
        return isinstance(other, AnyEnumType) or super().is_subtype_of(other)


@dataclass(frozen=True, repr=False)
class EnumValue:
    """A member of an EnumType that has no Python Enum class behind it (read from graph text or an archive):
    prints as `__torch__.Color.RED`. Members of Python Enum classes are those classes' own members."""

    enum_type: EnumType
    name: str
    value: Any

    def __repr__(self) -> str:
        return f"<{self.enum_type.qualified_name}.{self.name}: {self.value!r}>"


# How type_of types a member of a Python Enum class: the frontend (tsjit.frontend.enum_values), which names and
# checks such classes, registers `(enum class) -> EnumType` here.
ENUM_CLASS_HOOKS: list[Callable[[type], EnumType]] = []


def holds_enum_member(value: Any) -> bool:
    """Whether a value is an enum member (a Python one or an EnumValue) or a list, tuple or dict holding one."""
    if isinstance(value, enum.Enum | EnumValue):
        return True
    if isinstance(value, list | tuple):
        return any(holds_enum_member(v) for v in value)
    if isinstance(value, dict):
        return any(holds_enum_member(k) or holds_enum_member(v) for k, v in value.items())
    return False


def enum_type_of_member(member: enum.Enum | EnumValue) -> EnumType:
    """The EnumType of a Python Enum member or of an EnumValue."""
    if isinstance(member, EnumValue):
        return member.enum_type
    if not ENUM_CLASS_HOOKS:
        raise TsjitError(f"cannot infer a TorchScript type for enum member {member!r}: the frontend is not loaded")
    return ENUM_CLASS_HOOKS[0](type(member))


# ---------------------------------------------------------------------------------------------- unification

def is_subtype(a: Type, b: Type) -> bool:
    """Whether `a` <: `b`."""
    return a.is_subtype_of(b)


def unshaped_type(t: Type) -> Type:
    """`t` with every tensor type, however deeply nested, replaced by plain `Tensor`."""
    if t.is_subtype_of(TensorType.get()):
        return TensorType.get()
    contained = t.contained_types()
    return t.with_contained([unshaped_type(c) for c in contained]) if contained else t


def unify_types(a: Type, b: Type, default_to_union: bool = False, type_hint: Type | None = None
                ) -> Type | None:
    """c10's unifyTypes: the type both `a` and `b` can be used as, or None if there is none.

    Refined tensors merge; None and T give Optional[T]; tuples and futures unify elementwise; lists and
    dicts only unify when one is a subtype of the other once tensor refinements are dropped. With
    `default_to_union`, types that do not unify give their Union. `type_hint` (say an interface both
    classes implement) is returned when it is a common supertype.
    """
    unified = _unify(a, b, default_to_union, type_hint)
    if unified is None and default_to_union:
        return UnionType.create([a, b])
    return unified


def _unify(a: Type, b: Type, default_to_union: bool, type_hint: Type | None) -> Type | None:
    for rule in (_unify_by_subtyping, _unify_tensors, _unify_with_none, _unify_optional):
        unified = rule(a, b)
        if unified is not None:
            return unified
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return _unify_tuples(a, b, default_to_union)
    if isinstance(a, FutureType) and isinstance(b, FutureType):
        elem = unify_types(a.elem, b.elem)
        if elem is not None:
            return FutureType(elem)
    unified = _unify_by_subtyping(unshaped_type(a), unshaped_type(b))
    if unified is None and type_hint is not None and is_subtype(a, type_hint) and is_subtype(b, type_hint):
        return type_hint
    return unified


def _unify_by_subtyping(a: Type, b: Type) -> Type | None:
    if a.is_subtype_of(b):
        return b
    return a if b.is_subtype_of(a) else None


def _unify_tensors(a: Type, b: Type) -> Type | None:
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.merge(b)
    return None


def _unify_with_none(a: Type, b: Type) -> Type | None:
    a_none, b_none = a.is_subtype_of(NoneType.get()), b.is_subtype_of(NoneType.get())
    if a_none == b_none:
        return None
    return OptionalType(a if b_none else b)


def _unify_optional(a: Type, b: Type) -> Type | None:
    """unify(Optional[A], B) is Optional[unify(A, B)] (and the mirror image)."""
    if isinstance(a, OptionalType):
        elem = unify_types(a.elem, b)
    elif isinstance(b, OptionalType):
        elem = unify_types(b.elem, a)
    else:
        return None
    return None if elem is None else OptionalType(elem)


def _unify_tuples(a: TupleType, b: TupleType, default_to_union: bool) -> Type | None:
    if len(a.elements) != len(b.elements):
        return None
    elements = [unify_types(x, y, default_to_union) for x, y in zip(a.elements, b.elements)]
    known = [e for e in elements if e is not None]
    return TupleType(tuple(known)) if len(known) == len(elements) else None


def unify_type_list(types: Sequence[Type], default_to_union: bool = False, type_hint: Type | None = None
                    ) -> Type | None:
    """Unify `types` left to right (c10's unifyTypeList); None if the list is empty or a type does not fit."""
    if not types:
        return None
    unified = types[0]
    for t in types[1:]:
        step = unify_types(unified, t, default_to_union, type_hint)
        if step is None:
            return None
        unified = step
    return unified


def _union_members(type_: Type) -> list[Type]:
    if isinstance(type_, UnionType):
        return list(type_.types)
    if isinstance(type_, OptionalType):
        return [type_.elem, NoneType.get()]
    return [type_]


def isinstance_partition(value_type: Type, candidates: list[Type]) -> tuple[list[Type], list[Type], bool]:
    """For `isinstance(x, candidates)`: the types x may have when true and when false, and whether it is
    statically true (C++ emitIsInstance). No true types: statically false. The emitter decides it from the types
    it knows; passes decide it again once inlining and refinement have narrowed the value's type."""
    if value_type == AnyType.get():
        all_any = len(candidates) == 1 and candidates[0] == AnyType.get()
        return list(candidates), [AnyType.get()], all_any
    true_types, false_types, all_match = [], [], True
    for member in _union_members(value_type):
        refined = None
        for candidate in candidates:
            if member.is_subtype_of(candidate):
                refined = member
            elif candidate.is_subtype_of(member):
                refined = candidate if refined is None else unify_types(refined, candidate)
        if refined is None:
            false_types.append(member)
            all_match = False
            continue
        true_types.append(refined)
        if refined != member:
            all_match = False
    return true_types, false_types, all_match


# ------------------------------------------------------------------------------------------- runtime values

def type_of(value: Any) -> Type:
    """The TorchScript type of a Python runtime value (an IValue).

    Tensors get complete TensorTypes, also inside tuples; list and dict element types drop tensor
    refinements, as their contents may change. dtypes, layouts, memory formats and qschemes are ints, as in
    TorchScript; enum members have their EnumType (but IntEnum members are ints). Raises TsjitError for values
    TorchScript has no type for, for empty lists and dicts (whose element type cannot be known) and for lists
    or dicts whose elements do not unify.
    """
    for python_types, rule in _VALUE_RULES:
        if isinstance(value, python_types):
            return rule(value)
    raise TsjitError(f"cannot infer a TorchScript type for a value of Python type '{type(value).__name__}'")


def _unified_element_type(values: Iterable[Any], what: str) -> Type:
    """The common type of container members, with tensor refinements dropped."""
    types = [unshaped_type(type_of(v)) for v in values]
    if not types:
        raise TsjitError(f"cannot infer the element type of an empty {what}")
    unified = unify_type_list(types)
    if unified is None:
        found = ", ".join(dict.fromkeys(t.annotation_str() for t in types))
        raise TsjitError(f"{what} elements must have one type, found {found}")
    return unified


def _type_of_dict(value: dict) -> Type:
    key = _unified_element_type(value.keys(), "dict key")
    return DictType(key, _unified_element_type(value.values(), "dict"))


_VALUE_RULES: tuple[tuple[type | tuple[type, ...], Callable[[Any], Type]], ...] = (
    (torch.Tensor, TensorType.create_from_tensor),
    (bool, lambda _: BoolType.get()),
    (int, lambda _: IntType.get()),
    (float, lambda _: FloatType.get()),
    (complex, lambda _: ComplexType.get()),
    (str, lambda _: StringType.get()),
    # after int and str: members of IntEnum (and str-mixin) classes are ints (strs), as torch.jit infers them
    ((enum.Enum, EnumValue), enum_type_of_member),
    (type(None), lambda _: NoneType.get()),
    (torch.device, lambda _: DeviceType.get()),
    ((torch.dtype, torch.layout, torch.memory_format, torch.qscheme), lambda _: IntType.get()),
    (torch.Generator, lambda _: GeneratorType.get()),
    (torch.Stream, lambda _: StreamType.get()),
    ((torch.UntypedStorage, torch.TypedStorage), lambda _: StorageType.get()),
    (torch.ScriptObject, _type_of_script_object),
    (tuple, lambda value: TupleType(tuple(type_of(v) for v in value))),
    (list, lambda value: ListType(_unified_element_type(value, "list"))),
    (dict, _type_of_dict),
)
