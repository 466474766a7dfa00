"""Function-call inlining: replace prim::CallFunction / prim::CallMethod by a copy of the callee's graph.

(pytorch-ir-2018.md "Function calls".) TorchScript keeps calls between functions as calls while compiling and
inlines them before optimizing and running:

    %f : Function = prim::Constant[name="double"]()          %2 : int = prim::Constant[value=2]()
    %y : Tensor = prim::CallFunction(%f, %x)          ->     %y : Tensor = aten::mul(%x, %2)

The callee's body comes from its `optimized_graph()` when it has one (already inlined itself, constants
folded and pooled, as C++ GraphFunction::optimized_graph), else from its `graph`. The Function constant is
left behind (unused), as TorchScript leaves it. Methods are found on the class type of their `self` input.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.call_stack import InlinedCall, prefix_callstack
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import ClassType, FunctionType


def inline_calls(graph: Graph) -> bool:
    """Inline every call whose callee is known; returns whether any call was inlined."""
    return _inline_block(graph.block)


def _inline_block(block: Block) -> bool:
    changed = False
    for node in list(block.nodes()):
        callee = _callee(node)
        if callee is not None and log.opt_allowed():
            _inline_call(node, callee)
            changed = True
        else:
            for inner in node.blocks:
                changed |= _inline_block(inner)
    return changed


def _callee(node: Node):
    """The function a call node runs (its graph known at compile time), or None."""
    if node.kind is prim.CallFunction:
        function_type = node.inputs[0].type
        if node.inputs[0].node.kind is prim.Constant and isinstance(function_type, FunctionType):
            return function_type.function
    elif node.kind is prim.CallMethod and isinstance(node.inputs[0].type, ClassType):
        return node.inputs[0].type.methods.get(node.s("name"))
    return None


def callee_graph(function) -> Graph:
    optimized = getattr(function, "optimized_graph", None)
    return optimized() if callable(optimized) else function.graph


def _inline_call(node: Node, function) -> None:
    graph = node.owning_graph
    inputs = list(node.inputs[1:] if node.kind is prim.CallFunction else node.inputs)
    body = callee_graph(function)
    log.graph_update(f"inlining function '{getattr(function, 'qualname', function)}' at {node.kind}")
    call = InlinedCall(getattr(function, "name", str(function)), node.source_range)
    with graph.insert_point_guard(node):
        outputs = insert_graph(graph, body, inputs, (*(node.callstack or ()), call))
    for old, new in zip(node.outputs, outputs):
        old.replace_all_uses_with(new)
    node.destroy()


def insert_graph(graph: Graph, callee: Graph, inputs: list[Value], calls: tuple[InlinedCall, ...] = ()) -> list[Value]:
    """Copy `callee`'s nodes to the insertion point of `graph`, its inputs bound to `inputs`; its outputs. The
    copies keep their source ranges, and `calls` (the call being inlined, after its own callstack) goes in front
    of their callstacks."""
    mapping: dict[Value, Value] = dict(zip(callee.inputs, inputs))
    for node in callee.nodes():
        clone = graph.insert_node(graph.create_clone(node, lambda v: mapping[v]))
        if calls:
            prefix_callstack(clone, calls)
        mapping.update(zip(node.outputs, clone.outputs))
    return [mapping[v] for v in callee.outputs]
