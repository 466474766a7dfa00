"""Overload matching: which schema of an operator fits a call, and the implicit conversions that make it fit.

This is the one home of TorchScript's schema matching (torch/csrc/jit/frontend/schema_matching.cpp and
`Node::matches`). It answers two questions:

- At a call site (`insert_operator_call`, `match_schemas`): given arguments (graph Values or plain Python
  values) and keyword arguments, pick the first schema that accepts them, inserting the constants, lists
  and conversions the call needs. Like TorchScript, every candidate is tried without implicit conversions
  before any is tried with them, so `x + 1` picks `aten::add.Scalar` rather than converting for an
  earlier overload. A failed attempt removes whatever it inserted.
- For a node that already exists (`find_schema_for_node`): graph text carries no overload names, so a
  node's schema is the first of its kind whose argument types accept the node's input types (seed: "Node
  overloading"; interop-facts B1).

Implicit conversions, tried only in the second pass:

    %i : int = aten::IntImplicit(%t)         Tensor -> int (also Float-, Complex- and ScalarImplicit)
    %f : float = aten::Float(%n)             Scalar -> float (Int, Complex); bool -> float, int, Scalar
    %d : Device = aten::device(%s)           str -> Device
    %l : int[] = prim::ListConstruct(%a, %b) torch.zeros(a, b): trailing positional arguments as `int[] size`

and in both passes: `int[2]` from one int (`max_pool2d(x, 2)`), homogeneous tuples as lists, T for `T?`,
`[]` for any list type. An int, float or bool never becomes a Tensor implicitly (that is prim::NumToTensor).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from tsjit.errors import SchemaError
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ir.types import (
    AwaitType,
    BoolType,
    ClassType,
    ComplexType,
    DeviceType,
    DictType,
    FloatType,
    FutureType,
    InterfaceType,
    IntType,
    ListType,
    NoneType,
    NumberType,
    OptionalType,
    RRefType,
    StringType,
    TensorType,
    TupleType,
    Type,
    VarType,
    unify_type_list,
    unify_types,
)
from tsjit.ops.registry import Operator, OperatorSchemas, get_operators

TypeEnv = dict[str, Type]  # type variable name (`t`, `t1`) -> the type it is bound to in one call

# Overloads TorchScript never picks: nothing tells `x.view(torch.int8)` (a ScalarType is an int) from
# `x.view(1)`, and `max(a, b)` would collide with the unary out= variant. An exact-overload call
# (`torch.ops.aten.view.dtype(x, torch.int8)`) still reaches them: its node is pinned to the overload.
_BLOCKLISTED_SCHEMAS = frozenset({"aten::view.dtype", "aten::max.unary_out", "aten::min.unary_out"})


@dataclass
class MatchedSchema:
    """The outcome of matching a call against one schema: the node's inputs and its output types."""

    inputs: list[Value]
    return_types: list[Type]
    return_field_names: list[str] | None
    schema_name: str  # "aten::add.Tensor", or "aten::add" for the empty overload


# ---- call sites --------------------------------------------------------------------------------------------
def insert_operator_call(graph: Graph, op: Symbol | str, args: Sequence[Any] = (),
                         kwargs: Mapping[str, Any] | None = None, *, self: Any = None, source_range=None):
    """Insert a call of operator `op` at the graph's insertion point, choosing its overload by the arguments
    (what `Graph.insert` does). Registered operators only: the script frontend's emit_builtin_call
    (frontend/sugared_value.py, TorchScript's emitBuiltinCall) also offers the builtins written in TorchScript.

    Returns the output Value, a tuple of Values for several outputs, or `()` for none.
    """
    kind = Symbol(op)
    operators = get_operators(kind)
    if not operators:
        raise SchemaError(unknown_operator_message(kind) + _call_site(source_range))
    _, matched = match_schemas(OperatorSchemas(operators), graph, args, kwargs, self=self, source_range=source_range)
    node = insert_matched_node(graph, kind, matched, source_range)
    return node.outputs[0] if len(node.outputs) == 1 else node.outputs


def insert_matched_node(graph: Graph, kind: Symbol, matched: MatchedSchema, source_range=None) -> Node:
    """The node calling `kind` with a matched call's inputs, typed by its return types, at the insertion point."""
    node = graph.insert_node(graph.create(kind, matched.inputs, 0))
    node.source_range = source_range
    for return_type in matched.return_types:
        node.add_output(return_type)
    return node


