"""Symbolic differentiation: a graph split into its forward graph f and backward graph df (autodiff.cpp).

(seed: jit-overview.md "Derivate Splitting".) `differentiate(graph)` takes the subgraph of a
prim::DifferentiableGraph, whose nodes all have gradient formulas (symbolic_script.py), and returns a Gradient:

- f: the graph with each formula's forward spliced in place of its node, and f's outputs extended by the values
  df needs (the formulas' captured values that are not f's inputs);
- df: the reverse pass, node by node from the last: the formulas' backward graphs spliced in, gradients of a
  value used several times summed. df's inputs are the vjps (the gradients of f's outputs, real ones first,
  then the captured temporaries' so that a gradient of a gradient reaches them), then the captured inputs of f,
  then its captured outputs; its outputs are the gradients of f's inputs that may require grad.

    graph(%x, %y):                          f = graph(%x, %y):                   df = graph(%gz, %gt, %y, %t):
      %t = aten::tanh(%x)                     %t = aten::tanh(%x)                  (if any of %gz is defined)
      %z = aten::mul(%t, %y)         ->       %z = aten::mul(%t, %y)                 %a = aten::mul(%gz, %y) ...
      return (%z)                             return (%z, %t)                        %gx = ...%gt + %a... (tanh's)
                                                                                   return (%gx, %gy)

A gradient autograd passes as None is an undefined tensor (TorchScript's AutogradZero): each node's backward is
guarded by `prim::AutogradAnyNonZero` of its output gradients unless they are surely defined (a formula's
results are), and summed with `prim::AutogradAdd`; df's own executor specializes on which inputs are undefined,
and specialize_autograd_zero folds the guards and sums away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tsjit.errors import TsjitError
from tsjit.ir import types as T
from tsjit.ir.constants import NOT_CONSTANT, constant_of
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.inliner import insert_graph
from tsjit.runtime.symbolic_script import gradient_formula

_SIZE_KINDS = frozenset({aten.size, aten._size_if_not_equal})


@dataclass
class Gradient:
    """TorchScript's Gradient: f, df, and how their inputs and outputs pair up (indices, as in autodiff.h)."""

    f: Graph
    df: Graph
    f_real_outputs: int  # f's first outputs are the graph's; the rest are captured temporaries
    df_input_vjps: list[int] = field(default_factory=list)  # f outputs whose gradients are df's first inputs
    df_input_captured_inputs: list[int] = field(default_factory=list)  # f inputs df reads next
    df_input_captured_outputs: list[int] = field(default_factory=list)  # f outputs df reads last
    df_output_vjps: list[int] = field(default_factory=list)  # f inputs whose gradients df returns


@dataclass
class _Step:
    """One node of the forward pass to run backwards: the formula's backward reads the gradients of `outputs`
    and `captured`, and returns gradients for `inputs` (None for a chunk, whose gradient is written here)."""

    inputs: list[Value]
    outputs: list[Value]
    captured: list[Value]
    backward: Graph | None
    chunk_dim: int = 0


_INDEX_LISTS = ("df_input_vjps", "df_input_captured_inputs", "df_input_captured_outputs", "df_output_vjps")


FALLBACK = "Fallback"


def pack_gradient(node: Node, gradient: Gradient) -> None:
    """Store the gradient on its prim::DifferentiableGraph node (TorchScript's packGradient): `Subgraph` is f,
    `ReverseSubgraph` is df, the index lists are int-list attributes. When the subgraph's inputs have known
    sizes (the profiling executor's), f and df may hold what follows from them (the broadcast gradients' sizes
    folded): the subgraph itself is kept as `Fallback`, for inputs of other sizes (runtime/
    differentiable_graph_op.py guards on them)."""
    subgraph = node.g("Subgraph")
    if any(isinstance(v.type, T.TensorType) and v.type.sizes is not None and any(s is not None for s in v.type.sizes)
           for v in subgraph.inputs):
        node.g_(FALLBACK, subgraph)
    node.g_("Subgraph", gradient.f).g_("ReverseSubgraph", gradient.df).i_("f_real_outputs", gradient.f_real_outputs)
    for name in _INDEX_LISTS:
        node.is__(name, getattr(gradient, name))


