"""The passes every freshly emitted graph goes through, in TorchScript's order (to_ir + runCleanupPasses):

    modified_loops_to_while_loops -> normalize_ops -> lift_closures -> inline_forked_closures
    -> lower_simple_tuples -> constant_propagation_immutable_types -> constant_pooling -> order_outputs_by_first_use
    -> annotate_warns

They make the emitter's output the graph torch.jit shows: closures are graphs of their own and forks are
prim::fork nodes (lift_closures.py), tuples built only to be unpacked are gone, `"AssertionError: " + "msg"` is
one constant, constants are pooled at the top, control-flow outputs are in first-use order. (convert_to_ssa runs
before these.) The graphs lifted out of closures go through the same passes from lift_closures on
(`clean_up`), as TorchScript's runCleanupPasses does.
"""

from __future__ import annotations

from tsjit import log
from tsjit.frontend.lift_closures import inline_forked_closures, lift_closures
from tsjit.frontend.sugared_value import emit_builtin_call
from tsjit.ir.constants import INT64_MAX, constant_of
from tsjit.ir.graph import Block, Graph, Node
from tsjit.ir.symbols import aten, prim
from tsjit.passes.annotate_warns import annotate_warns
from tsjit.passes.constant_pooling import constant_pooling
from tsjit.passes.constant_propagation import constant_propagation_immutable_types
from tsjit.passes.lower_tuples import lower_simple_tuples
from tsjit.passes.normalize_ops import normalize_ops
from tsjit.passes.output_order import order_outputs_by_first_use
from tsjit.passes.pass_runner import run_pass


def run_cleanup_passes(graph: Graph) -> None:
    run_pass(modified_loops_to_while_loops, graph)
    run_pass(normalize_ops, graph)
    clean_up(graph)


def clean_up(graph: Graph) -> None:
    """TorchScript's runCleanupPasses: for new graphs and for the graphs lifted out of their closures."""
    run_pass(lift_closures, graph, clean_up)
    run_pass(inline_forked_closures, graph, clean_up)
    run_pass(lower_simple_tuples, graph)
    run_pass(constant_propagation_immutable_types, graph)
    run_pass(constant_pooling, graph)
    run_pass(order_outputs_by_first_use, graph)
    run_pass(annotate_warns, graph)


def modified_loops_to_while_loops(graph: Graph) -> bool:
    """A loop with both a trip count and a condition (`for` with `break`) becomes a while loop counting itself:

        Loop(%n, %c, ...)                       Loop(INT64_MAX, %n > 0 and %c, 0, ...)
          block0(%i, ...):                ->      block0(%_, %i, ...):
            -> (%c2, ...)                           %i1 = %i + 1
                                                    -> (%i1 < %n and %c2, %i1, ...)

    so that every loop reads as a Python `for` (a constant-true condition) or `while` (no trip count).
    """
    return _rewrite_modified_loops(graph.block)


def _rewrite_modified_loops(block: Block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for inner in node.blocks:
            changed |= _rewrite_modified_loops(inner)
        if node.kind is prim.Loop and _is_modified_loop(node) and log.opt_allowed():
            _to_while_loop(node)
            changed = True
    return changed


def _is_modified_loop(node: Node) -> bool:
    """Neither a for loop (constant-true conditions) nor a while loop (an unused counter up to INT64_MAX)."""
    body = node.blocks[0]
    start, next_condition = constant_of(node.inputs[1]), constant_of(body.outputs[0])
    if start is True and next_condition is True:
        return False
    trip_count = constant_of(node.inputs[0])
    return trip_count != INT64_MAX or isinstance(trip_count, bool) or bool(body.inputs[0].uses)


def _to_while_loop(node: Node) -> None:
    graph, body = node.owning_graph, node.blocks[0]
    with graph.insert_point_guard(node):
        zero, one = graph.insert_constant(0), graph.insert_constant(1)
        max_trip_count = node.inputs[0]
        condition = emit_builtin_call(graph, None, aten.gt, [max_trip_count, zero])
        node.replace_input(0, graph.insert_constant(INT64_MAX))
        if constant_of(node.inputs[1]) is not True:
            condition = emit_builtin_call(graph, None, aten.__and__, [condition, node.inputs[1]])
        node.replace_input(1, condition)
    node.add_output().set_type(zero.type)
    node.add_input(zero)
    new_counter = body.add_input()
    new_counter.set_type(zero.type)
    old_counter = body.inputs[0]
    old_counter.set_debug_name(None)
    old_counter.replace_all_uses_with(new_counter)
    with graph.insert_point_guard(body):
        incremented = emit_builtin_call(graph, None, aten.add, [new_counter, one])
        body.register_output(incremented)
        below_max = emit_builtin_call(graph, None, aten.lt, [incremented, max_trip_count])
        next_condition = emit_builtin_call(graph, None, aten.__and__, [below_max, body.outputs[0]])
    body.erase_output(0)
    body.insert_output(0, next_condition)