def match_schemas(schemas: Sequence[FunctionSchema], graph: Graph, args: Sequence[Any] = (),
                  kwargs: Mapping[str, Any] | None = None, *, self: Any = None,
                  source_range=None) -> tuple[int, MatchedSchema]:
    """The index of the first schema accepting the call, and the match. SchemaError lists why each failed."""
    if not schemas:
        raise SchemaError("no schemas to match the call against" + _call_site(source_range))
    if len(schemas) == 1:
        return 0, match_schema(schemas[0], graph, args, kwargs, self=self, source_range=source_range)
    for allow_conversions in (False, True):
        found = _first_match(_candidates(schemas), graph, args, kwargs, self, allow_conversions)
        if found is not None:
            return found
    failures: list[str] = []
    for _, schema in _candidates(schemas):
        _try_match_schema(schema, graph, args, kwargs, self, True, failures)
    raise SchemaError("Arguments for call are not valid.\nThe following variants are available:\n"
                      + _indent("".join(failures), "  ") + _call_site(source_range))


def match_schemas_without_conversions(schemas: Sequence[FunctionSchema], graph: Graph, args: Sequence[Any] = (),
                                      kwargs: Mapping[str, Any] | None = None, *, self: Any = None
                                      ) -> tuple[int, MatchedSchema] | None:
    """match_schemas' first round: the first schema accepting the call as it is, or None. A schema that comes
    later in a list matched by match_schemas cannot win over the one this finds."""
    return _first_match(_candidates(schemas), graph, args, kwargs, self, False)


def _candidates(schemas: Sequence[FunctionSchema]) -> Iterator[tuple[int, FunctionSchema]]:
    """The schemas overload matching may pick, with their positions (blocklisted ones are reachable only as
    exact overloads), read one by one: a lazily parsed sequence (OperatorSchemas) is parsed up to the match."""
    for index in range(len(schemas)):
        schema = schemas[index]
        if schema.operator_name not in _BLOCKLISTED_SCHEMAS:
            yield index, schema


def _first_match(candidates: Iterator[tuple[int, FunctionSchema]], graph: Graph, args, kwargs, self_arg,
                 allow_conversions: bool) -> tuple[int, MatchedSchema] | None:
    call_types = None if allow_conversions else _call_types(args, kwargs, self_arg)
    for index, schema in candidates:
        if call_types is None:
            matched = _try_match_schema(schema, graph, args, kwargs, self_arg, allow_conversions, None)
        else:
            matched = _match_by_plan(schema, call_types, graph, args, kwargs, self_arg)
        if matched is not None:
            return index, matched
    return None


# ---- plans: a match without conversions, remembered by the schema and the types of the call -----------------
# Without conversions, whether a schema accepts a call of Values, and what the match is, depend only on the
# schema and the call's types (positional, keyword by name, self): each argument is one of the call's Values or
# its default as a new constant, and the return types are the schema's, evaluated for those types. A frontend
# emits the same call many times (`torch.sin(x)` per statement), so the first match of a schema for those types
# is kept as a plan, which later calls apply without matching. Calls with Python values, vararg schemas and
# matches that insert other nodes are matched every time. Keyed by the schema object (a registration adds
# schemas and changes none), at most _PLANS_SIZE entries (then cleared, as _operators_for_nodes).
_PLANS_SIZE = 4096
_plans: dict[tuple, tuple[FunctionSchema, _Plan | None]] = {}


@dataclass
class _Plan:
    """Where each input of a matched call comes from, in the schema's argument order: ("arg", index),
    ("kwarg", name), ("self",) or ("default", _Default); and the match's return types and names."""

    sources: list[tuple]
    return_types: list[Type]
    return_field_names: list[str] | None
    schema_name: str

    def apply(self, graph: Graph, args, kwargs, self_arg) -> MatchedSchema:
        inputs = []
        for source in self.sources:
            where = source[0]
            if where == "arg":
                inputs.append(args[source[1]])
            elif where == "kwarg":
                inputs.append(kwargs[source[1]])
            elif where == "self":
                inputs.append(self_arg)
            else:
                inputs.append(source[1].insert(graph))
        names = self.return_field_names
        return MatchedSchema(inputs, list(self.return_types), list(names) if names else None, self.schema_name)


