"""prim ops: the structural node kinds of the IR and the schema-carrying prim operators.

Two tables, both data:

- `NODE_OPERATIONS`: node kind -> factory building the Operation from the node itself. These kinds either have
  no schema (prim::Constant, TupleConstruct, ListConstruct, DictConstruct, GetAttr, SetAttr, isinstance,
  Enter, Exit, ...) or a schema that does not say enough (prim::TupleUnpack's outputs, the
  chunk count of prim::ConstantChunk), or they are so common that resolving them by kind is simplest
  (prim::RaiseException, prim::NumToTensor, prim::Print). The interpreter consults this table first.
- `OPERATORS` / `OPERATION_FACTORIES`: (schema, implementation) rows for prim operators with schemas, and
  the identity builtins `aten::__is__`/`__isnot__`; `tsjit.ops.builtins.load()` registers them with all
  other builtins when the registry first needs an implementation it lacks.

Control flow (prim::If, prim::Loop), calls (prim::CallFunction, prim::CallMethod), prim::fork/aten::wait and
prim::CreateObject belong to the runtime.

Runtime values: a TorchScript object is any Python object whose attributes are its slots (GetAttr/SetAttr use
`getattr`/`setattr`, Enter/Exit call `__enter__`/`__exit__`), as `tsjit.ir.objects.Object` is.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from typing import Any

import torch

from tsjit.errors import RuntimeTsjitError, TsjitError
from tsjit.ir.constants import constant_value
from tsjit.ir.symbols import Symbol, prim
from tsjit.ir.types import (
    AnyType,
    ClassType,
    DictType,
    FloatType,
    IntType,
    ListType,
    NoneType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
    UnionType,
    dtype_name,
    type_of,
)
from tsjit.ops.builtins.common import fail, normalize_index
from tsjit.ops.builtins.environment import print_values
from tsjit.ops.builtins.tensors_scalars import (
    broadcast_sizes,
    float_implicit,
    int_implicit,
    num_to_tensor,
    scalar_implicit,
)

Operation = Callable[..., Any]
OperationFactory = Callable[[Any], Operation]


class _Uninitialized:
    """The value of prim::Uninitialized: a placeholder for a variable no path reads before assigning it."""

    def __repr__(self) -> str:
        return "Uninitialized"


UNINITIALIZED = _Uninitialized()


# ------------------------------------------------------------------------------------ schema'd prim ops

def raise_exception(msg: str, cls: str | None = None) -> None:
    """prim::RaiseException: raise the Python exception class the program named (`builtins.ValueError`,
    or a class of a loaded module), else a RuntimeTsjitError; assert failures come with cls=None and a
    message starting `AssertionError: `."""
    exception_class = _exception_class(cls)
    if exception_class is not None:
        raise exception_class(msg)
    raise RuntimeTsjitError(msg if cls is None else f"{cls}: {msg}")


def _exception_class(qualified_name: str | None) -> type[BaseException] | None:
    """The exception class `module.Name` refers to, looked up among loaded modules (nothing is imported)."""
    if not qualified_name:
        return None
    module_name, _, name = qualified_name.rpartition(".")
    module = builtins if module_name == "builtins" else sys.modules.get(module_name)
    found = getattr(module, name, None) if module is not None else None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def uninitialized() -> _Uninitialized:
    return UNINITIALIZED


def unchecked_cast(x: Any) -> Any:
    """prim::unchecked_cast (and prim::unchecked_unwrap_optional): a refinement the compiler proved."""
    return x


def unwrap_optional(optional: Any) -> Any:
    if optional is None:
        fail("Unwrapping null optional")
    return optional


def tuple_index(tup: tuple, i: int) -> Any:
    offset = normalize_index(i, len(tup))
    if not 0 <= offset < len(tup):
        fail("Tuple list index out of range")
    return tup[offset]


def if_then_else(cond: bool, x: Any, y: Any) -> Any:
    return x if cond else y


def is_same(a: Any, b: Any) -> bool:
    """aten::__is__: identity for tensors, containers, strings and objects, equality for numbers, bools
    and devices (TorchScript stores those by value)."""
    if a is b:
        return True
    return type(a) is type(b) and type(a) in _BY_VALUE and a == b


_BY_VALUE = (bool, int, float, complex, torch.device)


def is_not_same(a: Any, b: Any) -> bool:
    return not is_same(a, b)


def enum_name(enum: Any) -> str:
    return enum.name


def enum_value(enum: Any) -> Any:
    return enum.value


def module_container_index(self: Any, ind: int | str) -> Any:
    """prim::ModuleContainerIndex: `self.layers[i]` for a ModuleList or ModuleDict, whose submodules are
    attributes named by their index or key."""
    return getattr(self, str(ind))


def to_list(tensor: torch.Tensor, dim: int, element_type: int) -> list:
    """prim::tolist(tensor, dims of the annotation, element kind 0=int 1=float 2=bool 3=complex)."""
    expected = _TOLIST_ELEMENTS[element_type]
    matches = ((expected == "float" and tensor.is_floating_point())
               or (expected == "complex" and tensor.is_complex()))
    if not matches and _TOLIST_DTYPES[expected] != tensor.dtype:
        fail("Output annotation element type and runtime tensor element type must match for tolist(): "
             f"{dtype_name(_TOLIST_DTYPES[expected])} vs {dtype_name(tensor.dtype)}")
    if dim != tensor.dim():
        fail("Output annotation list dimension and runtime tensor dimension must match for tolist()")
    return tensor.tolist()


_TOLIST_ELEMENTS = ("int", "float", "bool", "complex")
_TOLIST_DTYPES = {"int": torch.int64, "float": torch.float64, "bool": torch.bool, "complex": torch.complex128}


# ------------------------------------------------------------------------------------ node operations

def _fixed(operation: Operation) -> OperationFactory:
    """A factory for kinds whose operation does not depend on the node."""
    return lambda node: operation


def _constant(node) -> Operation:
    value = constant_value(node)
    return lambda: value


def _tuple_construct(node) -> Operation:
    return lambda *values: values


def _tuple_unpack(node) -> Operation:
    """`a, b = t`: the interpreter spreads the tuple over the node's outputs; a single output takes the
    element itself and no outputs take nothing."""
    outputs = len(node.outputs)
    if outputs == 1:
        return lambda tup: tup[0]
    return (lambda tup: None) if outputs == 0 else unchecked_cast


def _tuple_slice(node) -> Operation:
    begin, end = node.i("beg"), node.i("end")
    return lambda tup: tup[begin:end]


def _list_construct(node) -> Operation:
    return lambda *values: list(values)


def _list_unpack(node) -> Operation:
    """`a, b = l`: the list must have exactly as many elements as the node has outputs."""
    outputs = len(node.outputs)

    def unpack(values: list) -> Any:
        if len(values) != outputs:
            fail(f"Expected {outputs} elements in a list but found {len(values)}")
        return tuple(values) if outputs != 1 else values[0]

    return unpack


def _dict_construct(node) -> Operation:
    """Inputs alternate key, value; a repeated key keeps its first position and its last value."""
    return lambda *keys_and_values: dict(zip(keys_and_values[::2], keys_and_values[1::2]))


def _get_attr(node) -> Operation:
    name = node.s("name")
    return lambda obj: getattr(obj, name)


def _python_op(node) -> Operation:
    """A call back into Python (`@tsjit.ignore`d functions and methods): the callable is the `pyobj` attribute."""
    return node.ival("pyobj")


def _set_attr(node) -> Operation:
    name = node.s("name")
    return lambda obj, value: setattr(obj, name, value)


def _isinstance(node) -> Operation:
    candidates = tuple(node.tys("types"))
    return lambda value: any(is_instance(value, t) for t in candidates)


def is_instance(value: Any, type_: Type) -> bool:
    """Whether a runtime value belongs to a type (what prim::isinstance asks of Union and Any values).

    Containers are checked by their elements, so an empty list is a list of anything."""
    if isinstance(type_, AnyType):
        return True
    if isinstance(type_, OptionalType):
        return value is None or is_instance(value, type_.elem)
    if isinstance(type_, UnionType):
        return any(is_instance(value, t) for t in type_.contained_types())
    check = _CONTAINER_CHECKS.get(type(type_))
    if check is not None:
        return check(value, type_)
    class_type = getattr(value, "type", None)  # a TorchScript object carries its ClassType
    if isinstance(class_type, ClassType):
        return class_type.is_subtype_of(type_)
    try:
        return type_of(value).is_subtype_of(type_)
    except TsjitError:
        return False


_CONTAINER_CHECKS: dict[type, Callable[[Any, Any], bool]] = {
    ListType: lambda value, t: isinstance(value, list) and all(is_instance(v, t.elem) for v in value),
    DictType: lambda value, t: isinstance(value, dict) and all(
        is_instance(k, t.key) and is_instance(v, t.value) for k, v in value.items()),
    TupleType: lambda value, t: isinstance(value, tuple) and len(value) == len(t.elements) and all(
        is_instance(v, e) for v, e in zip(value, t.elements)),
    TensorType: lambda value, t: isinstance(value, torch.Tensor),
    NoneType: lambda value, t: value is None,
}


def _enter(node) -> Operation:
    """prim::Enter: `with obj:` calls `obj.__enter__()`."""
    return lambda obj: obj.__enter__()


def _exit(node) -> Operation:
    """prim::Exit calls `obj.__exit__(None, None, None)` (TorchScript passes no exception)."""
    return lambda obj: obj.__exit__(None, None, None)


def _constant_chunk(node) -> Operation:
    """prim::ConstantChunk[chunks=N, dim=d]: `t.chunk(N, d)`. Chunk returns fewer pieces when the dimension is
    shorter than N: the missing outputs are None where nothing reads them, an error (TorchScript's) where something
    does."""
    chunks, dim = node.i("chunks"), node.i("dim")
    outputs = len(node.outputs)
    used = [bool(value.uses) for value in node.outputs]

    def chunk(tensor: torch.Tensor) -> Any:
        pieces = list(tensor.chunk(chunks, dim))
        if len(pieces) > chunks:
            fail(f"Expected chunk to return {chunks} outputs, but got {len(pieces)}")
        if any(used[len(pieces):]):
            fail(f"Expected chunk to return at least {chunks} outputs, but got only {len(pieces)}")
        pieces += [None] * (outputs - len(pieces))
        return tuple(pieces) if outputs != 1 else pieces[0]

    return chunk


def _chunk_sizes(node) -> Operation:
    """prim::ChunkSizes[chunks=N, dim=d](shape): the shapes of a regular chunk and of the last one."""
    chunks, raw_dim = node.i("chunks"), node.i("dim")

    def sizes(shape: list[int]) -> tuple[list[int], list[int]]:
        dim = raw_dim + len(shape) if raw_dim < 0 else raw_dim
        if not 0 <= dim < len(shape):
            fail("Dimension out of range for chunk")
        split_size = (shape[dim] + chunks - 1) // chunks
        regular, last = list(shape), list(shape)
        regular[dim] = split_size
        if shape[dim] % chunks != 0:
            splits = max((shape[dim] + split_size - 1) // split_size, 1)
            last[dim] = split_size - (split_size * splits - shape[dim])
        else:
            last[dim] = split_size
        return regular, last

    return sizes


def _implicit_tensor_to_num(node) -> Operation:
    """prim::ImplicitTensorToNum (older IR): the output type says which number."""
    output = node.output().type
    if isinstance(output, IntType):
        return int_implicit
    return float_implicit if isinstance(output, FloatType) else scalar_implicit


NODE_OPERATIONS: dict[Symbol, OperationFactory] = {
    prim.Constant: _constant,
    prim.TupleConstruct: _tuple_construct,
    prim.TupleUnpack: _tuple_unpack,
    prim.TupleIndex: _fixed(tuple_index),
    prim.TupleSlice: _tuple_slice,
    prim.ListConstruct: _list_construct,
    prim.ListUnpack: _list_unpack,
    prim.DictConstruct: _dict_construct,
    prim.GetAttr: _get_attr,
    prim.SetAttr: _set_attr,
    prim.isinstance: _isinstance,
    prim.unchecked_cast: _fixed(unchecked_cast),
    prim.Uninitialized: _fixed(uninitialized),
    prim.ConstantChunk: _constant_chunk,
    prim.ChunkSizes: _chunk_sizes,
    prim.BroadcastSizes: _fixed(broadcast_sizes),
    prim.Enter: _enter,
    prim.Exit: _exit,
    prim.Print: _fixed(print_values),
    prim.RaiseException: _fixed(raise_exception),
    prim.NumToTensor: _fixed(num_to_tensor),
    prim.ImplicitTensorToNum: _implicit_tensor_to_num,
    prim.PythonOp: _python_op,
}

OPERATORS: list[tuple[str, Operation]] = [
    ("prim::RaiseException(str msg, str? cls=None) -> ()", raise_exception),
    ("prim::Uninitialized() -> Any", uninitialized),
    ("prim::unchecked_cast(t x) -> t", unchecked_cast),
    ("prim::unchecked_unwrap_optional(t(a)? optional) -> t(a)", unchecked_cast),
    ("aten::_unwrap_optional(t(a)? optional) -> t(a)", unwrap_optional),
    ("prim::TupleIndex(Any tup, int i) -> Any", tuple_index),
    ("prim::IfThenElse(bool cond, Any(a) x, Any(b) y) -> Any(b|a)", if_then_else),
    ("aten::__is__(t1 self, t2 obj) -> bool", is_same),
    ("aten::__isnot__(t1 self, t2 obj) -> bool", is_not_same),
    ("prim::EnumName(AnyEnumType enum) -> str", enum_name),
    *[(f"prim::EnumValue.{kind}(AnyEnumType enum) -> {kind}", enum_value)
      for kind in ("int", "float", "str")],
    ("prim::ModuleContainerIndex.list(Any self, int ind) -> Any", module_container_index),
    ("prim::ModuleContainerIndex.dict(Any self, str ind) -> Any", module_container_index),
    ("prim::tolist(...) -> ...", to_list),
]

OPERATION_FACTORIES: list[tuple[str, OperationFactory]] = [
    ("prim::TupleUnpack(Any tup) -> ...", _tuple_unpack),
    ("prim::ConstantChunk(...) -> ...", _constant_chunk),
    ("prim::ChunkSizes(...) -> ...", _chunk_sizes),
]
