"""Specializing to undefined tensors: fold what the ArgumentSpec says about which inputs are None.

(seed: jit-overview.md "Required Passes": specializeUndef / specializeAutogradZero.) Gradient graphs take
undefined tensors (None at run time) for zero gradients; the executor's ArgumentSpec records which inputs are
defined, so each plan knows. An input is Zero (the spec saw None: `Tensor[Undefined]`, or an Optional input
specialized to `NoneType`) or Nonzero (a defined tensor); the states flow through the graph and fold:

    %n : NoneType (input)         uses read a None constant      (so `x is None` folds in the peephole pass)
    prim::AutogradAdd(%zero, %b)  ->  %b                         prim::AutogradAdd(%a, %zero)  ->  %a
    prim::AutogradAdd(%a, %b)     ->  aten::add(%a, %b, 1)       when both are defined tensors
    aten::__is__(%a, None)        ->  False / True               (`__isnot__` the opposite) for a known state
    prim::AutogradAnyNonZero(...), prim::AutogradAllZero(...), prim::AutogradAllNonZero(...) -> constants
    aten::_grad_sum_to_size(%a, None) -> %a
    prim::If(%decided) ...        ->  the nodes of the branch taken  (a guard of a gradient formula, folded above)

An ATen operator's tensor result is Nonzero (operators return defined tensors; the `*_backward` ones, whose output
mask may leave some results undefined, are the exception); states of If outputs are those both branches agree
on; everything else is Unknown. So in a backward graph (autodiff.py) whose input gradients the spec knows, every
guard `prim::If(prim::AutogradAnyNonZero(%grads))` folds and the sums become aten::add or disappear.
"""

from __future__ import annotations

import enum

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.passes.constant_propagation import inline_if_branch
from tsjit.passes.dead_code_elimination import eliminate_dead_code


class State(enum.Enum):
    ZERO = "zero"  # an undefined tensor: None at run time
    NONZERO = "nonzero"  # a defined tensor
    UNKNOWN = "unknown"


def specialize_autograd_zero(graph: Graph, remove_dead: bool = True) -> bool:
    """Fold undefined-tensor checks and gradient additions the input spec decides, then (unless `remove_dead` is
    False, for a caller that eliminates dead code itself once after several passes) remove what that left dead;
    whether anything changed."""
    specializer = _Specializer(graph)
    specializer.run()
    if specializer.changed and remove_dead:
        eliminate_dead_code(graph)
    return specializer.changed