def _call_types(args, kwargs, self_arg) -> tuple | None:
    """What a match without conversions depends on besides the schema, when every actual is a Value (and its
    types can be hashed); else None."""
    if not all(type(actual) is Value for actual in args):
        return None
    if kwargs and not all(type(actual) is Value for actual in kwargs.values()):
        return None
    if self_arg is not None and type(self_arg) is not Value:
        return None
    key = (tuple(actual.type for actual in args),
           tuple((name, actual.type) for name, actual in kwargs.items()) if kwargs else (),
           None if self_arg is None else self_arg.type)
    try:
        hash(key)
    except TypeError:  # a type holding something unhashable
        return None
    return key


def _match_by_plan(schema: FunctionSchema, call_types: tuple, graph: Graph, args, kwargs,
                   self_arg) -> MatchedSchema | None:
    """_try_match_schema without conversions, through the plan of the schema for the call's types."""
    key = (id(schema), call_types)
    known = _plans.get(key)
    if known is not None and known[0] is schema:
        plan = known[1]
        return plan.apply(graph, args, kwargs, self_arg) if plan is not None else None
    anchor = graph.insert_point
    mark = anchor.prev
    sources: list[tuple] = []
    matched = _try_match_schema(schema, graph, args, kwargs, self_arg, False, None, sources)
    if matched is None:
        plan = None
    else:
        plan = _plan_of(matched, sources, _inserted_since(mark, anchor), args, kwargs, self_arg)
        if plan is None:
            return matched  # not a plain match: matched again next time
    if len(_plans) >= _PLANS_SIZE:
        _plans.clear()
    _plans[key] = (schema, plan)
    return matched


def _inserted_since(mark: Node | None, anchor: Node) -> int:
    """How many nodes there are between `mark` and `anchor` (the nodes an attempt inserted)."""
    count, node = 0, anchor.prev
    while node is not mark and node is not None:
        count, node = count + 1, node.prev
    return count


def _plan_of(matched: MatchedSchema, sources: list[tuple], inserted: int, args, kwargs, self_arg) -> _Plan | None:
    """The plan of a match whose inputs are the call's own Values and new default constants, else None."""
    if len(sources) != len(matched.inputs):
        return None  # a vararg schema took the remaining arguments, or varargs became a list
    defaults = 0
    for source, value in zip(sources, matched.inputs):
        where = source[0]
        if where == "default":
            defaults += 1
            if value.node.kind is not prim.Constant:
                return None
        elif value is not (args[source[1]] if where == "arg" else kwargs[source[1]] if where == "kwarg"
                           else self_arg):
            return None  # converted
    if inserted != defaults:
        return None
    names = matched.return_field_names
    return _Plan(sources, list(matched.return_types), list(names) if names else None, matched.schema_name)


def match_schema(schema: FunctionSchema, graph: Graph, args: Sequence[Any] = (),
                 kwargs: Mapping[str, Any] | None = None, *, self: Any = None,
                 allow_conversions: bool = True, source_range=None) -> MatchedSchema:
    """Match a call against one schema, inserting what the call needs; a SchemaError says why it fails."""
    failures: list[str] = []
    matched = _try_match_schema(schema, graph, args, kwargs, self, allow_conversions, failures)
    if matched is None:
        raise SchemaError("".join(failures).lstrip("\n") + _call_site(source_range))
    return matched


def _try_match_schema(schema: FunctionSchema, graph: Graph, args, kwargs, self_arg, allow_conversions: bool,
                      failures: list[str] | None, sources: list[tuple] | None = None) -> MatchedSchema | None:
    """One attempt. When it fails, the nodes it inserted are removed: failed overloads leave no trace.
    `sources`, when given, receives where each input came from (see _Plan)."""
    anchor = graph.insert_point
    mark = anchor.prev
    matched = None
    try:
        attempt = _Attempt(schema, graph, allow_conversions, failures, sources)
        matched = attempt.match(list(args), dict(kwargs or {}), self_arg)
        return matched
    finally:
        if matched is None:
            while anchor.prev is not mark:
                anchor.prev.destroy()