def unpack_gradient(node: Node) -> Gradient | None:
    """The gradient packed on the node, or None when the node holds only its Subgraph (not yet split)."""
    if not node.has_attribute("ReverseSubgraph"):
        return None
    return Gradient(node.g("Subgraph"), node.g("ReverseSubgraph"), node.i("f_real_outputs"),
                    *(list(node.is_(name)) for name in _INDEX_LISTS))


def differentiate(graph: Graph) -> Gradient:
    """Split a copy of `graph` (a DifferentiableGraph's subgraph) into f and df."""
    f = graph.copy()
    requires_grad = {v for v in f.inputs if _may_require_grad(v.type)}
    steps = [step for node in list(f.nodes()) if (step := _forward_step(f, node, requires_grad)) is not None]
    return _Reverse(f, requires_grad, steps).build()


def _may_require_grad(type_: T.Type) -> bool:
    """An input whose type does not rule out requires_grad (a tensor of a floating or unknown dtype)."""
    if isinstance(type_, T.OptionalType):
        return _may_require_grad(type_.elem)
    return isinstance(type_, T.TensorType) and type_.requires_grad is not False and _differentiable_tensor(type_)


def _differentiable_tensor(type_: T.Type) -> bool:
    return isinstance(type_, T.TensorType) and (type_.dtype is None or type_.dtype.is_floating_point
                                                or type_.dtype.is_complex)


def _forward_step(f: Graph, node: Node, requires_grad: set[Value]) -> _Step | None:
    """Splice the formula's forward in place of `node` (when any input requires grad); the step to reverse."""
    if node.kind is prim.Constant or not any(v in requires_grad for v in node.inputs):
        return None
    if node.kind is prim.ConstantChunk:
        requires_grad.update(node.outputs)
        return _Step([node.input()], list(node.outputs), [], None, node.i("dim"))
    formula = gradient_formula(node)
    if formula is None:
        if any(_differentiable_tensor(v.type) for v in node.outputs):
            raise TsjitError(f"no gradient formula for a node that needs one:\n  {node!r}")
        return None
    with f.insert_point_guard(node):
        results = insert_graph(f, formula.forward, list(node.inputs))
    outputs, captured = results[:formula.num_outputs], results[formula.num_outputs:]
    inputs = list(node.inputs)
    for old, new in zip(node.outputs, outputs):
        if new not in inputs:  # a formula may return an input as it is (dropout when not training)
            new.copy_metadata(old)
        old.replace_all_uses_with(new)
    node.destroy()
    requires_grad.update(v for v in outputs if _differentiable_tensor(v.type))
    return _Step(inputs, outputs, captured, formula.backward)


