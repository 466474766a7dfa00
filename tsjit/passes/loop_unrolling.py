"""Loop unrolling: repeat the bodies of small `for` loops, so fewer iterations run and later passes see more.

(seed: jit-overview.md "Derivative Preserving Optimization": "Unrolling small loops".) Only counted loops
qualify: the condition is the constant True on entry and after every iteration (no `break`, no `while`), and
the body (nested blocks included) has at most MAX_BODY_SIZE nodes. A loop whose trip count is a constant below
MAX_BODY_REPEATS is replaced by that many copies of its body; any other is unrolled UNROLL_FACTOR times, with
a copy of the original loop (the epilogue) running the remaining `n % UNROLL_FACTOR` iterations:

    %y = prim::Loop(%n, %true, %x)                     %q = aten::__round_to_zero_floordiv(%n, 8)
      block0(%i, %a):                                  %y8 = prim::Loop(%q, %true, %x)       (8 copies of the body)
        %b = aten::mul(%a, %a)               ->        %r = aten::sub(%n, aten::mul(%q, 8))
        -> (%true, %b)                                 %y = prim::Loop(%r, %true, %y8)       (the original body)

A body that reads the iteration counter first gets its own counter carried through the loop (starting at 0,
one more after each body copy), so every copy and the epilogue see the right value.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code

UNROLL_FACTOR = 8
MAX_BODY_SIZE = 32
MAX_BODY_REPEATS = 64


def unroll_loops(graph: Graph) -> bool:
    """Unroll the small counted loops of the graph; returns whether anything changed."""
    changed = _unroll_block(graph.block)
    if changed:
        eliminate_dead_code(graph)
    return changed


def unroll_constant_loops(graph: Graph) -> bool:
    """Replace the small counted loops whose trip count is a constant below MAX_BODY_REPEATS by copies of
    their body, leaving other loops alone (C++ UnrollConstantLoops, run when freezing); returns whether
    anything changed."""
    changed = _unroll_block(graph.block, constant_trips_only=True)
    if changed:
        eliminate_dead_code(graph)
    return changed


def _unroll_block(block: Block, constant_trips_only: bool = False) -> bool:
    changed = False
    for node in list(block.nodes()):
        for inner in node.blocks:
            changed |= _unroll_block(inner, constant_trips_only)
        if node.kind is prim.Loop and _is_for_loop(node) and _size(node.blocks[0]) <= MAX_BODY_SIZE \
                and (not constant_trips_only or _has_constant_trips(node)) and log.opt_allowed():
            _unroll(node)
            changed = True
    return changed


def _has_constant_trips(loop: Node) -> bool:
    trips = _constant(loop.inputs[0])
    return isinstance(trips, int) and trips < MAX_BODY_REPEATS


def _is_for_loop(loop: Node) -> bool:
    return _constant(loop.inputs[1]) is True and _constant(loop.blocks[0].outputs[0]) is True


def _constant(value: Value):
    return constant_value(value.node) if value.node.kind is prim.Constant else None


def _size(block: Block) -> int:
    """The nodes of a block that do work (constants do not), nested blocks included."""
    return sum(1 + sum(_size(inner) for inner in node.blocks) for node in block.nodes()
               if node.kind is not prim.Constant)


def _unroll(loop: Node) -> None:
    graph = loop.owning_graph
    body = loop.blocks[0]
    if body.inputs[0].uses:
        _carry_counter(loop)
    trips = _constant(loop.inputs[0])
    if isinstance(trips, int) and trips < MAX_BODY_REPEATS:
        log.graph_update(f"unrolling a loop of {trips} iterations completely")
        _inline_copies(loop, max(trips, 0))
        return
    log.graph_update(f"unrolling a loop {UNROLL_FACTOR} times, with an epilogue")
    epilogue = graph.create_clone(loop, lambda value: value).insert_after(loop)
    for i, output in enumerate(loop.outputs):
        output.replace_all_uses_with(epilogue.outputs[i])
        epilogue.replace_input(i + 2, output)
    _repeat_body(body, UNROLL_FACTOR)
    count = loop.inputs[0]
    with graph.insert_point_guard(loop):
        unrolled = graph.insert(aten.__round_to_zero_floordiv, [count, UNROLL_FACTOR])
    loop.replace_input(0, unrolled)
    with graph.insert_point_guard(epilogue):
        done = graph.insert(aten.mul, [unrolled, UNROLL_FACTOR])
        epilogue.replace_input(0, graph.insert(aten.sub, [count, done]))


def _carry_counter(loop: Node) -> None:
    """Replace the body's iteration counter with a loop-carried int counting body copies."""
    graph = loop.owning_graph
    body = loop.blocks[0]
    with graph.insert_point_guard(loop):
        loop.add_input(graph.insert_constant(0))
    counter = body.add_input(type_=T.IntType.get())
    body.inputs[0].replace_all_uses_with(counter)
    with graph.insert_point_guard(body):
        body.register_output(graph.insert(aten.add, [counter, 1]))
    loop.add_output(T.IntType.get())


def _copy_body(body: Block, nodes: list[Node], carried: list[Value], before: Node) -> list[Value]:
    """Clone `nodes` (the body's) before `before`, its carried inputs reading `carried`; the copy's carried
    outputs."""
    graph = body.owning_graph
    mapping: dict[Value, Value] = dict(zip(body.inputs[1:], carried))
    for node in nodes:
        clone = graph.create_clone(node, lambda value: mapping.get(value, value)).insert_before(before)
        mapping.update(zip(node.outputs, clone.outputs))
    return [mapping.get(value, value) for value in body.outputs[1:]]


def _inline_copies(loop: Node, times: int) -> None:
    """Replace the loop by `times` copies of its body, one after another."""
    body = loop.blocks[0]
    nodes, carried = list(body.nodes()), list(loop.inputs[2:])
    for _ in range(times):
        carried = _copy_body(body, nodes, carried, loop)
    for output, value in zip(loop.outputs, carried):
        output.replace_all_uses_with(value)
    loop.destroy()


def _repeat_body(body: Block, times: int) -> None:
    """Make the body run its original nodes `times` times per iteration."""
    nodes, carried = list(body.nodes()), list(body.outputs[1:])
    for _ in range(times - 1):
        carried = _copy_body(body, nodes, carried, body.return_node)
    for i, value in enumerate(carried):
        body.replace_output(i + 1, value)