class _Attempt:
    """The state of matching one call against one schema (TorchScript's tryMatchSchema and its helpers)."""

    def __init__(self, schema: FunctionSchema, graph: Graph, allow_conversions: bool,
                 failures: list[str] | None, sources: list[tuple] | None = None):
        self.schema = schema
        self.sources = sources
        self.graph = graph
        self.allow_conversions = allow_conversions
        self.failures = failures
        self.type_env: TypeEnv = {}
        self._values: dict[int, tuple[Any, Value]] = {}  # id(python value) -> (value, its Value)
        self._empty_list_literals: set[Value] = set()

    def fail(self, message: str) -> None:
        """Record why the schema does not fit, when errors are being rendered."""
        if self.failures is not None:
            self.failures.append(f"\n{self.schema}:\n{message}")

    # -- the whole call --
    def match(self, args: list[Any], kwargs: dict[str, Any], self_arg: Any) -> MatchedSchema | None:
        inputs = self.match_arguments(args, kwargs, self_arg)
        if inputs is None:
            return None
        return_types = [eval_type_variables(r.type, self.type_env) for r in self.schema.returns]
        if None in return_types:
            self.fail("The arguments leave type variables of the return types unbound.\n")
            return None
        names = [r.name for r in self.schema.returns]
        return MatchedSchema(inputs, return_types, names if all(names) else None, self.schema.operator_name)

    def match_arguments(self, args: list[Any], kwargs: dict[str, Any], self_arg: Any) -> list[Value] | None:
        """The node inputs for the schema's arguments, in order; None when an argument does not fit."""
        inputs: list[Value] = []
        used_args, used_kwargs = 0, set()
        sources = self.sources
        for index, argument in enumerate(self.schema.arguments):
            if argument.name == "self" and self_arg is not None:
                value, self_arg = self.match_argument(argument, self_arg), None
                source: tuple | None = ("self",)
            elif not argument.kwarg_only and used_args < len(args):
                if self.varargs_apply(index, argument, args[used_args]):
                    value, used_args = self.create_list_from_varargs(argument, args[used_args:]), len(args)
                    source = None
                else:
                    value, used_args = self.match_argument(argument, args[used_args]), used_args + 1
                    source = ("arg", used_args - 1)
            elif (keyword := _find_keyword(argument.name, kwargs, self.schema)) is not None:
                value = self.match_argument(argument, kwargs[keyword])
                used_kwargs.add(keyword)
                source = ("kwarg", keyword)
            elif argument.has_default:
                default = _Default(argument)
                value = self.match_argument(argument, default)
                source = ("default", default)
            else:
                self.fail(f"Argument {argument.name} not provided.\n")
                return None
            if value is None:
                return None
            inputs.append(value)
            if sources is not None and source is not None:
                sources.append(source)
        unused_kwargs = [keyword for keyword in kwargs if keyword not in used_kwargs]
        return self.check_leftovers(inputs, args, used_args, unused_kwargs, self_arg)

    def check_leftovers(self, inputs: list[Value], args: list[Any], used_args: int, unused_kwargs: list[str],
                        self_arg: Any) -> list[Value] | None:
        """Fail on arguments no schema argument took; a vararg schema takes the remaining positional ones."""
        if self_arg is not None:
            self.fail("Provided self argument not used in schema.\n")
            return None
        if self.schema.is_vararg:
            inputs.extend(self.as_value(actual) for actual in args[used_args:])
        elif used_args < len(args):
            self.fail(f"Expected at most {used_args} arguments but found {len(args)} positional "
                      f"arguments.\n")
            return None
        if unused_kwargs:
            keyword = unused_kwargs[0]
            known = self.schema.argument_index(keyword) is not None
            self.fail(f"Keyword argument {keyword} {'specified twice' if known else 'unknown'}.\n")
            return None
        return inputs

    # -- one argument (TorchScript's tryMatchArgument) --
    def match_argument(self, argument: Argument, actual: Any) -> Value | None:
        """`actual` as a Value of the argument's type (binding type variables), or None when it cannot be."""
        value = self.as_value(actual)
        if _is_int_or_float_used_as_list(value, argument):
            value = self.create_list(value.type, [value] * argument.N)
        reason = match_type_variables(argument.type, value.type, self.type_env)
        if reason is not None:
            self.fail(f"Could not match type {_spell(value.type)} to {_spell(argument.type)} in "
                      f"argument '{argument.name}': {reason}.\n")
            return None
        concrete = eval_type_variables(argument.type, self.type_env)
        if concrete is None:
            self.fail(f"Type variables in type {_spell(argument.type)} could not be inferred from "
                      f"actual type {_spell(value.type)}")
            return None
        value = self.convert(concrete, value)
        if not value.type.is_subtype_of(concrete):
            self.fail(_type_mismatch_message(argument, value.type))
            return None
        return value

    def varargs_apply(self, index: int, argument: Argument, first: Any) -> bool:
        """Whether the trailing positional arguments form this list argument, as in `torch.zeros(2, 3)`."""
        if not (self.allow_conversions and _varargs_can_be_used_as_list(self.schema, index, argument)):
            return False
        first_type = self.as_value(first).type
        return not isinstance(first_type, ListType) and not _convertible_to_list(first_type, argument.type)

    def create_list_from_varargs(self, argument: Argument, actuals: list[Any]) -> Value | None:
        element_argument = Argument("<varargs>", argument.type.elem)
        elements = [self.match_argument(element_argument, actual) for actual in actuals]
        if None in elements:
            return None
        return self.create_list(argument.type.elem, elements)

    # -- implicit conversions (TorchScript's tryConvertToType) --
    def convert(self, concrete: Type, value: Value) -> Value:
        """`value` converted towards `concrete` where TorchScript allows; the caller checks the result."""
        if isinstance(concrete, OptionalType) and not _is_optional_or_none(value.type):
            return self.convert(concrete.elem, value)
        if value in self._empty_list_literals and isinstance(concrete, ListType):
            value.set_type(concrete)  # `[]` takes whatever list type the argument wants
        if isinstance(value.type, TupleType):
            value = self.convert_tuple(concrete, value)
        if self.allow_conversions:
            value = self.convert_implicitly(concrete, value)
        return value

    def convert_tuple(self, concrete: Type, value: Value) -> Value:
        """Homogeneous tuples become lists; tuples convert element by element to tuple types."""
        list_type = _unwrap_optional(concrete)
        if _convertible_to_list(value.type, list_type):
            return self.create_list(list_type.elem, self.unpack_tuple(value))
        elements = value.type.elements
        if (isinstance(concrete, TupleType) and not value.type.is_subtype_of(concrete)
                and len(concrete.elements) == len(elements)):
            parts = zip(concrete.elements, self.unpack_tuple(value))
            return self.create_tuple([self.convert(part_type, part) for part_type, part in parts])
        return value

    def convert_implicitly(self, concrete: Type, value: Value) -> Value:
        conversion = _IMPLICIT_CONVERSIONS.get((_conversion_source(value.type), concrete))
        if conversion is not None:
            value = insert_operator_call(self.graph, conversion, [value])
        if value.type.is_subtype_of(StringType.get()) and concrete.is_subtype_of(DeviceType.get()):
            value = insert_operator_call(self.graph, aten.device, [value])
        return value

    # -- building values --
    def as_value(self, actual: Any) -> Value:
        """A graph Value for an argument: Values pass through, Python values become constants or literals.

        Each Python object is materialized once per attempt, so `torch.zeros(2, 2)` reads one constant twice.
        """
        if isinstance(actual, Value):
            return actual
        known = self._values.get(id(actual))
        if known is None:
            known = (actual, self.materialize(actual))
            self._values[id(actual)] = known  # holding `actual` keeps its id from being reused
        return known[1]

    def materialize(self, actual: Any) -> Value:
        if isinstance(actual, _Default):
            return actual.insert(self.graph)
        if isinstance(actual, tuple):
            return self.create_tuple([self.as_value(element) for element in actual])
        if isinstance(actual, list) and not actual:
            literal = self.create_list(TensorType.get(), [])  # retyped by `convert`, like TorchScript's `[]`
            self._empty_list_literals.add(literal)
            return literal
        if isinstance(actual, list) and any(isinstance(element, Value) for element in actual):
            elements = [self.as_value(element) for element in actual]
            element_type = unify_type_list([e.type for e in elements], default_to_union=True)
            return self.create_list(element_type, elements)
        return self.graph.insert_constant(actual)

    def create_list(self, element_type: Type, elements: list[Value]) -> Value:
        return self.insert(prim.ListConstruct, elements, ListType(element_type))

    def create_tuple(self, elements: list[Value]) -> Value:
        return self.insert(prim.TupleConstruct, elements, TupleType(tuple(e.type for e in elements)))

    def unpack_tuple(self, value: Value) -> list[Value]:
        """A tuple's elements: a TupleConstruct's inputs, else the outputs of a new prim::TupleUnpack."""
        if value.node.kind is prim.TupleConstruct:
            return list(value.node.inputs)
        node = self.graph.insert_node(self.graph.create(prim.TupleUnpack, [value], 0))
        return [node.add_output(element_type) for element_type in value.type.elements]

    def insert(self, kind: Symbol, inputs: list[Value], output_type: Type) -> Value:
        node = self.graph.insert_node(self.graph.create(kind, inputs))
        return node.output().set_type(output_type)