class _Reverse:
    """Builds df from the steps, and f's extra outputs from what df captures."""

    def __init__(self, f: Graph, requires_grad: set[Value], steps: list[_Step]):
        self.f, self.requires_grad, self.steps = f, requires_grad, steps
        self.df = Graph()
        self.real_outputs = len(f.outputs)
        self.gradient = Gradient(f, self.df, self.real_outputs)
        self.grads: dict[Value, Value] = {}  # f value -> its gradient so far, in df
        self.defined: set[Value] = set()  # df values surely defined (formula results and sums of them)
        self.captured: dict[Value, Value] = {}  # f value -> df input
        self.vjp_count = 0
        self.captured_input_count = 0

    def build(self) -> Gradient:
        for index, value in enumerate(list(self.f.outputs)):
            if value in self.requires_grad:
                self.add_vjp(index, value)
        for value in {v for step in self.steps for v in step.captured}:
            if value not in self.f.inputs and value in self.requires_grad and value not in self.f.outputs:
                self.add_vjp(self.f_output_index(value), value)
        for step in reversed(self.steps):
            self.reverse(step)
        for index, value in enumerate(self.f.inputs):
            if value in self.requires_grad:
                self.df.register_output(self.grads.get(value) or self.zero())
                self.gradient.df_output_vjps.append(index)
        self.drop_unread_captures()
        self.sizes_last()
        return self.gradient

    def drop_unread_captures(self) -> None:
        """df's dead code removed, and the captured values it no longer reads dropped from its inputs: a formula
        captures what all of its gradients read (mm: both operands), but df computes only the gradients of inputs
        that may require grad."""
        eliminate_dead_code(self.df)
        gradient, df = self.gradient, self.df
        first = len(gradient.df_input_vjps)
        for name, start in (("df_input_captured_outputs", first + len(gradient.df_input_captured_inputs)),
                            ("df_input_captured_inputs", first)):
            indices: list[int] = getattr(gradient, name)
            for k in reversed(range(len(indices))):
                if not df.inputs[start + k].uses:
                    df.erase_input(start + k)
                    del indices[k]
        _drop_unread_temporaries(gradient)

    def sizes_last(self) -> None:
        """Sizes only df reads (`aten::size`, `aten::_size_if_not_equal` of them) are computed at the end of f:
        between two elementwise nodes, a formula's `self_size = self.size()` would keep the fuser from grouping
        them."""
        returned = self.f.return_node
        bookkeeping: set[Node] = set()
        for node in reversed(list(self.f.nodes())):
            if node.kind in _SIZE_KINDS and all(use.user is returned or use.user in bookkeeping
                                                for v in node.outputs for use in v.uses):
                bookkeeping.add(node)
        for node in [n for n in self.f.nodes() if n in bookkeeping]:
            node.move_before(returned)

    # ---- df's inputs: vjps first, then captured inputs, then captured outputs --------------------------------
    def add_vjp(self, output_index: int, value: Value) -> None:
        vjp = self.df.insert_input(self.vjp_count, "grad", T.TensorType.get())
        self.vjp_count += 1
        self.gradient.df_input_vjps.append(output_index)
        self.accumulate(value, vjp)

    def capture(self, value: Value) -> Value:
        if value in self.captured:
            return self.captured[value]
        if value.node.kind is prim.Constant:  # copied into df rather than passed through f's outputs
            with self.df.insert_point_guard(next(self.df.nodes(), self.df.return_node)):
                self.captured[value] = self.df.insert_node(self.df.create_clone(value.node, lambda v: v)).output()
            return self.captured[value]
        if value in self.f.inputs:
            position = self.vjp_count + self.captured_input_count
            self.captured_input_count += 1
            self.gradient.df_input_captured_inputs.append(self.f.inputs.index(value))
            captured = self.df.insert_input(position)
        else:
            self.gradient.df_input_captured_outputs.append(self.f_output_index(value))
            captured = self.df.add_input()
        self.captured[value] = captured.copy_metadata(value)
        return captured

    def f_output_index(self, value: Value) -> int:
        if value not in self.f.outputs:
            self.f.register_output(value)
        return self.f.outputs.index(value)

    # ---- the reverse pass ------------------------------------------------------------------------------------
    def reverse(self, step: _Step) -> None:
        grad_outputs = [self.grads.get(v) for v in step.outputs]
        if all(g is None for g in grad_outputs):
            return
        needed = [i for i, v in enumerate(step.inputs) if v in self.requires_grad]
        if not needed:
            return
        captured = [self.capture(v) for v in step.captured]
        if all(g is not None and g in self.defined for g in grad_outputs):
            grads = self.backward(step, grad_outputs, captured)
            self.defined.update(g for g in grads if g is not None and _is_tensor(g))
        else:
            grads = self.guarded_backward(step, grad_outputs, captured, needed)
        for i in needed:
            if grads[i] is not None and not isinstance(grads[i].type, T.NoneType):
                self.accumulate(step.inputs[i], grads[i])

    def backward(self, step: _Step, grad_outputs: list[Value | None], captured: list[Value]) -> list[Value | None]:
        """The gradients of the step's inputs, inserted at df's insertion point."""
        if step.backward is None:
            return [self.chunk_backward(step, grad_outputs, captured)]
        grads = [g if g is not None else self.zero() for g in grad_outputs]
        return list(insert_graph(self.df, step.backward, grads + captured))

    def guarded_backward(self, step: _Step, grad_outputs: list[Value | None], captured: list[Value],
                         needed: list[int]) -> list[Value | None]:
        """The backward inside `if AutogradAnyNonZero(grad outputs)` (else undefined gradients): TorchScript's
        lowered prim::GradOf."""
        present = [g for g in grad_outputs if g is not None]
        condition = self.df.insert(prim.AutogradAnyNonZero, present)
        if_node = self.df.insert_node(self.df.create(prim.If, [condition], 0))
        then_block, else_block = if_node.add_block(), if_node.add_block()
        with self.df.insert_point_guard(then_block):
            grads = self.backward(step, grad_outputs, captured)
        results: list[Value | None] = [None] * len(step.inputs)
        for i in needed:
            if grads[i] is None or isinstance(grads[i].type, T.NoneType):
                continue
            then_block.register_output(grads[i])
            with self.df.insert_point_guard(else_block):
                else_block.register_output(self.zero())
            results[i] = if_node.add_output().set_type(T.TensorType.get())
        return results

    def chunk_backward(self, step: _Step, grad_outputs: list[Value | None], captured: list[Value]) -> Value:
        """prim::ConstantChunk's gradient: the pieces' gradients concatenated, zeros for pieces without one."""
        pieces = [self.materialized(g, piece) for g, piece in zip(grad_outputs, step.outputs)]
        listed = self.df.insert_node(self.df.create(prim.ListConstruct, pieces, 1))
        listed.output().set_type(T.ListType(T.TensorType.get()))
        return self.df.insert(aten.cat, [listed.output(), step.chunk_dim])

    def materialized(self, grad: Value | None, piece: Value) -> Value:
        """`grad`, or zeros like the chunk's `piece` where `grad` is (or may be) undefined."""
        if grad is None:
            return self.zeros_like(piece)
        if grad in self.defined:
            return grad
        condition = self.df.insert(prim.AutogradAnyNonZero, [grad])
        if_node = self.df.insert_node(self.df.create(prim.If, [condition], 1))
        then_block, else_block = if_node.add_block(), if_node.add_block()
        then_block.register_output(grad)
        with self.df.insert_point_guard(else_block):
            else_block.register_output(self.zeros_like(piece))
        return if_node.output().set_type(T.TensorType.get())

    def zeros_like(self, piece: Value) -> Value:
        """Zeros of the piece's size, from its size alone when its type states dtype and device (capturing the
        piece itself would make it an output of f, which keeps the fuser from fusing its chunk)."""
        type_ = piece.type
        if not isinstance(type_, T.TensorType) or type_.dtype is None or type_.device is None:
            return self.df.insert(aten.zeros_like, [self.capture(piece)])
        with self.f.insert_point_guard(piece.node.next):
            size = self.f.insert(aten.size, [piece])
        return self.df.insert(aten.zeros, [self.capture(size)], {"dtype": type_.dtype, "device": type_.device})

    def accumulate(self, value: Value, grad: Value) -> None:
        """Add `grad` to the gradient of `value` (aten::add when both are surely defined)."""
        previous = self.grads.get(value)
        if previous is None:
            self.grads[value] = grad
            return
        if previous in self.defined and grad in self.defined:
            total = self.df.insert(aten.add, [previous, grad])
        else:
            total = self.df.insert(prim.AutogradAdd, [previous, grad])
            total.set_type(T.TensorType.get())
        if previous in self.defined or grad in self.defined:
            self.defined.add(total)
        self.grads[value] = total

    def zero(self) -> Value:
        return self.df.insert(prim.AutogradZero, [])