class _Specializer:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.states: dict[Value, State] = {}
        self.changed = False

    def run(self) -> None:
        for value in self.graph.inputs:
            self.states[value] = self.input_state(value)
        self.visit_block(self.graph.block)

    def input_state(self, value: Value) -> State:
        """A `None`-typed input is Zero: make its uses read a constant, so the rest of the pipeline sees it."""
        type_ = value.type
        if isinstance(type_, T.NoneType):
            if value.uses and log.opt_allowed():
                log.graph_update(f"input %{value.debug_name} is None in this plan")
                with self.graph.insert_point_guard(next(self.graph.nodes(), self.graph.return_node)):
                    value.replace_all_uses_with(self.graph.insert_constant(None))
                self.changed = True
            return State.ZERO
        return _type_state(type_)

    def state(self, value: Value) -> State:
        known = self.states.get(value)
        if known is not None:
            return known
        return State.ZERO if isinstance(value.type, T.NoneType) else State.UNKNOWN

    def visit_block(self, block: Block) -> None:
        for node in list(block.nodes()):
            self.visit(node)

    def visit(self, node: Node) -> None:
        rule = _RULES.get(node.kind)
        if rule is not None and rule(self, node):
            return
        for inner in node.blocks:
            self.visit_block(inner)
        if node.kind is prim.If:
            then_block, else_block = node.blocks
            for output, a, b in zip(node.outputs, then_block.outputs, else_block.outputs):
                state = self.state(a)
                self.states[output] = state if state is self.state(b) else State.UNKNOWN
        elif node.kind is prim.AutogradZero:
            self.states[node.output()] = State.ZERO
        elif node.kind in (prim.unchecked_cast, prim.unchecked_unwrap_optional, aten._unwrap_optional):
            self.states[node.output()] = self.state(node.inputs[0])
        else:
            for output in node.outputs:
                self.states[output] = _output_state(node, output)

    # ---- rules: each returns whether it removed the node ------------------------------------------------------
    def autograd_add(self, node: Node) -> bool:
        a, b = node.inputs
        state_a, state_b = self.state(a), self.state(b)
        if state_a is State.ZERO:
            return self.replace(node, b, "undefined + b is b")
        if state_b is State.ZERO:
            return self.replace(node, a, "a + undefined is a")
        if state_a is State.NONZERO and state_b is State.NONZERO and log.opt_allowed():
            with self.graph.insert_point_guard(node):
                add = self.graph.insert(aten.add, [a, b])
            add.set_type(node.output().type)
            self.states[add] = State.NONZERO
            return self.replace(node, add, "both defined: prim::AutogradAdd is aten::add", checked=True)
        return False

    def is_none(self, node: Node) -> bool:
        value, other = node.inputs
        if self.state(other) is not State.ZERO:
            value, other = other, value
        state = self.state(value)
        if self.state(other) is not State.ZERO or state is State.UNKNOWN:
            return False
        result = (state is State.ZERO) == (node.kind is aten.__is__)
        return self.replace_by_constant(node, result)

    def any_non_zero(self, node: Node) -> bool:
        states = {self.state(v) for v in node.inputs}
        if State.UNKNOWN in states or not all(isinstance(v.type, T.TensorType | T.NoneType) for v in node.inputs):
            return False
        if node.kind is prim.AutogradAnyNonZero:
            result = State.NONZERO in states
        elif node.kind is prim.AutogradAllZero:
            result = states <= {State.ZERO}
        else:
            result = states <= {State.NONZERO}
        return self.replace_by_constant(node, result)

    def decided_if(self, node: Node) -> bool:
        """An If on a constant (a guard folded above) is replaced by its taken branch, whose nodes are visited."""
        condition = node.inputs[0]
        if condition.node.kind is not prim.Constant or not log.opt_allowed():
            return False
        taken = 0 if constant_value(condition.node) else 1
        inlined = list(node.blocks[taken].nodes())
        log.graph_update(f"the If on %{condition.debug_name} always takes block{taken}")
        inline_if_branch(node, taken)
        self.changed = True
        for inner in inlined:
            self.visit(inner)
        return True

    def grad_sum_to_size(self, node: Node) -> bool:
        if self.state(node.inputs[1]) is not State.ZERO or not isinstance(node.inputs[1].type, T.NoneType):
            return False
        return self.replace(node, node.inputs[0], "_grad_sum_to_size to None is the identity")

    # ---- rewriting ---------------------------------------------------------------------------------------------
    def replace(self, node: Node, value: Value, why: str, checked: bool = False) -> bool:
        if not checked and not log.opt_allowed():
            return False
        log.graph_update(f"{why}: uses of %{node.output().debug_name} read %{value.debug_name}")
        node.output().replace_all_uses_with(value)
        node.destroy()
        self.changed = True
        return True

    def replace_by_constant(self, node: Node, result: bool) -> bool:
        if not log.opt_allowed():
            return False
        with self.graph.insert_point_guard(node):
            constant = self.graph.insert_constant(result)
        return self.replace(node, constant, f"{node.kind} is {result}", checked=True)


def _output_state(node: Node, output: Value) -> State:
    """What a node's result is: what an operator returns as `Tensor` may still be None at run time (prim::grad,
    the output-masked results of `*_backward` operators), but other ATen operators return defined tensors."""
    if isinstance(output.type, T.NoneType):
        return State.ZERO
    if (node.kind.ns == "aten" and not node.kind.name.endswith("_backward")
            and isinstance(output.type, T.TensorType) and output.type.undefined is False):
        return State.NONZERO
    return State.UNKNOWN


def _type_state(type_: T.Type) -> State:
    """What an input's specialized type says: the spec typed undefined tensors `Tensor[Undefined]`."""
    if isinstance(type_, T.TensorType):
        if type_.undefined is None:
            return State.UNKNOWN
        return State.ZERO if type_.undefined else State.NONZERO
    return State.ZERO if isinstance(type_, T.NoneType) else State.UNKNOWN


_RULES = {
    prim.AutogradAdd: _Specializer.autograd_add, aten.__is__: _Specializer.is_none,
    aten.__isnot__: _Specializer.is_none, prim.AutogradAnyNonZero: _Specializer.any_non_zero,
    prim.AutogradAllZero: _Specializer.any_non_zero, prim.AutogradAllNonZero: _Specializer.any_non_zero,
    aten._grad_sum_to_size: _Specializer.grad_sum_to_size, prim.If: _Specializer.decided_if,
}