class _Default:
    """An argument's default value, inserted as a constant of the argument's type."""

    def __init__(self, argument: Argument):
        self.value = argument.default_value
        # an empty list says nothing about its element type; `int[2] stride=[]` is an int[] constant
        empty_list = isinstance(self.value, list) and not self.value
        self.type = _unwrap_optional(argument.type) if empty_list else None

    def insert(self, graph: Graph) -> Value:
        return graph.insert_constant(self.value, self.type)


# ---- rules as data -----------------------------------------------------------------------------------------
def _conversion_source(value_type: Type) -> str | None:
    """The row of _IMPLICIT_CONVERSIONS a value's type uses."""
    if value_type.is_subtype_of(TensorType.get()):
        return "Tensor"
    if value_type == NumberType.get():
        return "Scalar"
    if value_type == BoolType.get():
        return "bool"
    return None


# (source, target type) -> the conversion op TorchScript inserts when conversions are allowed.
_IMPLICIT_CONVERSIONS: dict[tuple[str, Type], Symbol] = {
    ("Tensor", FloatType.get()): aten.FloatImplicit,
    ("Tensor", ComplexType.get()): aten.ComplexImplicit,
    ("Tensor", IntType.get()): aten.IntImplicit,
    ("Tensor", NumberType.get()): aten.ScalarImplicit,
    ("Scalar", FloatType.get()): aten.Float,
    ("Scalar", ComplexType.get()): aten.Complex,
    ("Scalar", IntType.get()): aten.Int,
    ("bool", FloatType.get()): aten.Float,
    ("bool", IntType.get()): aten.Int,
    ("bool", NumberType.get()): aten.Int,
}


