"""Running prim::DifferentiableGraph: the forward graph f on detached inputs, joined to autograd by df.

(seed: jit-overview.md "DifferentiableGraphOp".) The node's Operation detaches its input tensors, runs f with
f's own GraphExecutor (f was optimized after the split, so it runs fused kernels) and hands the results to
autograd through a `torch.autograd.Function` whose backward runs df with df's own GraphExecutor (which also puts weight
gradients in the weights' layout: passes/transpose_weight_gradients.py). df's executor specializes on what
backward passes: gradients autograd has none for arrive as None, which the executor's spec
records as undefined tensors and specialize_autograd_zero folds away; and when backward runs with
`create_graph=True` on values that require grad, df's executor splits df again, so gradients of gradients work
the same way.

The autograd.Function's outputs are the node's own outputs only. The temporaries f computes for df (its
captured outputs past the real ones) are saved with `save_for_backward` beside the captured inputs and outputs,
but are not outputs of the Function: each output costs autograd several microseconds in forward and backward,
and a step of the LSTM cell captures about twenty. Their gradients matter only when a backward is itself
differentiated (`create_graph=True`): then backward first joins the temporaries to autograd through
`_Temporaries`, whose backward runs df with their gradients (the real outputs' given as undefined), so the
gradient reaching f's inputs is df's, as if they had been outputs (df is linear in the vjps).

The gradient is packed on the node as TorchScript's packGradient does: `Subgraph` is f, `ReverseSubgraph` is
df, with the index lists of autodiff.Gradient as int-list attributes; a node with only a Subgraph (IR text, a
graph from elsewhere) is differentiated when its Operation is built. Called with grad mode off or no input
requiring grad, the op runs f alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from tsjit.ir.graph import Graph, Node
from tsjit.ir.types import TensorType
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.transpose_weight_gradients import transpose_weight_gradients
from tsjit.runtime.autodiff import FALLBACK, Gradient, differentiate, unpack_gradient
from tsjit.runtime.graph_executor import ArgumentSpec, ExecutionPlan, GraphExecutor, optimize_graph
from tsjit.runtime.operations import Operation


def differentiable_graph_operation(node: Node) -> Operation:
    """The Operation of a prim::DifferentiableGraph node."""
    gradient = unpack_gradient(node)
    if gradient is None:
        subgraph = node.g("Subgraph").copy()
        while len(subgraph.outputs) > len(node.outputs):  # values a split graph kept for a backward not here
            subgraph.erase_output(len(subgraph.outputs) - 1)
        return DifferentiableGraphOp(differentiate(subgraph), optimize_f=True)
    op = DifferentiableGraphOp(gradient, optimize_f=False)
    return _SizeGuard(op, node.g(FALLBACK)) if node.has_attribute(FALLBACK) else op


class _SizeGuard:
    """A gradient split for known input sizes (autodiff.pack_gradient's `Fallback`): the call runs it when the
    inputs have those sizes, dtypes and devices, and, while grad mode is on, the inputs typed as not requiring grad
    do not (the profiled types are assumptions); other calls run the subgraph split for any sizes (built on the
    first such call)."""

    def __init__(self, op: DifferentiableGraphOp, subgraph: Graph):
        self.op, self.subgraph = op, subgraph
        self.general: DifferentiableGraphOp | None = None
        self.checks = [(i, _sizes(v.type), v.type.requires_grad is False, v.type.dtype, _device_check(v.type))
                       for i, v in enumerate(subgraph.inputs) if isinstance(v.type, TensorType)]

    def __call__(self, *inputs: Any) -> Any:
        grad = torch.is_grad_enabled()
        for i, sizes, no_grad, dtype, device in self.checks:
            value = inputs[i]
            if (type(value) not in _PLAIN_TENSORS or (value.shape != sizes if type(sizes) is tuple
                                                       else not _fits(value.shape, sizes))
                    or (no_grad and grad and value.requires_grad) or (dtype is not None and value.dtype != dtype)
                    or (device is not None and (not value.is_cpu if device is _CPU else value.device != device))):
                return self.fallback(inputs)
        return self.op(*inputs)

    def fallback(self, inputs: Sequence[Any]) -> Any:
        if self.general is None:
            self.general = DifferentiableGraphOp(differentiate(_any_sizes(self.subgraph)), optimize_f=True)
        return self.general(*inputs)


_PLAIN_TENSORS = frozenset({torch.Tensor, torch.nn.Parameter})
_CPU = torch.device("cpu")


def _device_check(type_: TensorType) -> torch.device | None:
    """The device a guard compares (_CPU itself for the CPU, tested by the cheaper `is_cpu`), None if unknown."""
    device = type_.device
    if device is None:
        return None
    return _CPU if device.type == "cpu" else device


def _sizes(type_: TensorType) -> tuple | list | None:
    """The sizes a guard compares: a tuple when all are known (compared whole), else a list with None for any."""
    sizes = type_.sizes
    if sizes is None:
        return None
    return tuple(sizes) if None not in sizes else list(sizes)


def _fits(shape: torch.Size, sizes: list | None) -> bool:
    return sizes is None or (len(shape) == len(sizes) and all(s is None or s == d for d, s in zip(shape, sizes)))


def _any_sizes(subgraph: Graph) -> Graph:
    """A copy of the subgraph whose tensor types keep dtype, device and rank only."""
    copy = subgraph.copy()
    values = [*copy.inputs, *(v for node in copy.all_nodes() for v in node.outputs)]
    for value in values:
        type_ = value.type
        if isinstance(type_, TensorType) and type_.sizes is not None:
            value.set_type(TensorType(dtype=type_.dtype, device=type_.device, sizes=(None,) * len(type_.sizes)))
    return copy


class DifferentiableGraphOp:
    """Calls run f and return the node's outputs (one value, or a tuple of several)."""

    def __init__(self, gradient: Gradient, optimize_f: bool):
        self.gradient = gradient
        self.f = GraphExecutor(gradient.f, optimize=optimize_f)
        self.df: GraphExecutor | None = None  # built on the first backward
        self.vjp_outputs = frozenset(gradient.df_input_vjps)
        self.no_vjp_outputs = [k for k in range(gradient.f_real_outputs) if k not in self.vjp_outputs]
        # f's and df's counts, read by every call (Graph.inputs and outputs build tuples)
        self.f_inputs, self.f_outputs, self.df_outputs = (len(gradient.f.inputs), len(gradient.f.outputs),
                                                          len(gradient.df.outputs))
        # the temporaries df reads and may differentiate: (f's output index, position among df's captured values)
        first, real = len(gradient.df_input_captured_inputs), gradient.f_real_outputs
        self.temporaries = [(i, first + k) for k, i in enumerate(gradient.df_input_captured_outputs)
                            if i >= real and i in self.vjp_outputs]

    def __call__(self, *inputs: Any) -> Any:
        real = self.gradient.f_real_outputs
        if torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in inputs):
            outputs = _apply(self, inputs)
        else:  # nothing to differentiate: f alone
            outputs = self.run_f(inputs)
        return outputs[0] if real == 1 else tuple(outputs[:real])

    def run_f(self, inputs: Sequence[Any]) -> list[Any]:
        detached = [value.detach() if isinstance(value, torch.Tensor) else value for value in inputs]
        return _as_list(self.f.run(detached), self.f_outputs)

    def run_df(self, inputs: list[Any]) -> list[Any]:
        if self.df is None:
            self.df = _BackwardExecutor(self.gradient.df)
        return _as_list(self.df.run(inputs), self.df_outputs)

    def input_gradients(self, df_inputs: list[Any]) -> list[Any]:
        """df run on its inputs: the gradient of each of f's inputs (None for those df has none for)."""
        input_grads: list[Any] = [None] * self.f_inputs
        for index, grad in zip(self.gradient.df_output_vjps, self.run_df(df_inputs)):
            input_grads[index] = grad
        return input_grads


