"""Operators named through `torch.ops`: namespaces, overload packets and exact overloads.

TorchScript treats `torch.ops.<ns>.<op>` as the builtin `<ns>::<op>` (jit-overview.md "Builtin Operators"); tsjit
also accepts an exact overload, which torch.jit rejects:

    torch.ops                   OperatorNamespaces
    torch.ops.aten              OperatorNamespace("aten")
    torch.ops.aten.add          OperatorPacket(aten::add)       the overload chosen by matching, as `torch.add`
    torch.ops.aten.add.Scalar   OperatorOverload(aten::add.Scalar)   exactly that overload
    torch.ops.aten.add.default  OperatorOverload(aten::add)          the empty overload

An exact overload skips matching among overloads but keeps the implicit conversions of its one schema; its node
is pinned to the overload when the input types would pick another (tsjit.ops.matching.pin_overload). The same
values serve every spelling: attribute chains in scripted source, `torch._ops` objects reached through Python
globals and closures (`aten = torch.ops.aten`, `add = torch.ops.aten.add.Tensor`), source compiled without
Python, and archives (`ops.aten.clamp.Tensor(...)`, see serialization/python_printer.py). Operators are looked up
in tsjit's registry, so ops defined with `torch.library` and ops registered with `tsjit.register_operator` (which
`torch.ops` does not know) are found alike.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.errors import CompileError, SchemaError
from tsjit.frontend.sugared_value import BuiltinFunction, SimpleValue, SugaredValue, insert_matched_call
from tsjit.ir.symbols import Symbol
from tsjit.ops.matching import match_schema, unknown_operator_message
from tsjit.ops.registry import DEFAULT_OVERLOAD, Operator, find_operator, get_operators


class OperatorNamespaces(SugaredValue):
    """`torch.ops`: its attributes are operator namespaces."""

    def kind(self) -> str:
        return "operator namespaces"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        return OperatorNamespace(field)


class OperatorNamespace(SugaredValue):
    """`torch.ops.<ns>`: its attributes are the operators of namespace `ns`."""

    def __init__(self, namespace: str):
        self.namespace = namespace

    def kind(self) -> str:
        return f"operator namespace '{self.namespace}'"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        # breaks a real cycle: builtin_functions -> resolver -> operator_values
        from tsjit.frontend.builtin_functions import builtin_functions_for

        symbol = Symbol.create(self.namespace, field)
        if not get_operators(symbol) and not builtin_functions_for(symbol):
            raise CompileError(f"object has no attribute {field}\n{unknown_operator_message(symbol)}", loc)
        return OperatorPacket(symbol)


class OperatorPacket(BuiltinFunction):
    """`torch.ops.<ns>.<op>`: called, the builtin (overload chosen by matching); `.overload`, one overload."""

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        return overload_value(self.symbol, field, loc)


class OperatorOverload(SugaredValue):
    """`torch.ops.<ns>.<op>.<overload>`: a call of exactly this operator's schema."""

    def __init__(self, operator: Operator):
        self.operator = operator

    def kind(self) -> str:
        return "builtin overload"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        schema, graph = self.operator.schema, emitter.graph
        try:
            matched = match_schema(schema, graph, list(args), dict(kwargs))
        except SchemaError as error:
            raise CompileError(str(error).rstrip("\n") + "\n\nThe original call is", loc) from None
        return SimpleValue(insert_matched_call(graph, loc, Symbol(schema.name), matched, exact=schema))


def overload_value(symbol: Symbol, overload: str, loc) -> OperatorOverload:
    """The overload named `overload` of operator `symbol` (`default`: the empty overload name)."""
    name = "" if overload == DEFAULT_OVERLOAD else overload
    found = find_operator(f"{symbol}.{name}" if name else str(symbol))
    if found is None:
        known = "".join(f"  {op.schema}\n" for op in get_operators(symbol))
        raise CompileError(f"Unknown overload '{overload}' of builtin op {symbol}. Its overloads are:\n{known}", loc)
    return OperatorOverload(found)


def operator_value(obj: Any, emitter, loc) -> SugaredValue | None:
    """The SugaredValue of a `torch.ops` object (`torch.ops`, a namespace, a packet, an OpOverload), else None."""
    if isinstance(obj, torch._ops._Ops):
        return OperatorNamespaces()
    if isinstance(obj, torch._ops._OpNamespace):
        return OperatorNamespace(obj.name)
    if isinstance(obj, torch._ops.OpOverloadPacket):
        return OperatorPacket(Symbol(obj._qualified_op_name))
    if isinstance(obj, torch._ops.OpOverload):
        return overload_value(Symbol(obj._schema.name), obj._overloadname, loc)
    return None


def operator_object_name(obj: Any) -> str | None:
    """The name a module attribute holding a `torch.ops` object keeps: `aten::relu` for a packet,
    `aten::add.Scalar` (`aten::add.default`) for an OpOverload; None for other objects."""
    if isinstance(obj, torch._ops.OpOverloadPacket):
        return obj._qualified_op_name
    if isinstance(obj, torch._ops.OpOverload):
        return f"{obj._schema.name}.{obj._overloadname}"
    return None


def operator_name_value(name: str, loc) -> SugaredValue:
    """The builtin `aten::relu`, or the exact overload `aten::add.Scalar`, by the names above."""
    operator, dot, overload = name.partition(".")
    return overload_value(Symbol(operator), overload, loc) if dot else BuiltinFunction(Symbol(name))
