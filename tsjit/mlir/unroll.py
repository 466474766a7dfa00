"""Remove control flow that is decided at compile time: Ifs for every backend, loops for those without any.

The TOSA and StableHLO backend contracts accept no `scf` ops: a `prim::If` or `prim::Loop` left in the
program fails to legalize. Much of TorchScript's control flow is static, though: `for i in range(3)`, loops over
a ModuleList, `while k < i` inside such a loop, an `if` on a module's constant attribute. Three rewrites, repeated
until none applies, remove it:

- `fold_constants`: a scalar op (int, float, bool results; no tensors, no side effects) whose inputs are all
  constants is replaced by its result, computed by the operator's implementation;
- `inline_constant_ifs`: an If on a constant condition becomes the nodes of the branch it takes;
- `peel_constant_loops`: a loop that surely runs (constant trip count and constant initial condition) runs its
  first iteration before the loop, with the iteration number 0; the loop continues from iteration 1 and goes
  away once its condition or trip count is a constant that stops it:

      %r = prim::Loop(%3, %true, %x)                 %x.1 = aten::add(%x, %zero)   (the body, i = 0)
        block0(%i, %x.2):                   ->        %r = prim::Loop(%2, %c.1, %x.1)
          %x.3 = aten::add(%x.2, %i)                    block0(%j, %x.2):
          -> (%true, %x.3)                                %i = aten::add(%j, %one) ...

At most `UNROLL_LIMIT` iterations of one loop are peeled. Folding and inlining run for every backend: library
code branches on constants (`if inplace: relu_(x) else: relu(x)` in F.relu), and the dead branch's in-place op
would otherwise keep the program from being imported with value semantics.
"""

from __future__ import annotations

from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ops import builtins
from tsjit.ops.matching import find_operator_for_node

UNROLL_LIMIT = 64
_FOLDABLE_TYPES = (ts.IntType, ts.FloatType, ts.BoolType)
_SIDE_EFFECTS = frozenset({prim.Print, aten.warn, prim.RaiseException, prim.Uninitialized})


def eliminate_static_control_flow(graph: Graph, unroll_loops: bool = True) -> bool:
    """Fold and inline (and peel loops, if asked) until nothing changes."""
    changed = False
    peeled: dict[Node, int] = {}
    while fold_constants(graph) | inline_constant_ifs(graph) | (unroll_loops and peel_constant_loops(graph, peeled)):
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
    if node.kind in _SIDE_EFFECTS or node.blocks or not node.outputs or not node.inputs:
        return False
    if not all(isinstance(v.type, _FOLDABLE_TYPES) for v in node.outputs):
        return False
    return all(v.node.kind is prim.Constant and not isinstance(v.type, ts.TensorType) for v in node.inputs)


def _fold(graph: Graph, node: Node) -> bool:
    operator = find_operator_for_node(node)
    if operator is None or operator.schema.is_mutable:
        return False
    try:
        result = operator.get_operation(node)(*(constant_value(v.node) for v in node.inputs))
    except Exception:  # no implementation, or the op fails on these values: leave it to run
        return False
    results = [result] if len(node.outputs) == 1 else list(result)
    with graph.insert_point_guard(node):
        for output, value in zip(node.outputs, results):
            output.replace_all_uses_with(graph.insert_constant(value, output.type))
    node.destroy()
    return True


def inline_constant_ifs(graph: Graph) -> bool:
    ifs = [n for n in graph.all_nodes() if n.kind is prim.If and n.input().node.kind is prim.Constant]
    for node in ifs:
        if node.is_in_block_list():  # not in a branch an earlier If dropped
            _inline_branch(node, 0 if constant_value(node.input().node) else 1)
    return bool(ifs)


def _inline_branch(node: Node, index: int) -> None:
    block = node.blocks[index]
    for inner in list(block.nodes()):
        inner.move_before(node)
    for output, value in zip(node.outputs, block.outputs):
        output.replace_all_uses_with(value)
    node.destroy()


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
    body = loop.blocks[0]
    with graph.insert_point_guard(loop):
        mapping = dict(zip(body.inputs, [graph.insert_constant(0), *loop.inputs[2:]]))
        for node in body.nodes():
            clone = graph.insert_node(graph.create_clone(node, lambda v: mapping.get(v, v)))
            mapping.update(zip(node.outputs, clone.outputs))
        loop.replace_input(0, graph.insert(aten.sub, [loop.input(0), 1]))
    for index, result in enumerate(body.outputs):
        loop.replace_input(1 + index, mapping.get(result, result))
    _shift_iteration_number(graph, body)


def _shift_iteration_number(graph: Graph, body) -> None:
    """The remaining iterations are numbered from 1: uses of the counter read `counter + 1`."""
    counter = body.inputs[0]
    if not counter.uses:
        return
    with graph.insert_point_guard(next(iter(body.nodes()), body.return_node)):
        shifted = graph.insert(aten.add, [counter, 1])
    counter.replace_uses_with_if(shifted, lambda use: use.user is not shifted.node)