class _BackwardExecutor(GraphExecutor):
    """df's executor: after the pipeline, its plans compute weight gradients in the weights' own layout
    (passes/transpose_weight_gradients.py), which autograd then keeps as they are."""

    def _build_plan(self, spec: ArgumentSpec) -> ExecutionPlan:
        graph = self._specialized_graph(spec)
        optimize_graph(graph)
        run_pass(transpose_weight_gradients, graph)
        return ExecutionPlan(graph)


def _as_list(result: Any, count: int) -> list[Any]:
    if count == 1:
        return [result]
    return list(result) if count else []


class _DifferentiableFunction(torch.autograd.Function):
    """f's real outputs as autograd outputs (tensors among them; other values pass through), df as their
    backward; what df reads saved for it (and f's inputs, when temporaries may have to be joined to them)."""

    @staticmethod
    def forward(ctx, op: DifferentiableGraphOp, *inputs: Any) -> tuple:  # type: ignore[override]
        gradient = op.gradient
        outputs = op.run_f(inputs)
        ctx.set_materialize_grads(False)
        ctx.op = op
        captured = [inputs[i] for i in gradient.df_input_captured_inputs]
        captured += [outputs[i] for i in gradient.df_input_captured_outputs]
        ctx.saved_positions = [k for k, v in enumerate(captured) if isinstance(v, torch.Tensor)]
        saved = [captured[k] for k in ctx.saved_positions]
        real = outputs[:gradient.f_real_outputs]
        # f's inputs, for _Temporaries: held as they are (autograd saving each costs every step), unless f returns
        # one of them, which would make a reference cycle through this node: then saved
        ctx.inputs, ctx.input_positions = (inputs if op.temporaries else ()), []
        if op.temporaries and any(v is u for v in real for u in inputs):
            ctx.input_positions = [k for k, v in enumerate(inputs) if isinstance(v, torch.Tensor)]
            ctx.inputs = [None if isinstance(v, torch.Tensor) else v for v in inputs]
        ctx.save_for_backward(*saved, *[inputs[k] for k in ctx.input_positions])
        ctx.captured = [None if isinstance(v, torch.Tensor) else v for v in captured]
        if op.no_vjp_outputs:
            ctx.mark_non_differentiable(*[real[k] for k in op.no_vjp_outputs if isinstance(real[k], torch.Tensor)])
        return tuple(real)

    @staticmethod
    def backward(ctx, *grads: Any) -> tuple:  # type: ignore[override]
        op: DifferentiableGraphOp = ctx.op
        gradient = op.gradient
        captured, saved = list(ctx.captured), ctx.saved_tensors
        for position, tensor in zip(ctx.saved_positions, saved):
            captured[position] = tensor
        if torch.is_grad_enabled() and op.temporaries:  # a backward to differentiate: see the module's doc
            inputs = list(ctx.inputs)
            for position, tensor in zip(ctx.input_positions, saved[len(ctx.saved_positions):]):
                inputs[position] = tensor
            joined = _Temporaries.apply(op, captured, *inputs)
            for (_, position), tensor in zip(op.temporaries, joined):
                captured[position] = tensor
        real = gradient.f_real_outputs
        vjps = [grads[i] if i < real else None for i in gradient.df_input_vjps]
        return (None, *op.input_gradients(vjps + captured))