def _is_int_or_float_used_as_list(value: Value, argument: Argument) -> bool:
    """A single int or float for a fixed-size `int[N]`/`float[N]` argument, to be repeated N times."""
    if value.type != IntType.get() and value.type != FloatType.get():
        return False
    list_type = _unwrap_optional(argument.type)
    return isinstance(list_type, ListType) and list_type.elem == value.type and bool(argument.N)


def _varargs_can_be_used_as_list(schema: FunctionSchema, index: int, argument: Argument) -> bool:
    """The last positional argument, a list that is neither fixed-size (`int[2]`) nor of a type variable."""
    arguments = schema.arguments
    is_last_positional = index + 1 == len(arguments) or arguments[index + 1].kwarg_only
    if not (is_last_positional and isinstance(argument.type, ListType)):
        return False
    return not argument.N and not isinstance(argument.type.elem, VarType)


def _convertible_to_list(actual: Type, list_type: Type) -> bool:
    """Whether `actual` is such a list already, or a tuple whose elements all fit the list's element type."""
    list_type = _unwrap_optional(list_type)
    if not isinstance(list_type, ListType):
        return False
    if actual.is_subtype_of(list_type):
        return True
    return isinstance(actual, TupleType) and all(t.is_subtype_of(list_type.elem) for t in actual.elements)


def _find_keyword(name: str, kwargs: dict[str, Any], schema: FunctionSchema) -> str | None:
    """The keyword giving argument `name`; aten's `self` may also be called `input`, its functional name."""
    if name in kwargs:
        return name
    if name == "self" and "input" in kwargs and schema.name.startswith("aten::"):
        return "input"
    return None


def _unwrap_optional(type_: Type) -> Type:
    return type_.elem if isinstance(type_, OptionalType) else type_


def _is_optional_or_none(type_: Type) -> bool:
    return isinstance(type_, OptionalType) or type_.is_subtype_of(NoneType.get())


# ---- type variables ----------------------------------------------------------------------------------------
def match_type_variables(formal: Type, actual: Type, type_env: TypeEnv) -> str | None:
    """Bind the type variables of `formal` to the matching parts of `actual` in `type_env`.

    Returns None on success, else why they cannot be bound. Whether `actual` then fits the evaluated formal
    is the caller's check: this only keeps `type_env` consistent (TorchScript's matchTypeVariables).
    """
    if not formal.has_free_variables():
        return None
    if isinstance(formal, VarType):
        return _bind(formal.name, actual, type_env)
    if isinstance(formal, OptionalType):
        return _match_optional(formal, actual, type_env)
    if isinstance(formal, ListType):
        return _match_list(formal, actual, type_env)
    if type(formal) is not type(actual):
        return f"Cannot match {_CONTAINER_NAMES.get(type(formal), _spell(formal))} to {_spell(actual)}"
    return _match_parts(formal.contained_types(), actual.contained_types(), type_env)


