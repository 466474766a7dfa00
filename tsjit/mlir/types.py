"""TorchScript types spelled as torch-dialect MLIR types, and argument annotations (shape and dtype).

The torch dialect mirrors TorchScript's type system almost one to one (seed: torch-mlir-architecture.md,
"Types"). The exception is tensors: `!torch.tensor` models a PyTorch tensor with aliasing and mutation, while
`!torch.vtensor` has value semantics; both carry optional sizes (`?` for an unknown size) and an optional dtype:

    Tensor                              !torch.vtensor
    Float(2, *)                         !torch.vtensor<[2,?],f32>
    Tensor[] / int? / (Tensor, int)     !torch.list<vtensor> / !torch.optional<int> / !torch.tuple<vtensor, int>

Inside a container the `!torch.` prefix is dropped (`!torch.list<!torch.int>` does not parse). ScalarType,
Layout, MemoryFormat and SymInt are `!torch.int`, as in graph values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from tsjit.errors import MLIRError
from tsjit.ir import types as ts

# The torch dialect's element types (torch-mlir's importer map, plus float8 which the dialect parses). The
# dialect rejects signless `i64`: integer dtypes are signed (`si64`) or unsigned (`ui8`); `i1` is bool.
_DTYPES: dict[torch.dtype, str] = {
    torch.uint8: "ui8", torch.int8: "si8", torch.int16: "si16", torch.int32: "si32", torch.int64: "si64",
    torch.bool: "i1", torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.complex64: "complex<f32>", torch.complex128: "complex<f64>", torch.qint8: "!torch.qint8",
    torch.quint8: "!torch.quint8", torch.qint32: "!torch.qint32", torch.float8_e4m3fn: "f8E4M3FN",
    torch.float8_e5m2: "f8E5M2",
}

# Parameterless TorchScript types and their torch-dialect names.
_SCALARS: dict[type, str] = {
    ts.IntType: "int", ts.SymIntType: "int", ts.ScalarTypeType: "int", ts.LayoutType: "int",
    ts.MemoryFormatType: "int", ts.FloatType: "float", ts.SymFloatType: "float", ts.BoolType: "bool",
    ts.SymBoolType: "bool", ts.StringType: "str", ts.NoneType: "none", ts.NumberType: "number",
    ts.AnyType: "any", ts.DeviceType: "Device", ts.GeneratorType: "Generator",
}


def mlir_dtype(dtype: torch.dtype) -> str:
    """The torch dialect's element type for a dtype (`torch.float32` -> `f32`)."""
    found = _DTYPES.get(dtype)
    if found is None:
        raise MLIRError(f"dtype {dtype} has no torch-dialect element type")
    return found


def tensor_type(sizes: Sequence[int | None] | None, dtype: torch.dtype | None, value_semantics: bool) -> str:
    """`!torch.vtensor<[2,?],f32>` and its variants: sizes None = unknown rank, a None size = `?`."""
    return "!torch." + _tensor_spelling(sizes, dtype, value_semantics)


def mlir_type(type_: ts.Type, value_semantics: bool = True) -> str:
    """The torch-dialect spelling of a TorchScript type; tensors are `vtensor` under value semantics."""
    return "!torch." + _spell(type_, value_semantics)


def _spell(type_: ts.Type, value_semantics: bool) -> str:
    """The type without the `!torch.` prefix, as it appears inside container types."""
    if isinstance(type_, ts.TensorType):
        return _tensor_spelling(type_.sizes, type_.dtype, value_semantics)
    scalar = _SCALARS.get(type(type_))
    if scalar is not None:
        return scalar
    container = _CONTAINERS.get(type(type_))
    if container is not None:
        inner = ", ".join(_spell(t, value_semantics) for t in type_.contained_types())
        return f"{container}<{inner}>"
    if isinstance(type_, ts.ClassType):
        return f'nn.Module<"{type_.qualified_name}">'
    raise MLIRError(f"type {type_} has no torch-dialect equivalent")


_CONTAINERS: dict[type, str] = {
    ts.ListType: "list", ts.OptionalType: "optional", ts.TupleType: "tuple", ts.DictType: "dict",
    ts.UnionType: "union",
}


def _tensor_spelling(sizes, dtype, value_semantics: bool) -> str:
    base = "vtensor" if value_semantics else "tensor"
    if sizes is None and dtype is None:
        return base
    shape = "*" if sizes is None else "[" + ",".join("?" if s is None else str(s) for s in sizes) + "]"
    return f"{base}<{shape},{'unk' if dtype is None else mlir_dtype(dtype)}>"


@dataclass(frozen=True)
class TensorAnnotation:
    """What torch-mlir's `annotate_args` said about a tensor argument: its sizes (-1 = dynamic) and dtype."""

    sizes: tuple[int, ...]
    dtype: torch.dtype

    @classmethod
    def of(cls, tensor: torch.Tensor) -> TensorAnnotation:
        """The static annotation of an example tensor."""
        return cls(tuple(tensor.shape), tensor.dtype)

    def tensor_type(self) -> ts.TensorType:
        """The refined TorchScript type of an argument with this annotation (dynamic sizes unknown)."""
        sizes = tuple(None if s == -1 else s for s in self.sizes)
        return ts.TensorType(dtype=self.dtype, sizes=sizes, device=torch.device("cpu"))


@dataclass(frozen=True)
class Default:
    """An argument the call leaves out: its declared default, compiled into the program as a constant (a call
    `module(x)` of `forward(self, input, output_size: Optional[List[int]] = None)` compiles for `output_size=None`,
    as torch.export specializes a program to the arguments it is called with)."""

    value: object


def annotation_from(spec):
    """Read one argument annotation: an example tensor or `(sizes, dtype)` (-1 = dynamic size; torch-mlir's
    trailing value-semantics flag is accepted and ignored) give a TensorAnnotation; a tuple of those annotates
    a tuple argument. Anything else (None, an example int, list or str) says nothing about shapes: None."""
    if isinstance(spec, TensorAnnotation):
        return spec
    if isinstance(spec, torch.Tensor):
        return TensorAnnotation.of(spec)
    if isinstance(spec, tuple | list) and len(spec) in (2, 3) and isinstance(spec[1], torch.dtype):
        return TensorAnnotation(tuple(int(s) for s in spec[0]), spec[1])
    if isinstance(spec, tuple):
        return tuple(annotation_from(s) for s in spec)
    return None