# torch._C._FunctionBase.apply for _DifferentiableFunction: what Function.apply calls after its Python part
_C_APPLY = super(torch.autograd.Function, _DifferentiableFunction).apply
_unwrap_if_dead = torch._C._functorch.unwrap_if_dead


def _apply(op: DifferentiableGraphOp, inputs: Sequence[Any]) -> Any:
    """`_DifferentiableFunction.apply(op, *inputs)`. Outside functorch transforms, Function.apply only unwraps
    dead functorch wrappers (done here in the one pass over the inputs) and calls the C apply: its Python part
    (a generator over the arguments, the setup_context and transform checks) cost more per call than the
    autograd node itself."""
    if torch._C._are_functorch_transforms_active():
        return _DifferentiableFunction.apply(op, *inputs)
    return _C_APPLY(op, *[_unwrap_if_dead(v) if isinstance(v, torch.Tensor) else v for v in inputs])


class _Temporaries(torch.autograd.Function):
    """The captured temporaries (op.temporaries) joined to autograd as functions of f's inputs: their gradients
    reach the inputs through df."""

    @staticmethod
    def forward(ctx, op: DifferentiableGraphOp, captured: list, *inputs: Any) -> tuple:  # type: ignore[override]
        ctx.set_materialize_grads(False)
        ctx.op, ctx.captured = op, captured
        return tuple(captured[position].detach() for _, position in op.temporaries)

    @staticmethod
    def backward(ctx, *grads: Any) -> tuple:  # type: ignore[override]
        op: DifferentiableGraphOp = ctx.op
        by_output = {output: grad for (output, _), grad in zip(op.temporaries, grads)}
        vjps = [by_output.get(i) for i in op.gradient.df_input_vjps]
        return (None, None, *op.input_gradients(vjps + list(ctx.captured)))
