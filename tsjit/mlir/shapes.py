"""Refine tensor types before import by running the graph on meta tensors.

torch-mlir infers shapes and dtypes op by op, but not through control flow: the result of a `torch.prim.If` or
`torch.prim.Loop` keeps the type the importer gave it, and a plain `!torch.vtensor` there fails the backend
contract as "tensor with unknown rank". So tsjit works the types out itself, the way TorchScript's shape
propagation does: every node runs on abstract values (meta tensors, which have a shape and dtype but no data;
Python scalars, lists and tuples), and each value's type becomes the join of all the types it was seen with.
An operator's tensor results come from the executor's shape rule tables where they decide them
(rule_results.py), from its meta kernel otherwise.

    %y : Tensor = prim::If(%c)         with %x : Float(2, 3)      %y : Float(2, 3) = prim::If(%c)
      block0(): -> (%x)                                 ->          block0(): -> (%x)
      block1(): %z = aten::neg(%x) -> (%z)                          block1(): %z : Float(2, 3) = ...

An abstract value is exact when it follows from static facts alone. Stand-ins make it inexact: an int argument
runs as 1 and a loop counter as 0, a dynamic dimension (-1 in an annotation) as size 2, and joining two different
values (the branches of an If whose condition is not known, the iterations of a loop) keeps the first one. An
inexact tensor keeps its rank and dtype but not its sizes, so stand-ins never produce a wrong static size. An If
whose condition is exact runs one branch; a loop with an exact trip count runs every iteration (up to
`_UNROLL_LIMIT`), otherwise its body runs until the carried types stop changing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.mlir.objects import ModuleValue
from tsjit.mlir.rule_results import result_by_rule
from tsjit.ops.matching import find_operator_for_node

_UNROLL_LIMIT = 64
_FIXED_POINT_ROUNDS = 4
DYNAMIC_SIZE_STAND_IN = 2


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNKNOWN = _Marker("UNKNOWN")  # nothing is known of the value
UNINITIALIZED = _Marker("UNINITIALIZED")  # prim::Uninitialized: never read, so a join ignores it


class Abstract(NamedTuple):
    """A value as far as it is known, and whether it is exact."""

    value: Any
    exact: bool


class _Raised(Exception):
    """The block being run reached prim::RaiseException."""


_STAND_INS = {ts.IntType: 1, ts.FloatType: 1.0, ts.BoolType: True}


def stand_in(type_: ts.Type) -> Abstract:
    """An inexact placeholder of a type, or UNKNOWN where no placeholder makes sense."""
    return Abstract(_STAND_INS.get(type(type_), UNKNOWN), False)


def meta_tensor(sizes: Sequence[int | None], dtype: torch.dtype) -> Abstract:
    """An argument tensor; unknown sizes run as a stand-in and make it inexact."""
    exact = None not in sizes
    shape = [DYNAMIC_SIZE_STAND_IN if s is None else s for s in sizes]
    return Abstract(torch.empty(shape, dtype=dtype, device="meta"), exact)


def refine_types(graph: Graph, arguments: Sequence[Abstract]) -> Abstract:
    """Run `graph` (and the methods it calls) abstractly and give every value the join of its types; the
    graph's result, as far as it is known."""
    propagation = ShapePropagation()
    result = propagation.run_graph(graph, list(arguments))
    propagation.apply()
    return result