def fold_constant_captures(gradient: Gradient) -> None:
    """After f's optimization: the captured values f computes as constants (the broadcast gradients' sizes and
    the chunks' sizes, once the profiled shapes decided them, and `_size_if_not_equal` of such sizes, which
    peephole leaves to us because f returns them) copied into df, and dropped from f's outputs and
    df's inputs."""
    f, df = gradient.f, gradient.df
    start = len(gradient.df_input_vjps) + len(gradient.df_input_captured_inputs)
    folded = True
    while folded:  # a size list some `_size_if_not_equal` read is returned only once that one is folded
        folded = False
        for k in reversed(range(len(gradient.df_input_captured_outputs))):
            value = f.outputs[gradient.df_input_captured_outputs[k]]
            sizes = _returned_sizes(value)
            if value.node.kind is not prim.Constant and sizes is NOT_CONSTANT:
                continue
            with df.insert_point_guard(next(df.nodes(), df.return_node)):
                constant = df.insert_node(df.create_clone(value.node, lambda v: v)).output() \
                    if value.node.kind is prim.Constant else df.insert_constant(sizes, value.type)
            df.inputs[start + k].replace_all_uses_with(constant)
            df.erase_input(start + k)
            del gradient.df_input_captured_outputs[k]
            folded = True
        _drop_unread_temporaries(gradient)
        eliminate_dead_code(f)


