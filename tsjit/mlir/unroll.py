"""Remove control flow that is decided at compile time: Ifs for every backend, loops for those without any.

The TOSA and StableHLO backend contracts accept no `scf` ops: a `prim::If` or `prim::Loop` left in the
program fails to legalize. Much of TorchScript's control flow is static, though: `for i in range(3)`, loops over
a ModuleList, `while k < i` inside such a loop, an `if` on a module's constant attribute. Four rewrites, repeated
until none applies, remove it:

- `fold_constants`: a scalar op (int, float, bool results; no tensors, no side effects) whose inputs are all
  constants (or list literals of constants: `x.device.type in ["cpu", "cuda"]`) is replaced by its result,
  computed by the operator's implementation;
- `forward_tuple_elements`: `prim::TupleUnpack` and `prim::TupleIndex` (constant index) of a `prim::TupleConstruct`
  read its elements, so that constants packed into a tuple (`expected_hidden_size` in nn.LSTM's checks) reach the
  ops that fold them (tsjit's lower_simple_tuples does the same but also runs dead code elimination, which
  would delete the `aten::_assert_scalar` checks prepare.py inserts);
- `inline_constant_ifs`: an If on a constant condition becomes the nodes of the branch it takes;
- `peel_constant_loops`: a loop that surely runs (constant trip count and constant initial condition) runs its
  first iteration before the loop, with the iteration number 0; the loop continues from iteration 1 and goes
  away once its condition or trip count is a constant that stops it:

      %r = prim::Loop(%3, %true, %x)                 %x.1 = aten::add(%x, %zero)   (the body, i = 0)
        block0(%i, %x.2):                   ->        %r = prim::Loop(%2, %c.1, %x.1)
          %x.3 = aten::add(%x.2, %i)                    block0(%j, %x.2):
          -> (%true, %x.3)                                %i = aten::add(%j, %one) ...

`fold_constants` also unpacks constant lists and answers `a is b` / `a is not b` of a value with itself
(`query is not key` in nn.MultiheadAttention called as `attention(x, x, x)`). Once types are refined
(tsjit.mlir.shapes), `fold_static_types` makes the sizes, ranks and dtypes they state constants (`aten::size`,
`aten::dim`, `prim::dtype`): the compiled program is specialized to its arguments' static shapes anyway, and
library code checks shapes with comparisons of size lists (`hx.size() != expected` in nn.LSTM) that no backend
lowers, or picks a path by dtype (MultiheadAttention's fast-path checks); folded, the checks and the Ifs on them
go away. Not where an op changes a tensor's sizes in place (`unsqueeze_`, `resize_`: programs imported without
value semantics), which makes a value's type describe it only before that op.

At most `UNROLL_LIMIT` iterations of one loop are peeled. Folding and inlining run for every backend: library
code branches on constants (`if inplace: relu_(x) else: relu(x)` in F.relu), and the dead branch's in-place op
would otherwise keep the program from being imported with value semantics.
"""

from __future__ import annotations

from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.scalar_type import dtype_to_code
from tsjit.ir.symbols import aten, prim
from tsjit.mlir.loops import peel_first_iteration
from tsjit.ops import builtins
from tsjit.ops.matching import find_operator_for_node
from tsjit.passes.constant_propagation import inline_if_branch
from tsjit.passes.shape_analysis import METADATA_MUTATORS

UNROLL_LIMIT = 64
_FOLDABLE_TYPES = (ts.IntType, ts.FloatType, ts.BoolType)
_IDENTITY_TESTS = frozenset({aten.__is__, aten.__isnot__})
_SIDE_EFFECTS = frozenset({prim.Print, aten.warn, prim.RaiseException, prim.Uninitialized})


def eliminate_static_control_flow(graph: Graph, unroll_loops: bool = True) -> bool:
    """Fold and inline (and peel loops, if asked) until nothing changes."""
    changed = False
    peeled: dict[Node, int] = {}
    while fold_constants(graph) | forward_tuple_elements(graph) | inline_constant_ifs(graph) | \
            (unroll_loops and peel_constant_loops(graph, peeled)):
        changed = True
    return changed


def fold_constants(graph: Graph) -> bool:
    builtins.load()  # the JIT-only scalar ops (`aten::lt.int`, ...) that folding runs
    changed = False
    for node in list(graph.all_nodes()):
        if _foldable(node):
            changed |= _fold(graph, node)
    return changed


def _foldable(node: Node) -> bool:
    if node.kind in _IDENTITY_TESTS and node.input(0) is node.input(1):
        return True
    if node.kind is prim.ListUnpack:
        return _is_constant(node.input()) and len(constant_value(node.input().node)) == len(node.outputs)
    if node.kind in _SIDE_EFFECTS or node.blocks or not node.outputs or not node.inputs:
        return False
    if not all(isinstance(v.type, _FOLDABLE_TYPES) for v in node.outputs):
        return False
    return all(_is_constant_scalar(v) or _is_constant_list(v) for v in node.inputs)


def _is_constant_scalar(value: Value) -> bool:
    return value.node.kind is prim.Constant and not isinstance(value.type, ts.TensorType)


def _is_constant_list(value: Value) -> bool:
    """A list literal of constants that nothing mutates: only read by ops that write none of their arguments
    (an `append` after it, a loop carrying it or a return would make its contents change or escape)."""
    if value.node.kind is not prim.ListConstruct or not all(_is_constant_scalar(e) for e in value.node.inputs):
        return False
    schemas = [use.user.maybe_schema() for use in value.uses]
    return all(schema is not None and not schema.is_mutable for schema in schemas)