class ShapePropagation:
    """The abstract interpreter: observations per value, joined over every time the value is computed."""

    def __init__(self) -> None:
        self.observed: dict[Value, ts.Type] = {}
        self.tainted: set[int] = set()  # ids of containers mutated where it is not known whether that ran
        self.uncertain = 0
        self.attribute_writes: dict[tuple[int, str], Abstract] = {}

    def apply(self) -> None:
        """Set the joined types; an Uninitialized value takes the type of the If/Loop result it stands for."""
        for value, type_ in self.observed.items():
            value.set_type(type_)
        for value in self.observed:
            if value.node.kind is prim.Uninitialized:
                value.set_type(_result_type_of_yield(value))

    # ---- graphs and blocks -------------------------------------------------------------------------------------
    def run_graph(self, graph: Graph, arguments: list[Abstract]) -> Abstract:
        env: dict[Value, Abstract] = {}
        try:
            (output,) = self.run_block(graph.block, arguments, env)
        except _Raised:
            return Abstract(UNKNOWN, False)
        return output

    def run_block(self, block: Block, inputs: Sequence[Abstract], env: dict[Value, Abstract]) -> list[Abstract]:
        for value, abstract in zip(block.inputs, inputs):
            self.bind(value, abstract, env)
        for node in block.nodes():
            self.run_node(node, env)
        return [self.read(v, env) for v in block.outputs]

    def bind(self, value: Value, abstract: Abstract, env: dict[Value, Abstract]) -> None:
        env[value] = abstract
        seen = _observed_type(abstract, value.type)
        previous = self.observed.get(value)
        self.observed[value] = seen if previous is None else _join_types(previous, seen)

    def read(self, value: Value, env: dict[Value, Abstract]) -> Abstract:
        abstract = env.get(value, Abstract(UNKNOWN, False))
        if abstract.exact and id(abstract.value) in self.tainted:
            return Abstract(abstract.value, False)
        return abstract

    # ---- nodes ---------------------------------------------------------------------------------------------
    def run_node(self, node: Node, env: dict[Value, Abstract]) -> None:
        rule = _RULES.get(node.kind, ShapePropagation.run_operator)
        inputs = [self.read(v, env) for v in node.inputs]
        outputs = rule(self, node, inputs, env)
        for value, abstract in zip(node.outputs, outputs):
            self.bind(value, abstract, env)

    def run_operator(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        """Call the operator's implementation on the abstract values (meta tensors for tensors)."""
        operator = find_operator_for_node(node)
        if operator is None or any(a.value is UNKNOWN or a.value is UNINITIALIZED for a in inputs):
            return self._failed(node)
        if self.uncertain and operator.schema.is_mutable:
            self.tainted.update(id(a.value) for a in inputs)
        try:
            results = _results(operator, node, [a.value for a in inputs])
        except Exception:  # a meta tensor has no data (`int(t)`), or the stand-ins do not fit the op
            return self._failed(node)
        exact = all(a.exact for a in inputs)
        shape_exact = exact or _shape_exact(operator.schema, inputs)
        return [Abstract(_to_meta(r), shape_exact if isinstance(r, torch.Tensor) else exact) for r in results]

    def _failed(self, node: Node) -> list[Abstract]:
        return [stand_in(v.type) for v in node.outputs]

    def run_constant(self, node: Node, inputs, env) -> list[Abstract]:
        return [Abstract(_to_meta(constant_value(node)), True)]

    def run_construct(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        """ListConstruct, TupleConstruct and DictConstruct (keys and values interleaved)."""
        values = [a.value for a in inputs]
        exact = all(a.exact for a in inputs)
        if node.kind is prim.DictConstruct:
            return [Abstract(dict(zip(values[0::2], values[1::2])), exact)]
        return [Abstract(tuple(values) if node.kind is prim.TupleConstruct else values, exact)]

    def run_unpack(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        (container,) = inputs
        if not isinstance(container.value, list | tuple) or len(container.value) != len(node.outputs):
            return self._failed(node)
        return [Abstract(v, container.exact) for v in container.value]

    def run_identity(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        return inputs[:1]

    def run_nothing(self, node: Node, inputs, env) -> list[Abstract]:
        """Side effects (printing, warnings) do not happen while types are worked out."""
        return self._failed(node)

    def run_uninitialized(self, node: Node, inputs, env) -> list[Abstract]:
        return [Abstract(UNINITIALIZED, True)]

    def run_raise(self, node: Node, inputs, env) -> list[Abstract]:
        raise _Raised()

    # ---- objects -----------------------------------------------------------------------------------------------
    def run_get_attr(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        owner = inputs[0].value
        if not isinstance(owner, ModuleValue):
            return self._failed(node)
        written = self.attribute_writes.get((id(owner), node.s("name")))
        return [written or Abstract(_to_meta(owner.slot(node.s("name")).value), True)]

    def run_set_attr(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        owner, value = inputs
        if isinstance(owner.value, ModuleValue):
            exact = value.exact and not self.uncertain
            self.attribute_writes[(id(owner.value), node.s("name"))] = Abstract(value.value, exact)
        return []

    def run_call_method(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        owner = inputs[0].value
        if not isinstance(owner, ModuleValue) or node.s("name") not in owner.methods:
            return self._failed(node)
        return [self.run_graph(owner.methods[node.s("name")], inputs)]

    # ---- control flow ------------------------------------------------------------------------------------------
    def run_if(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        (condition,) = inputs
        if condition.exact and isinstance(condition.value, bool):
            return self.run_block(node.blocks[0 if condition.value else 1], (), env)
        self.uncertain += 1
        try:
            outcomes = [self._run_branch(block, env) for block in node.blocks]
        finally:
            self.uncertain -= 1
        finished = [o for o in outcomes if o is not None]
        if not finished:
            raise _Raised()
        return [_join_all(values) for values in zip(*finished)]

    def _run_branch(self, block: Block, env) -> list[Abstract] | None:
        try:
            return self.run_block(block, (), env)
        except _Raised:
            return None

    def run_loop(self, node: Node, inputs: list[Abstract], env) -> list[Abstract]:
        trip_count, condition, *carried = inputs
        if _is_exact_int(trip_count) and condition.exact:
            return self._unroll(node.blocks[0], trip_count.value, condition.value, carried, env)
        return self._uncertain_loop(node.blocks[0], carried, env)

    def _unroll(self, body: Block, trip_count: int, condition: bool, carried: list[Abstract], env):
        """Run every iteration while the condition stays exact, for at most `_UNROLL_LIMIT` iterations."""
        iteration = 0
        while condition and iteration < trip_count:
            if iteration == _UNROLL_LIMIT:
                return self._uncertain_loop(body, carried, env)
            outputs = self.run_block(body, [Abstract(iteration, True), *carried], env)
            if not outputs[0].exact:
                return self._uncertain_loop(body, [_join(a, b) for a, b in zip(carried, outputs[1:])], env)
            condition, carried = outputs[0].value, outputs[1:]
            iteration += 1
        return carried

    def _uncertain_loop(self, body: Block, carried: list[Abstract], env) -> list[Abstract]:
        self.uncertain += 1
        try:
            return self._fixed_point(body, carried, env)
        finally:
            self.uncertain -= 1

    def _fixed_point(self, body: Block, carried: list[Abstract], env) -> list[Abstract]:
        """Run the body (counter unknown) until joining its results into the carried values changes nothing."""
        for _ in range(_FIXED_POINT_ROUNDS):
            try:
                outputs = self.run_block(body, [Abstract(0, False), *carried], env)
            except _Raised:
                return carried
            joined = [_join(a, b) for a, b in zip(carried, outputs[1:])]
            if all(_same(a, b) for a, b in zip(carried, joined)):
                return joined
            carried = joined
        return [Abstract(UNKNOWN, False) for _ in carried]


_RULES: dict[Symbol, Any] = {
    prim.Constant: ShapePropagation.run_constant,
    prim.ListConstruct: ShapePropagation.run_construct,
    prim.TupleConstruct: ShapePropagation.run_construct,
    prim.DictConstruct: ShapePropagation.run_construct,
    prim.ListUnpack: ShapePropagation.run_unpack,
    prim.TupleUnpack: ShapePropagation.run_unpack,
    prim.unchecked_cast: ShapePropagation.run_identity,
    prim.Print: ShapePropagation.run_nothing,
    aten.warn: ShapePropagation.run_nothing,
    prim.Uninitialized: ShapePropagation.run_uninitialized,
    prim.RaiseException: ShapePropagation.run_raise,
    prim.GetAttr: ShapePropagation.run_get_attr,
    prim.SetAttr: ShapePropagation.run_set_attr,
    prim.CallMethod: ShapePropagation.run_call_method,
    prim.If: ShapePropagation.run_if,
    prim.Loop: ShapePropagation.run_loop,
}


# ---- values and types ------------------------------------------------------------------------------------------
def _results(operator, node: Node, values: list[Any]) -> list[Any]:
    """The operator's results on abstract values: from the shape rule tables where they decide them, else by
    calling it (meta kernels for tensors)."""
    by_rule = result_by_rule(operator, values)
    if by_rule is not None:
        return by_rule
    result = operator.get_operation(node)(*values)
    return [result] if len(node.outputs) == 1 else list(result or ())


def _to_meta(value: Any) -> Any:
    """Tensors (also inside lists and tuples) as meta tensors; everything else unchanged."""
    if isinstance(value, torch.Tensor):
        return value if value.is_meta else value.to("meta")
    if isinstance(value, list | tuple):
        return type(value)(_to_meta(v) for v in value)
    return value


def _shape_exact(schema, inputs: Sequence[Abstract]) -> bool:
    """Whether tensor results have exact shapes: a Scalar or float argument (`x * i`) never changes a shape,
    so only the other arguments must be exact."""
    arguments = schema.arguments
    return all(a.exact for a, argument in zip(inputs, arguments)
               if not isinstance(argument.type, ts.NumberType | ts.FloatType))


def _is_exact_int(abstract: Abstract) -> bool:
    return abstract.exact and isinstance(abstract.value, int) and not isinstance(abstract.value, bool)


def _join(a: Abstract, b: Abstract) -> Abstract:
    """What is known of a value that is `a` or `b`: exact only if they agree; tensors of different rank or
    dtype are unknown, since running on either one would claim the wrong rank or dtype."""
    if a.value is UNINITIALIZED or b.value is UNINITIALIZED:
        return b if a.value is UNINITIALIZED else a
    if isinstance(a.value, torch.Tensor) and isinstance(b.value, torch.Tensor):
        if a.value.dim() != b.value.dim() or a.value.dtype != b.value.dtype:
            return Abstract(UNKNOWN, False)
        return Abstract(a.value, a.exact and b.exact and a.value.shape == b.value.shape)
    if a.value is UNKNOWN or b.value is UNKNOWN:
        return Abstract(UNKNOWN, False)
    return Abstract(a.value, a.exact and b.exact and _equal(a.value, b.value))


def _join_all(values: Sequence[Abstract]) -> Abstract:
    joined = values[0]
    for value in values[1:]:
        joined = _join(joined, value)
    return joined


def _equal(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # containers of meta tensors compare elementwise and have no truth value
        return False


def _same(a: Abstract, b: Abstract) -> bool:
    """Whether a loop's carried value stayed what it was: exactness, and for tensors the shape and dtype."""
    if a.exact != b.exact or (a.value is UNKNOWN) != (b.value is UNKNOWN):
        return False
    if isinstance(a.value, torch.Tensor) and isinstance(b.value, torch.Tensor):
        return a.value.shape == b.value.shape and a.value.dtype == b.value.dtype
    return True


def _observed_type(abstract: Abstract, declared: ts.Type) -> ts.Type:
    """The declared type refined by a value: tensors get dtype and rank (and sizes when exact)."""
    value = abstract.value
    if isinstance(declared, ts.TensorType) and isinstance(value, torch.Tensor):
        sizes = tuple(value.shape) if abstract.exact else _declared_sizes(declared, value.dim())
        return ts.TensorType(dtype=value.dtype, sizes=sizes)
    if isinstance(declared, ts.TupleType) and isinstance(value, tuple) and len(value) == len(declared.elements):
        elements = [_observed_type(Abstract(v, abstract.exact), t) for v, t in zip(value, declared.elements)]
        return declared.with_contained(elements)
    return declared


def _result_type_of_yield(value: Value) -> ts.Type:
    """The type of the If or Loop result that a value yielded by a block becomes (its own type otherwise)."""
    for use in value.uses:
        block = use.user.owning_block
        owner = block.owning_node if use.user.kind is prim.Return and block is not None else None
        index = use.offset - (1 if owner is not None and owner.kind is prim.Loop else 0)
        if owner is not None and owner.kind in (prim.If, prim.Loop) and 0 <= index < len(owner.outputs):
            return owner.outputs[index].type
    return value.type


def _declared_sizes(declared: ts.TensorType, rank: int) -> tuple[int | None, ...]:
    """The sizes of an inexact tensor: unknown, except those its declared type states (types are facts; an
    annotation `[-1, 4]` says the second size is 4 even though the first runs as a stand-in)."""
    if declared.sizes is not None and len(declared.sizes) == rank:
        return declared.sizes
    return (None,) * rank


def _join_types(a: ts.Type, b: ts.Type) -> ts.Type:
    if isinstance(a, ts.TensorType) and isinstance(b, ts.TensorType):
        return a.merge(b)
    if isinstance(a, ts.TupleType) and isinstance(b, ts.TupleType) and len(a.elements) == len(b.elements):
        return a.with_contained([_join_types(x, y) for x, y in zip(a.elements, b.elements)])
    return a