def _returned_sizes(value: Value) -> Any:
    """What a size value that f only returns (for df, which reads it) surely is: the ints of a list of int
    constants, or the result of `_size_if_not_equal` of two such lists (None when equal, a broadcast gradient's
    size otherwise); NOT_CONSTANT when it is not known."""
    node = value.node
    if any(use.user is not node.owning_graph.return_node for use in value.uses):
        return NOT_CONSTANT
    if node.kind is aten._size_if_not_equal:
        sizes = [_constant_ints(v) for v in node.inputs]
        if NOT_CONSTANT in sizes:
            return NOT_CONSTANT
        return None if sizes[0] == sizes[1] else sizes[0]
    return _constant_ints(value)


def _constant_ints(value: Value) -> Any:
    """The ints of an int-list constant or of a prim::ListConstruct of int constants, or NOT_CONSTANT."""
    node = value.node
    if node.kind is not prim.ListConstruct and node.kind is not prim.Constant:
        return NOT_CONSTANT
    elements = constant_of(value) if node.kind is prim.Constant else [constant_of(v) for v in node.inputs]
    if not isinstance(elements, list):
        return NOT_CONSTANT
    return elements if all(type(e) is int for e in elements) else NOT_CONSTANT


def _drop_unread_temporaries(gradient: Gradient) -> None:
    """f's temporaries that df does not read dropped from f's outputs, with their vjps: only df's reading a
    temporary gives it a gradient, and each value f returns costs the DifferentiableGraphOp in every step."""
    read = set(gradient.df_input_captured_outputs)
    for index in reversed(range(gradient.f_real_outputs, len(gradient.f.outputs))):
        if index in read:
            continue
        if index in gradient.df_input_vjps:
            k = gradient.df_input_vjps.index(index)
            df = gradient.df
            with df.insert_point_guard(next(df.nodes(), df.return_node)):
                df.inputs[k].replace_all_uses_with(df.insert(prim.AutogradZero, []))
            df.erase_input(k)
            del gradient.df_input_vjps[k]
        gradient.f.erase_output(index)
        for name in ("df_input_vjps", "df_input_captured_outputs"):
            setattr(gradient, name, [i - (i > index) for i in getattr(gradient, name)])


def _is_tensor(value: Value) -> bool:
    return isinstance(value.type, T.TensorType)