_CONTAINER_NAMES = {TupleType: "a tuple", DictType: "a dict", FutureType: "a future", AwaitType: "an await",
                    RRefType: "a rref"}


def _bind(name: str, actual: Type, type_env: TypeEnv) -> str | None:
    bound = type_env.get(name)
    if bound is None:
        type_env[name] = actual
        return None
    if unify_types(bound, actual) is not None:
        return None  # either may be the supertype; the binding stays as it is
    return (f"Type variable '{name}' previously matched to type {_spell(bound)} is matched to type "
            f"{_spell(actual)}")


def _match_optional(formal: OptionalType, actual: Type, type_env: TypeEnv) -> str | None:
    """`T?` binds through `U?` and through a plain `U`; None binds nothing, since None fits any `T?`."""
    if isinstance(actual, OptionalType):
        return match_type_variables(formal.elem, actual.elem, type_env)
    if actual.is_subtype_of(NoneType.get()):
        return None
    return match_type_variables(formal.elem, actual, type_env)


def _match_list(formal: ListType, actual: Type, type_env: TypeEnv) -> str | None:
    """`t[]` binds through a list, or through a tuple whose element types unify."""
    if isinstance(actual, ListType):
        return match_type_variables(formal.elem, actual.elem, type_env)
    if isinstance(actual, TupleType):
        unified = unify_type_list(actual.elements)
        if unified is not None:
            return match_type_variables(formal.elem, unified, type_env)
    return f"Cannot match {_spell(formal)} to {_spell(actual)}"


def _match_parts(formals: Sequence[Type], actuals: Sequence[Type], type_env: TypeEnv) -> str | None:
    """Tuples, dicts, futures: the same kind of container on both sides, matched part by part."""
    if len(formals) != len(actuals):
        return "Cannot match tuples of mismatched size"
    for formal, actual in zip(formals, actuals):
        reason = match_type_variables(formal, actual, type_env)
        if reason is not None:
            return reason
    return None


def eval_type_variables(type_: Type, type_env: TypeEnv) -> Type | None:
    """`type_` with its type variables replaced by their bindings (`t[]` -> `int[]`); None if unbound."""
    if not type_.has_free_variables():
        return type_
    if isinstance(type_, VarType):
        return type_env.get(type_.name)
    contained = [eval_type_variables(t, type_env) for t in type_.contained_types()]
    if None in contained:
        return None
    return type_.with_contained(contained)


# ---- existing nodes ----------------------------------------------------------------------------------------
def node_matches_schema(node: Node, schema: FunctionSchema) -> bool:
    """Whether `node` is a call of `schema`: its kind and its input types fit, without any conversion; a node
    pinned to an overload (see `pin_overload`) is a call of that overload only."""
    if node.kind != schema.name:
        return False
    pinned = pinned_overload(node)
    if pinned is None and schema.operator_name in _BLOCKLISTED_SCHEMAS:
        return False
    if pinned is not None and pinned != schema.overload_name:
        return False
    actuals, formals = node.inputs, schema.arguments
    if len(actuals) < len(formals) or (len(actuals) > len(formals) and not schema.is_vararg):
        return False
    type_env: TypeEnv = {}
    return all(_input_fits(argument.type, value.type, type_env) or (pinned is not None and _bool_scalar(
        argument.type, value.type)) for argument, value in zip(formals, actuals))


def _bool_scalar(formal: Type, actual: Type) -> bool:
    """A bool for a Scalar: ATen's Scalar holds bools, TorchScript's number type does not, so only a node pinned to
    its overload by the tracer passes one (`torch.fill(x, True)` dispatches aten::fill.Scalar with a bool)."""
    number = formal.elem if isinstance(formal, OptionalType) else formal
    return isinstance(number, NumberType) and isinstance(actual, BoolType)


def _input_fits(formal: Type, actual: Type, type_env: TypeEnv) -> bool:
    if match_type_variables(formal, actual, type_env) is not None:
        return False
    # None leaves the `t` of `t?` unbound, and still fits the unevaluated `t?`
    evaluated = eval_type_variables(formal, type_env)
    return actual.is_subtype_of(evaluated if evaluated is not None else formal)


