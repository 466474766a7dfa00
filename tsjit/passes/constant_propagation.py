"""Constant propagation over immutable types: run nodes whose inputs are all constants, at compile time.

    %a : int = prim::Constant[value=2]()          %c : int = prim::Constant[value=6]()
    %b : int = prim::Constant[value=3]()    ->    %p : bool = prim::Constant[value=1]()
    %c : int = aten::mul(%a, %b)                  (an If on %p keeps only its true branch)
    %p : bool = aten::gt(%c, %a)

This is the variant TorchScript runs right after compiling (ConstantPropagationImmutableTypes): only nodes
that neither take nor produce mutable values (tensors, lists, dicts) are folded, so no alias analysis is
needed; an If on a constant is replaced by the branch it takes, a Loop that cannot run is removed, and
control-flow outputs that are the same in every branch are forwarded. Dead code is removed afterwards.
"""

from __future__ import annotations

import enum
from typing import Any

import torch

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.alias_analysis import AliasDb, is_mutable_type
from tsjit.ir.constants import constant_value, is_wrapped_number
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ops.matching import find_operator_for_node
from tsjit.passes.dead_code_elimination import eliminate_dead_code, erase_loop_carried, node_has_side_effects

# never folded: control flow, placeholders, profiling, what must stay a node, and prim::get_default_dtype (it
# reads process state when the program runs)
SKIP_KINDS = frozenset({
    prim.If, prim.Loop, prim.Closure, prim.Constant, prim.AutogradZero, prim.Uninitialized, prim.Guard,
    prim.profile, prim.profile_ivalue, prim.unchecked_unwrap_optional, aten.dequantize, prim.get_default_dtype,
})
NONDETERMINISTIC = frozenset({aten.rand, aten.randn, aten.randint, aten.randperm, aten.bernoulli,
                              aten.dropout, aten.multinomial, aten.normal, aten.poisson, aten.rrelu,
                              aten.rand_like, aten.randn_like, aten.randint_like, aten.feature_dropout,
                              aten.alpha_dropout, aten.feature_alpha_dropout})


def constant_propagation_immutable_types(graph: Graph, remove_dead: bool = True) -> bool:
    """Fold constant computations on immutable values, then (unless `remove_dead` is False, for a caller that
    eliminates dead code itself once after several passes) remove what folding left unused; returns whether
    anything changed."""
    changed = _ConstantPropagator().run_block(graph.block)
    if changed and remove_dead:
        eliminate_dead_code(graph)
    return changed


def constant_propagation(graph: Graph) -> bool:
    """Fold constant computations on any values, tensors and lists included, unless AliasDb sees a write to
    one of the node's inputs or outputs (C++ ConstantPropagation with alias analysis). Freezing runs it once
    parameters are constants, so `self.table.sum()` of a frozen module becomes a tensor constant."""
    changed = _ConstantPropagator(AliasDb(graph)).run_block(graph.block)
    if changed:
        eliminate_dead_code(graph)
    return changed


def run_node_if_inputs_are_constant(node: Node) -> list[Any] | None:
    """The node's outputs computed from its constant inputs, or None if it cannot be run now."""
    if any(v.node.kind is not prim.Constant for v in node.inputs):
        return None
    inputs = [constant_value(v.node) for v in node.inputs]
    if any(is_wrapped_number(v) for v in inputs):  # it promotes as a number only where the runtime calls it
        return None
    try:
        outputs = _run(node, inputs)
    except Exception:
        return None
    if outputs is None or any(isinstance(o, torch.Tensor) and o.requires_grad for o in outputs):
        return None
    return outputs


def _run(node: Node, inputs: list[Any]) -> list[Any] | None:
    if node.kind is prim.TupleConstruct:
        return [tuple(inputs)]
    if node.kind is prim.ListConstruct:
        return [list(inputs)]
    if node.kind is prim.ListUnpack:
        return list(inputs[0]) if len(inputs[0]) == len(node.outputs) else None
    schema = node.maybe_schema()
    if schema is None or schema.is_vararg:
        return None
    operator = find_operator_for_node(node)
    if operator is None:
        return None
    result = operator.get_operation(node)(*inputs)
    if len(node.outputs) == 1:
        return [result]
    return list(result) if result is not None else []


def insertable_constant(value: Any) -> bool:
    """Whether a Python value can be a prim::Constant (numbers, strings, None, devices, enum members, tensors
    without grad, tuples and lists of them), as TorchScript's insertableIValue decides."""
    if value is None or isinstance(value, bool | int | str | torch.device | complex | enum.Enum | T.EnumValue):
        return True
    if isinstance(value, float):
        return True
    if isinstance(value, tuple | list):
        return all(insertable_constant(v) for v in value)
    return isinstance(value, torch.Tensor) and not value.requires_grad


def _constant_type(value: Any, output: Value) -> T.Type | None:
    """The type of the constant replacing `output`: None and values holding enum members (whose types their
    values cannot tell: an IntEnum member is also an int) take the output's type; other values are typed by
    themselves (None here)."""
    return output.type if value is None or T.holds_enum_member(value) else None


