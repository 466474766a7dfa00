"""Binding a traced Python call to an operator schema the way PyTorch's Python argument parser binds it.

The tracer records what the C++ call received, so a Python call is bound as PyTorch's binding code binds it:
trailing integers form the one integer-list argument, a single integer stands for an `int[N]`, keyword
`input` is the schema's `self`, and factory functions fill in the device and `pin_memory` their bindings pass:

    x.view(n, -1)     view(Tensor(a) self, SymInt[] size)                 ->  [x, [n, -1]]
    x.sum(1)          sum.dim_IntList(Tensor self, int[1]? dim, ...)      ->  [x, [1], MISSING, MISSING]
    torch.zeros(3)    zeros(SymInt[] size, *, ..., Device? device=None,
                            bool? pin_memory=None)                        ->  [[3], MISSING, MISSING, cpu, False]

MISSING marks an argument the call did not give: the recorded node gets the schema's default. `n` above may be
a size the tracer returned as a 0-dim tensor; the tracer turns it into `aten::Int` when it records the node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.ir.schema import Argument, FunctionSchema

MISSING = object()  # an argument the Python call left out: the node records the schema default

# keywords of the Python bindings that no schema argument receives
_IGNORED_KEYWORDS = frozenset({"requires_grad"})


def bind_call(schema: FunctionSchema, args: Sequence[Any], kwargs: dict[str, Any], is_factory: bool,
              method: bool = False) -> list[Any] | None:
    """The value of each schema argument for a Python call (MISSING where left out), or None if it does not
    bind. `is_factory` says the call is a `torch.*` function, whose binding passes the default device; `method`
    says `args[0]` is the Tensor the method was called on."""
    values = _bind_positional(schema, list(args), method)
    if values is None or not _bind_keywords(schema, kwargs, values):
        return None
    _fill_tensor_options(schema, values, is_factory)
    if any(value is MISSING and not argument.has_default for argument, value in zip(schema.arguments, values)):
        return None
    return values if all(fits(a, v) for a, v in zip(schema.arguments, values) if v is not MISSING) else None


def _bind_positional(schema: FunctionSchema, args: list[Any], method: bool) -> list[Any] | None:
    """Positional values in schema order; trailing integers become the varargs integer list. A method's receiver
    binds to `self` wherever the schema puts it, as PyTorch's argument parser does: `x.where(c, y)` is
    `where.self(Tensor condition, Tensor self, Tensor other)` with self = x."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    order = list(range(len(positional)))
    receiver = schema.argument_index("self") if method else None
    if receiver is not None and receiver in order:
        order.remove(receiver)
        order.insert(0, receiver)
    values: list[Any] = [MISSING] * len(schema.arguments)
    varargs = _varargs_index(positional)
    for index in order:
        if not args:
            break
        if index == varargs and is_int_like(args[0]) and len(args) > 1:
            values[index], args = list(args), []
        else:
            values[index] = args.pop(0)
    return None if args else values


def _varargs_index(positional: list[Argument]) -> int | None:
    """Where `torch.zeros(2, 3)`-style varargs go: the only positional argument besides `self`, if an int list."""
    rest = [i for i, a in enumerate(positional) if a.name != "self"]
    if len(rest) == 1 and is_int_list(positional[rest[0]]):
        return rest[0]
    return None


def _bind_keywords(schema: FunctionSchema, kwargs: dict[str, Any], values: list[Any]) -> bool:
    for name, value in kwargs.items():
        index = schema.argument_index(name)
        if index is None and name == "input":
            index = schema.argument_index("self")
        if index is None:
            if name in _IGNORED_KEYWORDS:
                continue
            return False
        if values[index] is not MISSING:
            return False
        values[index] = value
    return True


def _fill_tensor_options(schema: FunctionSchema, values: list[Any], is_factory: bool) -> None:
    """What the Python bindings pass when the call leaves them out: `pin_memory=False`, and for `torch.*`
    factories (not `*_like`) the default device."""
    for index, argument in enumerate(schema.arguments):
        if values[index] is not MISSING:
            continue
        if argument.name == "pin_memory":
            values[index] = False
        elif argument.name == "device" and is_factory and not schema.name.endswith("_like"):
            values[index] = torch.get_default_device()
        elif argument.name == "dtype" and schema.name == "aten::randint":
            values[index] = torch.long


def with_defaults(schema: FunctionSchema, values: list[Any]) -> list[Any]:
    """The bound values with MISSING replaced by the schema's defaults (to pass them to another schema)."""
    return [a.default_value if v is MISSING else v for a, v in zip(schema.arguments, values)]


