"""Type annotations in source: the Expr of `x: List[int]`, of `-> Tensor` or of a `# type:` comment, to a Type.

TorchScript's ScriptTypeParser. Names first go through a fixed table (`Tensor`, `int`, `Optional`...), so
`def f(x: List[int]) -> Optional[Tensor]` needs nothing from the resolver; any other name (`torch.device`, a
NamedTuple, an enum, a script class) is asked of the resolver, and an unknown one is an error pointing at it:

    def f(x: Lisst[int]):         Unknown type constructor Lisst
             ~~~~~~~~~~ <--- HERE

`parse_schema_from_def` turns a whole Def into the FunctionSchema of the function (unannotated parameters are
Tensor, an unannotated return is inferred by the emitter), and `BroadcastingList2[int]` parameters become
`int[2]` arguments that also accept a single int, as in `F.max_pool2d(x, kernel_size=2)`. Default values written
in source are read when literal and otherwise run (`state: Tensor=CONSTANTS.c0` in an archive), as TorchScript does.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.errors import CompileError
from tsjit.frontend.parser import parse_expression
from tsjit.frontend.tree_views import (
    Const,
    Decl,
    Def,
    Expr,
    Ident,
    Param,
    Return,
    Select,
    StringLiteral,
    Subscript,
    TupleLiteral,
    UnaryOp,
    Var,
    dotted_name,
)
from tsjit.ir import types as T
from tsjit.ir.scalar_type import dtype_to_code, layout_to_code, memory_format_to_code
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.type_parser import ANNOTATION_BASE_TYPES as BASE_TYPES
from tsjit.source import lexer as lx

# module prefixes that name the same types as the bare names (`typing.List`, `torch.Tensor`)
TYPE_MODULE_PREFIXES = ("typing.", "torch.", "builtins.", "torch.jit.", "tsjit.")
BROADCASTING_LISTS = {f"BroadcastingList{n}": n for n in range(1, 7)}


class ScriptTypeParser:
    """Annotation expressions to Types; `resolver.resolve_type(name, range)` answers the names it does not know."""

    def __init__(self, resolver=None):
        self.resolver = resolver

    # ---- types ---------------------------------------------------------------------------------------------
    def parse_type_from_expr(self, expr: Expr) -> T.Type:
        """The type an annotation expression denotes."""
        if isinstance(expr, Subscript):
            return self._subscript_to_type(expr)
        if isinstance(expr, StringLiteral):
            return self._parse_string_annotation(expr)
        if expr.kind == "|":
            return T.UnionType.create([self.parse_type_from_expr(side) for side in (expr.lhs, expr.rhs)])
        name = base_type_name(expr)
        if name is None:
            raise CompileError(f"Expression of type {lx.kind_to_string(expr.kind)} cannot be used in a type "
                               "expression", expr.range)
        return self._named_type(name, expr)

    def _named_type(self, name: str, expr: Expr) -> T.Type:
        found = BASE_TYPES.get(_strip_type_module(name))
        if found is not None:
            return found
        if self.resolver is not None:
            resolved = self.resolver.resolve_type(name, expr.range)
            if resolved is not None:
                return resolved
        raise CompileError(f"Unknown type name '{name}'", expr.range)

    def _parse_string_annotation(self, literal: StringLiteral) -> T.Type:
        """A forward reference: `x: "List[int]"` is parsed as the expression inside the string."""
        try:
            expr = parse_expression(literal.text)
        except CompileError:
            raise CompileError(f"Unknown type name '{literal.text}'", literal.range) from None
        return self.parse_type_from_expr(expr)

    def _subscript_to_type(self, subscript: Subscript) -> T.Type:
        name = base_type_name(subscript.value)
        if name is None:
            raise CompileError("Subscripted type must be a type identifier", subscript.value.range)
        constructor = _strip_type_module(name)
        arguments = subscript.subscript_exprs
        if constructor in ("Tuple", "tuple"):
            return self._tuple_type(subscript, arguments)
        if constructor in BROADCASTING_LISTS:
            return T.ListType(self._one_argument(constructor, subscript, arguments))
        builders = {
            "List": T.ListType, "list": T.ListType, "Optional": T.OptionalType, "Future": T.FutureType,
            "RRef": T.RRefType, "Await": T.AwaitType, "Final": lambda t: t,
        }
        if constructor in builders:
            return builders[constructor](self._one_argument(constructor, subscript, arguments))
        if constructor in ("Dict", "dict"):
            return self._dict_type(subscript, arguments)
        if constructor == "Union":
            return T.UnionType.create([self.parse_type_from_expr(e) for e in _flatten_tuple(arguments)])
        raise CompileError(f"Unknown type constructor {name}", subscript.range)

    def _one_argument(self, constructor: str, subscript: Subscript, arguments: list[Expr]) -> T.Type:
        if len(arguments) != 1:
            raise CompileError(f"{constructor} expected exactly one element type but found {len(arguments)}",
                               subscript.range)
        return self.parse_type_from_expr(arguments[0])

    def _tuple_type(self, subscript: Subscript, arguments: list[Expr]) -> T.Type:
        # `Tuple[()]` is the empty tuple
        if len(arguments) == 1 and isinstance(arguments[0], TupleLiteral) and not arguments[0].inputs:
            return T.TupleType(())
        return T.TupleType(tuple(self.parse_type_from_expr(e) for e in _flatten_tuple(arguments)))

    def _dict_type(self, subscript: Subscript, arguments: list[Expr]) -> T.Type:
        arguments = _flatten_tuple(arguments)
        if len(arguments) != 2:
            raise CompileError(f"Dict expected 2 element types but found {len(arguments)}", subscript.range)
        key, value = (self.parse_type_from_expr(e) for e in arguments)
        return T.DictType(key, value)

    def broadcast_size(self, expr: Expr | None) -> int | None:
        """N for a `BroadcastingListN[T]` annotation, also inside `Optional[...]` (F.max_pool2d's `stride`): the
        argument accepts a single T as well; else None."""
        if not isinstance(expr, Subscript):
            return None
        name = base_type_name(expr.value)
        constructor = _strip_type_module(name) if name else None
        if constructor == "Optional" and len(expr.subscript_exprs) == 1:
            return self.broadcast_size(expr.subscript_exprs[0])
        return BROADCASTING_LISTS.get(constructor) if constructor else None

    # ---- signatures ----------------------------------------------------------------------------------------
    def parse_schema_from_def(self, definition: Def, skip_self: bool = False,
                              defaults: dict[str, Any] | None = None) -> FunctionSchema:
        """The schema of a definition; `defaults` gives evaluated default values (Python functions), else the
        defaults written in the source are evaluated."""
        params = definition.decl.params[1 if skip_self else 0:]
        if defaults is None:
            defaults = self.evaluate_defaults(definition, params)
        arguments = [self._argument(param, defaults) for param in params]
        returns = []
        return_annotation = definition.decl.return_type
        if return_annotation is not None:
            returns.append(Argument("", self.parse_type_from_expr(return_annotation)))
        return FunctionSchema(definition.name.name, "", arguments, returns)

    def evaluate_defaults(self, definition: Def, params: list[Param]) -> dict[str, Any]:
        """The values of the defaults written in source, by parameter name (C++ evaluateDefaults).

        Literals are read directly. Any other expression (`CONSTANTS.c0` in an archive, `torch.zeros(2)`) is
        evaluated as TorchScript does: compiled against this parser's resolver into

            def defaults() -> Tuple[<declared types>]:
                return (<default expressions>,)

        and run once, so a Tensor default is the tensor the expression makes.
        """
        values: dict[str, Any] = {}
        computed: list[Param] = []
        for param in params:
            if param.default_value is None:
                continue
            if param.type is None:
                # a default written in source is evaluated as the declared type, which must be given
                raise CompileError("Keyword arguments with defaults need to be type-hinted (TorchScript C++ "
                                   "frontend)", param.range)
            literal = literal_default(param.default_value)
            if literal is _NO_DEFAULT:
                computed.append(param)
            else:
                values[param.ident.name] = literal
        if computed:
            values.update(zip((p.ident.name for p in computed), self._run_defaults(definition, computed)))
        return values

    def _run_defaults(self, definition: Def, params: list[Param]) -> tuple:
        from tsjit.frontend.ir_emitter import GraphFunction  # breaks a real cycle: ir_emitter imports this module

        if self.resolver is None:
            raise CompileError("Default values must be constants", params[0].default_value.range)
        loc = definition.range
        tuple_type = Subscript.create(loc, Var.create(loc, Ident.create(loc, "Tuple")), [p.type for p in params])
        body = Return.create(loc, TupleLiteral.create(loc, [p.default_value for p in params]))
        function = Def.create(loc, Ident.create(loc, "defaults"), Decl.create(loc, [], tuple_type), [body])
        return GraphFunction("defaults", function, self.resolver)()

    def _argument(self, param: Param, defaults: dict[str, Any]) -> Argument:
        name = param.ident.name
        type_ = self.parse_type_from_expr(param.type) if param.type is not None else T.TensorType.get()
        default = defaults.get(name, _NO_DEFAULT)
        kwargs: dict[str, Any] = {"N": self.broadcast_size(param.type), "kwarg_only": param.kwarg_only}
        if default is not _NO_DEFAULT:
            kwargs["default_value"] = coerce_default(default, type_)
        return Argument(name, type_, **kwargs)


_NO_DEFAULT = object()
_ENUM_CODES = {torch.dtype: dtype_to_code, torch.layout: layout_to_code, torch.memory_format: memory_format_to_code}


def coerce_default(value: Any, type_: T.Type) -> Any:
    """A default value as the parameter's type holds it: `norm_type: float = 2` is 2.0, tuples for lists
    are lists, `torch.strided` is its int code (TorchScript converts Python defaults to the declared type)."""
    if isinstance(type_, T.OptionalType):
        return value if value is None else coerce_default(value, type_.elem)
    if isinstance(type_, T.IntType) and type(value) in _ENUM_CODES:
        # `layout: torch.layout = torch.strided`: TorchScript's dtypes, layouts and memory formats are ints
        return _ENUM_CODES[type(value)](value)
    if isinstance(type_, T.FloatType) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(type_, T.ComplexType) and isinstance(value, int | float) and not isinstance(value, bool):
        return complex(value)
    if isinstance(type_, T.ListType) and isinstance(value, list | tuple):
        return [coerce_default(v, type_.elem) for v in value]
    if isinstance(type_, T.TupleType) and isinstance(value, tuple) and len(value) == len(type_.elements):
        return tuple(coerce_default(v, t) for v, t in zip(value, type_.elements))
    return value


def base_type_name(expr: Expr) -> str | None:
    """The name a type expression spells: `Tensor`, `torch.Tensor`, `typing.List`, `None`; None if not a name."""
    if expr.kind == lx.TK_NONE:
        return "None"
    if isinstance(expr, Var | Select):
        return dotted_name(expr)
    return None


def _strip_type_module(name: str) -> str:
    for prefix in TYPE_MODULE_PREFIXES:
        if name.startswith(prefix) and "." not in name[len(prefix):]:
            return name[len(prefix):]
    return name


def _flatten_tuple(arguments: list[Expr]) -> list[Expr]:
    """`Dict[str, int]` may reach us as one TupleLiteral subscript or as two subscripts."""
    if len(arguments) == 1 and isinstance(arguments[0], TupleLiteral):
        return list(arguments[0].inputs)
    return list(arguments)


def evaluate_default(expr: Expr) -> Any:
    """The value of a literal written in source: a number, string, bool, None, or a tuple or list of them."""
    value = literal_default(expr)
    if value is _NO_DEFAULT:
        raise CompileError("Default values must be constants", expr.range)
    return value


def literal_default(expr: Expr) -> Any:
    """The value of a literal (a number, string, bool, None, or a tuple or list of them); _NO_DEFAULT if `expr`
    is anything else."""
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, StringLiteral):
        return expr.text
    literal = {lx.TK_TRUE: True, lx.TK_FALSE: False, lx.TK_NONE: None}
    if expr.kind in literal:
        return literal[expr.kind]
    if isinstance(expr, UnaryOp) and expr.kind == lx.TK_UNARY_MINUS:
        operand = literal_default(expr.operand)
        return _NO_DEFAULT if operand is _NO_DEFAULT else -operand
    if expr.kind in (lx.TK_TUPLE_LITERAL, lx.TK_LIST_LITERAL):
        elements = [literal_default(e) for e in expr.inputs]
        if any(element is _NO_DEFAULT for element in elements):
            return _NO_DEFAULT
        return tuple(elements) if expr.kind == lx.TK_TUPLE_LITERAL else elements
    return _NO_DEFAULT