class _ConstantPropagator:
    """Folds nodes block by block; without an AliasDb only nodes free of mutable values are run."""

    def __init__(self, alias_db: AliasDb | None = None):
        self.changed = False
        self.alias_db = alias_db

    def supported(self, node: Node) -> bool:
        if self.alias_db is None:
            return _supported(node)
        return not self.alias_db.has_writers(node) and _foldable_kind(node)

    def run_block(self, block: Block) -> bool:
        for node in list(block.nodes()):
            if node.owning_block is block:
                self.visit(node)
        return self.changed

    def visit(self, node: Node) -> None:
        constant_inputs = all(v.node.kind is prim.Constant for v in node.inputs)
        if node.kind is prim.If:
            if constant_inputs and log.opt_allowed():
                self.inline_if(node)
            else:
                for block in node.blocks:
                    self.run_block(block)
                self.remove_extra_if_outputs(node)
        elif node.kind is prim.Loop:
            if _loop_will_not_run(node) and log.opt_allowed():
                self.remove_loop(node)
            else:
                self.run_block(node.blocks[0])
                self.remove_extra_loop_outputs(node)
        elif constant_inputs and self.supported(node):
            self.propagate(node)
        else:
            for block in node.blocks:
                self.run_block(block)

    def propagate(self, node: Node) -> None:
        outputs = run_node_if_inputs_are_constant(node)
        if outputs is None:
            return
        graph = node.owning_graph
        with graph.insert_point_guard(node):
            for output, value in zip(node.outputs, outputs):
                if not insertable_constant(value) or not log.opt_allowed():
                    continue
                log.graph_update(f"folding {node.kind} into a constant %{output.debug_name}")
                constant = graph.insert_constant(value, _constant_type(value, output))
                output.replace_all_uses_with(constant)
                self.changed = True

    def inline_if(self, node: Node) -> None:
        block = node.blocks[0 if constant_value(node.inputs[0].node) else 1]
        log.graph_update(f"inlining the {'then' if block is node.blocks[0] else 'else'} branch of a constant prim::If")
        self.run_block(block)
        inline_if_branch(node, node.blocks.index(block))
        self.changed = True

    def remove_extra_if_outputs(self, node: Node) -> None:
        then_block, else_block = node.blocks
        graph = node.owning_graph
        for i in reversed(range(len(node.outputs))):
            then_value, else_value = then_block.outputs[i], else_block.outputs[i]
            if then_value is else_value:
                replacement = then_value
            elif _equal_constants(then_value, else_value):
                with graph.insert_point_guard(node):
                    replacement = graph.insert_constant(constant_value(then_value.node), then_value.type)
            else:
                continue
            if not log.opt_allowed():
                continue
            log.graph_update(f"forwarding output {i} of prim::If, the same in both branches")
            node.outputs[i].replace_all_uses_with(replacement)
            node.erase_output(i)
            then_block.erase_output(i)
            else_block.erase_output(i)
            self.changed = True

    def remove_loop(self, node: Node) -> None:
        log.graph_update("removing a prim::Loop that never runs")
        for i, output in enumerate(node.outputs):
            output.replace_all_uses_with(node.inputs[i + 2])
        node.destroy()
        self.changed = True

    def remove_extra_loop_outputs(self, node: Node) -> None:
        body = node.blocks[0]
        for i in reversed(range(len(node.outputs))):
            if body.inputs[i + 1] is not body.outputs[i + 1] or not log.opt_allowed():
                continue
            log.graph_update(f"forwarding loop-carried value {i} of prim::Loop, never changed")
            initial = node.inputs[i + 2]
            node.outputs[i].replace_all_uses_with(initial)
            body.inputs[i + 1].replace_all_uses_with(initial)
            erase_loop_carried(node, i)
            self.changed = True


def inline_if_branch(node: Node, index: int) -> None:
    """Replace a prim::If by the nodes of its branch `index`, its outputs by that branch's results."""
    block = node.blocks[index]
    for inner in list(block.nodes()):
        inner.move_before(node)
    for output, value in zip(node.outputs, block.outputs):
        output.replace_all_uses_with(value)
    node.destroy()


def _supported(node: Node) -> bool:
    """Nodes constant propagation may run: no mutable values in or out, no side effects, no blocks."""
    return not any(is_mutable_type(v.type) for v in (*node.inputs, *node.outputs)) and _foldable_kind(node)


def _foldable_kind(node: Node) -> bool:
    """Whether running the node at compile time gives what it would give at run time: no side effects, not
    random, no blocks, no global state read."""
    # an operator without inputs reads global state (aten::is_grad_enabled, aten::is_autocast_enabled): folding
    # it would bake the mode at compile time into the graph; prim::TupleConstruct() is still an empty tuple
    reads_global_state = not node.inputs and node.kind.ns != "prim"
    return (node.kind not in SKIP_KINDS and node.kind not in NONDETERMINISTIC and not node.blocks
            and not reads_global_state and not node_has_side_effects(node) and node.kind.ns != "onnx")


def _loop_will_not_run(node: Node) -> bool:
    trip_count, condition = node.inputs[0], node.inputs[1]
    trips = constant_value(trip_count.node) if trip_count.node.kind is prim.Constant else 1
    runs = constant_value(condition.node) if condition.node.kind is prim.Constant else True
    return not (runs and trips > 0)


def _equal_constants(a: Value, b: Value) -> bool:
    """Two prim::Constants with the same value and type (C++ EqualNode on constants)."""
    if a.node.kind is not prim.Constant or b.node.kind is not prim.Constant or a.type != b.type:
        return False
    x, y = constant_value(a.node), constant_value(b.node)
    if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
        return False
    return type(x) is type(y) and x == y