# ---- which Python values an argument accepts ------------------------------------------------------------------
def fits(argument: Argument, value: Any) -> bool:
    """Whether the Python argument parser would accept `value` for `argument` (numbers count as tensors: the
    parser wraps them; callers choosing among overloads check that separately)."""
    if is_int_list(argument) and is_int_like(value):
        return True  # a single integer stands for the list: `x.sum(1)`, `max_pool2d(x, 2)`
    return _fits_type(argument.real_type, value)


def _fits_type(type_: T.Type, value: Any) -> bool:
    if isinstance(type_, T.OptionalType):
        return value is None or _fits_type(type_.elem, value)
    if isinstance(type_, T.ListType) and isinstance(type_.elem, T.IntType | T.SymIntType):
        return isinstance(value, list | tuple) and all(is_int_like(v) or _is_size_tensor(v) for v in value)
    if isinstance(type_, T.ListType):
        return isinstance(value, list | tuple) and all(_fits_type(type_.elem, v) for v in value)
    if isinstance(type_, T.TupleType):
        return (isinstance(value, tuple) and len(value) == len(type_.elements)
                and all(_fits_type(t, v) for t, v in zip(type_.elements, value)))
    check = _LEAF_CHECKS.get(type(type_))
    return check(value) if check is not None else True


def is_int_like(value: Any) -> bool:
    """An int, or a 0-dim integer tensor (how the tracer hands out sizes); never a bool, which PyTorch's argument
    parser does not take for an int: `torch.var_mean(x, True)` is the `unbiased` overload, not `dim=[1]`."""
    if isinstance(value, torch.Tensor):
        return value.dim() == 0 and not value.is_floating_point() and not value.is_complex() and (
            value.dtype is not torch.bool)
    return isinstance(value, int) and not isinstance(value, bool)


def _is_size_tensor(value: Any) -> bool:
    """A 0-dim tensor of any dtype: what an int list takes under torch.jit's tracer (PyTorch's parser converts it
    with `item<int64_t>()`), e.g. the sizes `interpolate(recompute_scale_factor=True)` computes as float tensors."""
    return isinstance(value, torch.Tensor) and value.dim() == 0


def sizes_as_numbers(schema: FunctionSchema, values: list[Any], args: Sequence[Any],
                     kwargs: dict[str, Any]) -> tuple[list, dict]:
    """The call `args, kwargs`, bound to `schema` as `values` (bind_call's result), with the 0-dim tensors in its
    int-list arguments as ints, as the binding takes them when no torch.jit tracer is running (the node still
    records them, through aten::Int). The lists are found by identity, so wherever the binding put an argument
    (a method's receiver included), the call keeps its shape."""
    converted = {id(value): _list_as_ints(value) for argument, value in zip(schema.arguments, values)
                 if is_int_list(argument) and isinstance(value, list | tuple)}
    return ([converted.get(id(value), value) for value in args],
            {name: converted.get(id(value), value) for name, value in kwargs.items()})


def _list_as_ints(value: list | tuple) -> list:
    return [int(v.item()) if isinstance(v, torch.Tensor) else v for v in value]


def _is_number_like(value: Any) -> bool:
    return isinstance(value, int | float) or (isinstance(value, torch.Tensor) and value.dim() == 0)


def is_int_list(argument: Argument) -> bool:
    type_ = argument.type.elem if isinstance(argument.type, T.OptionalType) else argument.type
    return isinstance(type_, T.ListType) and isinstance(type_.elem, T.IntType)


_LEAF_CHECKS = {
    T.TensorType: lambda v: isinstance(v, torch.Tensor | int | float | bool | complex),
    T.IntType: is_int_like,
    T.SymIntType: is_int_like,
    T.FloatType: lambda v: _is_number_like(v) and not isinstance(v, bool),
    T.BoolType: lambda v: isinstance(v, bool) or (isinstance(v, torch.Tensor) and v.dtype is torch.bool),
    T.NumberType: lambda v: _is_number_like(v) or isinstance(v, complex),
    T.ComplexType: lambda v: _is_number_like(v) or isinstance(v, complex),
    T.StringType: lambda v: isinstance(v, str),
    T.DeviceType: lambda v: isinstance(v, torch.device | str | int),
    T.ScalarTypeType: lambda v: isinstance(v, torch.dtype),
    T.LayoutType: lambda v: isinstance(v, torch.layout),
    T.MemoryFormatType: lambda v: isinstance(v, torch.memory_format),
    T.GeneratorType: lambda v: isinstance(v, torch.Generator),
    T.NoneType: lambda v: v is None,
}


def numbers_as_tensors(schema: FunctionSchema, values: list[Any]) -> bool:
    """Whether the binding passes a Python number where the schema wants a Tensor (a "wrapped number")."""
    return any(isinstance(argument.type, T.TensorType) and not isinstance(value, torch.Tensor)
               and value is not MISSING for argument, value in zip(schema.arguments, values))
