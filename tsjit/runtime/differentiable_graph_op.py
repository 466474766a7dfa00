"""Running prim::DifferentiableGraph: the forward graph f on detached inputs, joined to autograd by df.

(seed: jit-overview.md "DifferentiableGraphOp".) The node's Operation detaches its input tensors, runs f with
f's own GraphExecutor (f was optimized after the split, so it runs fused kernels) and hands the results to
autograd through a `torch.autograd.Function` whose backward runs df with df's own GraphExecutor. df's executor
specializes on what backward passes: gradients autograd has none for arrive as None, which the executor's spec
records as undefined tensors and specialize_autograd_zero folds away; and when backward runs with
`create_graph=True` on values that require grad, df's executor splits df again, so gradients of gradients work
the same way.

The autograd.Function's outputs are every tensor f returns: the node's own outputs, then the temporaries df
captures (their gradients, None unless a second differentiation reaches them, join the reverse pass where they
were computed). f's inputs and outputs that df reads are saved with `save_for_backward`, so in backward they are
connected to the autograd graph again.

The gradient is packed on the node as TorchScript's packGradient does: `Subgraph` is f, `ReverseSubgraph` is
df, with the index lists of autodiff.Gradient as int-list attributes; a node with only a Subgraph (IR text, a
graph from elsewhere) is differentiated when its Operation is built. Called with grad mode off or no input
requiring grad, the op runs f alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from tsjit.ir.graph import Node
from tsjit.runtime.autodiff import Gradient, differentiate, unpack_gradient
from tsjit.runtime.graph_executor import GraphExecutor
from tsjit.runtime.operations import Operation


def differentiable_graph_operation(node: Node) -> Operation:
    """The Operation of a prim::DifferentiableGraph node."""
    gradient = unpack_gradient(node)
    if gradient is not None:
        return DifferentiableGraphOp(gradient, optimize_f=False)
    subgraph = node.g("Subgraph").copy()
    while len(subgraph.outputs) > len(node.outputs):  # values a split graph kept for a backward that is not here
        subgraph.erase_output(len(subgraph.outputs) - 1)
    return DifferentiableGraphOp(differentiate(subgraph), optimize_f=True)


class DifferentiableGraphOp:
    """Calls run f and return the node's outputs (one value, or a tuple of several)."""

    def __init__(self, gradient: Gradient, optimize_f: bool):
        self.gradient = gradient
        self.f = GraphExecutor(gradient.f, optimize=optimize_f)
        self.df: GraphExecutor | None = None  # built on the first backward
        self.vjp_outputs = frozenset(gradient.df_input_vjps)

    def __call__(self, *inputs: Any) -> Any:
        real = self.gradient.f_real_outputs
        if torch.is_grad_enabled() and any(isinstance(v, torch.Tensor) and v.requires_grad for v in inputs):
            outputs = _DifferentiableFunction.apply(self, *inputs)
        else:  # nothing to differentiate: f alone
            outputs = self.run_f(inputs)
        return outputs[0] if real == 1 else tuple(outputs[:real])

    def run_f(self, inputs: Sequence[Any]) -> list[Any]:
        detached = [value.detach() if isinstance(value, torch.Tensor) else value for value in inputs]
        return _as_list(self.f.run(detached), len(self.gradient.f.outputs))

    def run_df(self, inputs: list[Any]) -> list[Any]:
        if self.df is None:
            self.df = GraphExecutor(self.gradient.df)
        return _as_list(self.df.run(inputs), len(self.gradient.df.outputs))


def _as_list(result: Any, count: int) -> list[Any]:
    if count == 1:
        return [result]
    return list(result) if count else []


class _DifferentiableFunction(torch.autograd.Function):
    """f's results as autograd outputs (tensors among them; other values pass through), df as their backward."""

    @staticmethod
    def forward(ctx, op: DifferentiableGraphOp, *inputs: Any) -> tuple:  # type: ignore[override]
        gradient = op.gradient
        outputs = op.run_f(inputs)
        ctx.set_materialize_grads(False)
        ctx.op, ctx.input_count = op, len(inputs)
        ctx.output_count = len(outputs)
        captured = [inputs[i] for i in gradient.df_input_captured_inputs]
        captured += [outputs[i] for i in gradient.df_input_captured_outputs]
        ctx.saved_positions = [k for k, v in enumerate(captured) if isinstance(v, torch.Tensor)]
        ctx.save_for_backward(*[captured[k] for k in ctx.saved_positions])
        ctx.captured = [None if isinstance(v, torch.Tensor) else v for v in captured]
        no_gradient = [v for k, v in enumerate(outputs) if isinstance(v, torch.Tensor) and k not in op.vjp_outputs]
        ctx.mark_non_differentiable(*no_gradient)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads: Any) -> tuple:  # type: ignore[override]
        op: DifferentiableGraphOp = ctx.op
        gradient = op.gradient
        captured = list(ctx.captured)
        for position, tensor in zip(ctx.saved_positions, ctx.saved_tensors):
            captured[position] = tensor
        inputs = [grads[i] for i in gradient.df_input_vjps] + captured
        input_grads: list[Any] = [None] * ctx.input_count
        for index, grad in zip(gradient.df_output_vjps, op.run_df(inputs)):
            input_grads[index] = grad
        return (None, *input_grads)
