"""Reshape prim::Loop nodes into the two forms torch-mlir lowers correctly.

A TorchScript loop has a trip count and a condition: `prim::Loop(%trip, %cond0, %carried...)` runs while the
iteration number is below `%trip` and the last condition held. torch-mlir's TorchToSCF lowers a loop whose
initial condition is the constant `true` to `scf.for` over the trip count, dropping the condition the body
computes, and every other loop to `scf.while`, dropping the trip count. A `for` loop with `break` (finite trip
count, computed condition) and a `for` loop with an early `return` (which TorchScript's exit transform turns
into a loop of 2^63-1 iterations whose initial condition is `true`) would be miscompiled: the first would not
stop at the break, the second would not stop at all. So before import:

- a loop with a finite trip count and a computed condition keeps running for its trip count, with the body
  guarded by an `active` flag carried through the iterations (`guard_loop_conditions`):

      %r = prim::Loop(%n, %c0, %x)                  %active, %r = prim::Loop(%n, %true, %c0, %x)
        block0(%i, %x.1):                             block0(%i, %active.1, %x.1):
          ... -> (%c, %x.2)                   ->        %a, %x.3 = prim::If(%active.1)
                                                          block0(): ... -> (%c, %x.2)
                                                          block1(): -> (%false, %x.1)
                                                        -> (%true, %a, %x.3)

- a while loop (trip count 2^63-1) whose initial condition is the constant `true` runs its first iteration
  before the loop, which then starts from the condition that iteration computed (`peel_first_iteration`,
  tsjit/passes/static_control_flow.py).
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.constants import INT64_MAX, constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import BoolType
from tsjit.passes.static_control_flow import peel_first_iteration


def loops_to_for_or_while(graph: Graph) -> bool:
    """Apply both rewrites to every loop (inner loops first)."""
    changed = False
    for loop in [n for n in reversed(list(graph.all_nodes())) if n.kind is prim.Loop]:
        if _is_constant(loop.blocks[0].outputs[0], True) or not _needs_rewrite(loop) or not log.opt_allowed():
            continue
        if not _is_constant(loop.input(0), INT64_MAX):
            guard_loop_condition(graph, loop)
        else:
            peel_first_iteration(graph, loop)
        changed = True
    return changed


def _needs_rewrite(loop: Node) -> bool:
    """A finite trip count with a computed condition, or a while loop whose initial condition is `true`."""
    return not _is_constant(loop.input(0), INT64_MAX) or _is_constant(loop.input(1), True)


def _is_constant(value: Value, expected) -> bool:
    return value.node.kind is prim.Constant and constant_value(value.node) == expected


def guard_loop_condition(graph: Graph, loop: Node) -> None:
    """Make `loop` a for loop over its trip count that skips its body once the condition turned false."""
    body = loop.blocks[0]
    with graph.insert_point_guard(loop):
        true, false = graph.insert_constant(True), graph.insert_constant(False)
    loop.insert_input(2, loop.input(1))
    loop.replace_input(1, true)
    loop.insert_output(0).set_type(BoolType.get())
    active = body.insert_input(1, "active").set_type(BoolType.get())
    guard = graph.create(prim.If, [active], num_outputs=0)
    guard.insert_before(body.return_node)
    _move_body_into_guard(body, guard, false)
    for output in guard.outputs:
        body.register_output(output)
    body.insert_output(0, true)


def _move_body_into_guard(body, guard: Node, false: Value) -> None:
    """The body's nodes and results go into the guard's then-branch; the else-branch passes the carried values
    through and keeps the loop inactive."""
    taken, skipped = guard.add_block(), guard.add_block()
    for node in [n for n in body.nodes() if n is not guard]:
        node.move_before(taken.return_node)
    results = list(body.outputs)
    while body.outputs:
        body.erase_output(0)
    for result, carried in zip(results, [false, *body.inputs[2:]]):
        taken.register_output(result)
        skipped.register_output(carried)
        guard.add_output().set_type(carried.type)