def find_operator_for_node(node: Node) -> Operator | None:
    """The first operator of the node's kind whose schema the node matches (TorchScript's maybeOperator).

    Passes and plans ask this of every node, and a graph holds the same call many times (each a walk over the
    kind's overloads), so the answer is remembered by what it depends on: the kind, the pinned overload, the
    input types and how many operators the kind has (a registration adds one)."""
    operators = get_operators(node.kind)
    try:
        key = (node.kind, pinned_overload(node), len(operators), tuple(v.type for v in node.inputs))
        found = _operators_for_nodes.get(key, _NOT_SEEN)
    except TypeError:  # a type holding something unhashable: matched every time
        return next((op for op in operators if node_matches_schema(node, op.schema)), None)
    if found is _NOT_SEEN:
        found = next((op for op in operators if node_matches_schema(node, op.schema)), None)
        if len(_operators_for_nodes) >= _OPERATORS_FOR_NODES_SIZE:
            _operators_for_nodes.clear()
        _operators_for_nodes[key] = found
    return found


_NOT_SEEN = object()
_OPERATORS_FOR_NODES_SIZE = 4096
_operators_for_nodes: dict[tuple, Operator | None] = {}


def find_schema_for_node(node: Node) -> FunctionSchema | None:
    """The schema of an existing node, found from its kind and input types (the overload is not stored)."""
    operator = find_operator_for_node(node)
    return operator.schema if operator is not None else None


# ---- exact overloads ----------------------------------------------------------------------------------------
# A call of one exact overload (`torch.ops.aten.add.default(a, b)` on ints, a traced dispatch) may give a node
# whose input types an earlier overload also accepts, or that no lookup finds (a blocklisted overload):
#
#     %c : Scalar = aten::add(%a, %b)          # int inputs: the types pick aten::add.int, not aten::add
#
# Such a node carries its overload as an attribute, which the lookup above honours, and which the text format,
# copies and the python printer keep; other nodes do not need one and get none:
#
#     %c : Scalar = aten::add[overload=""](%a, %b)
OVERLOAD = "overload"


def pin_overload(node: Node, schema: FunctionSchema) -> None:
    """Make `node` a call of exactly `schema`: pinned only when its input types would pick another overload."""
    if node.has_attribute(OVERLOAD):
        node.remove_attribute(OVERLOAD)
    found = find_schema_for_node(node)
    if found is None or found.overload_name != schema.overload_name:
        node.s_(OVERLOAD, schema.overload_name)


def pinned_overload(node: Node) -> str | None:
    """The overload name a node is pinned to (`""` for the empty overload), or None."""
    return node.s(OVERLOAD) if node.has_attribute(OVERLOAD) else None


# ---- messages ----------------------------------------------------------------------------------------------
def _spell(type_: Type) -> str:
    """A type as TorchScript's error messages spell it (Python annotation style)."""
    return type_.annotation_str()


def _type_mismatch_message(argument: Argument, actual: Type) -> str:
    message = (f"Expected a value of type '{_spell(argument.type)}' for argument '{argument.name}' but "
               f"instead found type '{_spell(actual)}'.\n")
    if isinstance(actual, ListType) and actual.elem.is_subtype_of(TensorType.get()):
        message += ("Empty lists default to List[Tensor]. Add a variable annotation to the assignment to "
                    "create an empty list of another type (torch.jit.annotate(List[T, []]) where T is the "
                    "type of elements in the list for Python 2)\n")
    if isinstance(argument.type, InterfaceType) and isinstance(actual, ClassType | InterfaceType):
        message += f"{argument.type.why_not_implemented_by(actual)}\n"
    return message


def _indent(text: str, prefix: str) -> str:
    return "".join(prefix + line for line in text.splitlines(keepends=True))


def _call_site(source_range) -> str:
    if source_range is None:
        return ""
    return "\nThe original call is:\n" + source_range.highlight()


def unknown_operator_message(kind: Symbol) -> str:
    """TorchScript's message for an unknown builtin, suggesting similarly named operators."""
    names = sorted({schema.name for schema in torch._C._jit_get_all_schemas()})
    close = difflib.get_close_matches(str(kind), names, n=5, cutoff=0.8)
    if not close:
        return (f"Unknown builtin op: {kind}.\nCould not find any similar ops to {kind}. This op may not "
                f"exist or may not be currently supported in TorchScript.\n")
    return f"Unknown builtin op: {kind}.\nHere are some suggestions: \n" + "".join(f"\t{n}\n" for n in close)