def _value_of(value: Value):
    """The Python value of a constant or of a list literal of constants (a fresh list: the op may not keep it)."""
    if value.node.kind is prim.ListConstruct:
        return [constant_value(e.node) for e in value.node.inputs]
    return constant_value(value.node)


def _fold(graph: Graph, node: Node) -> bool:
    if node.kind in _IDENTITY_TESTS and node.input(0) is node.input(1):
        return _replace_by_constants(graph, node, [node.kind is aten.__is__])
    if node.kind is prim.ListUnpack:
        return _replace_by_constants(graph, node, constant_value(node.input().node))
    operator = find_operator_for_node(node)
    if operator is None or operator.schema.is_mutable:
        return False
    try:
        result = operator.get_operation(node)(*(_value_of(v) for v in node.inputs))
    except Exception:  # no implementation, or the op fails on these values: leave it to run
        return False
    return _replace_by_constants(graph, node, [result] if len(node.outputs) == 1 else list(result))


def _replace_by_constants(graph: Graph, node: Node, results: list) -> bool:
    with graph.insert_point_guard(node):
        for output, value in zip(node.outputs, results):
            output.replace_all_uses_with(graph.insert_constant(value, output.type))
    node.destroy()
    return True


def forward_tuple_elements(graph: Graph) -> bool:
    """Outputs of `TupleUnpack(%t)` / `TupleIndex(%t, k)` of `%t = TupleConstruct(...)` -> its inputs; the
    unpacking node is deleted."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in (prim.TupleUnpack, prim.TupleIndex)]:
        construct = node.input(0).node
        if construct.kind is not prim.TupleConstruct:
            continue
        if node.kind is prim.TupleUnpack:
            elements = list(construct.inputs)
        elif _is_constant(node.input(1)) and -len(construct.inputs) <= constant_value(node.input(1).node) < \
                len(construct.inputs):
            elements = [construct.inputs[constant_value(node.input(1).node)]]
        else:
            continue
        for output, element in zip(node.outputs, elements):
            output.replace_all_uses_with(element)
        node.destroy()
        changed = True
    return changed


def changes_tensor_metadata(graph: Graph) -> bool:
    """Whether an op in `graph` changes the sizes or dtype of an existing tensor (then types could lie)."""
    return any(node.kind in METADATA_MUTATORS for node in graph.all_nodes())


def fold_static_types(graph: Graph) -> bool:
    """`aten::size(%t)`, `aten::size(%t, d)`, `aten::dim(%t)` and `prim::dtype(%t)` -> constants, where %t's
    refined type states them."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in (aten.size, aten.dim, prim.dtype)]:
        value = _static_value(node)
        if value is not None:
            with graph.insert_point_guard(node):
                node.output().replace_all_uses_with(graph.insert_constant(value, node.output().type))
            node.destroy()
            changed = True
    return changed


def _static_value(node: Node) -> int | list[int] | None:
    type_ = node.input(0).type
    if node.kind is prim.dtype:
        return dtype_to_code(type_.dtype) if isinstance(type_, ts.TensorType) and type_.dtype is not None else None
    sizes = type_.sizes if isinstance(type_, ts.TensorType) else None
    if sizes is None or len(node.outputs) != 1:
        return None
    if node.kind is aten.dim:
        return len(sizes)
    if len(node.inputs) == 1:
        return None if None in sizes else list(sizes)
    dim = constant_value(node.input(1).node) if _is_constant(node.input(1)) else None
    return sizes[dim] if isinstance(dim, int) and -len(sizes) <= dim < len(sizes) else None


def inline_constant_ifs(graph: Graph) -> bool:
    ifs = [n for n in graph.all_nodes() if n.kind is prim.If and n.input().node.kind is prim.Constant]
    for node in ifs:
        if node.is_in_block_list():  # not in a branch an earlier If dropped
            inline_if_branch(node, 0 if constant_value(node.input().node) else 1)
    return bool(ifs)


def peel_constant_loops(graph: Graph, peeled: dict[Node, int]) -> bool:
    """Peel one iteration off each loop that surely runs; remove loops that surely stop."""
    changed = False
    for loop in [n for n in graph.all_nodes() if n.kind is prim.Loop]:
        if not loop.is_in_block_list():  # inside a loop removed before
            continue
        trip, condition = loop.input(0), loop.input(1)
        if not (_is_constant(trip) and _is_constant(condition)):
            continue
        if not constant_value(condition.node) or constant_value(trip.node) <= 0:
            _remove_loop(loop)
        elif peeled.get(loop, 0) < UNROLL_LIMIT:
            peeled[loop] = peeled.get(loop, 0) + 1
            _peel(graph, loop)
        else:
            continue
        changed = True
    return changed


def _is_constant(value: Value) -> bool:
    return value.node.kind is prim.Constant


def _remove_loop(loop: Node) -> None:
    for output, initial in zip(loop.outputs, loop.inputs[2:]):
        output.replace_all_uses_with(initial)
    loop.destroy()


def _peel(graph: Graph, loop: Node) -> None:
    """The first iteration before the loop, which then runs one time fewer."""
    peel_first_iteration(graph, loop)
    with graph.insert_point_guard(loop):
        loop.replace_input(0, graph.insert(aten.sub, [loop.input(0), 1]))
    _shift_iteration_number(graph, loop.blocks[0])


def _shift_iteration_number(graph: Graph, body) -> None:
    """The remaining iterations are numbered from 1: uses of the counter read `counter + 1`."""
    counter = body.inputs[0]
    if not counter.uses:
        return
    with graph.insert_point_guard(next(iter(body.nodes()), body.return_node)):
        shifted = graph.insert(aten.add, [counter, 1])
    counter.replace_uses_with_if(shifted, lambda use: use.user is not shifted.node)
