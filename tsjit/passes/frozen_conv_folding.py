"""Folding into convolutions of frozen graphs: batch_norm, add/sub and mul/div by constants after a conv.

    %y : Tensor = aten::conv2d(%x, %w, %b, ...)                    %y : Tensor = aten::conv2d(%x, %w', %b', ...)
    %z : Tensor = aten::batch_norm(%y, %g, %beta, %mean, %var, False, %m, %eps, %c)   ->   (%z replaced by %y)

With the conv's weight and bias and the other node's parameters all constants (a frozen module), the second
node is computed into new weights: batch_norm in eval mode scales each output channel by g / sqrt(var + eps)
and shifts it; `+ alpha * c` / `- alpha * c` shifts the bias; `* c` / `/ c` scales weight and bias. The conv's
output must have no other use, and an added or multiplied tensor must act per output channel (its sizes are 1
but for the channel dimension, or it has one element) without promoting the weight's dtype. These change
numerics slightly (rounding), so freezing runs them only with optimize_numerics.
"""

from __future__ import annotations

import torch

from tsjit import log
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import aten
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.frozen_folding_utils import (
    all_parameters_constant,
    constant_input,
    only_use_is,
    set_constant_input,
)

CONV_KINDS = frozenset({aten.conv1d, aten.conv2d, aten.conv3d})


def fold_frozen_conv_batchnorm(graph: Graph) -> bool:
    """Fold every eval-mode batch_norm of a conv's output into the conv; returns whether any was."""
    return _fold(graph, frozenset({aten.batch_norm}), _fold_batchnorm)


def fold_frozen_conv_add_or_sub(graph: Graph) -> bool:
    """Fold `conv(...) + c` and `conv(...) - c` (c a constant per channel) into the conv's bias."""
    return _fold(graph, frozenset({aten.add, aten.sub}), _fold_add_or_sub)


def fold_frozen_conv_mul_or_div(graph: Graph) -> bool:
    """Fold `conv(...) * c` and `conv(...) / c` (c a constant per channel) into the conv's weight and bias."""
    return _fold(graph, frozenset({aten.mul, aten.div}), _fold_mul_or_div)


def _fold(graph: Graph, kinds: frozenset, fold) -> bool:
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in kinds]:
        conv = node.inputs[0].node
        if conv.kind not in CONV_KINDS or not only_use_is(conv.output(), node):
            continue
        if not (all_parameters_constant(conv) and all_parameters_constant(node)):
            continue
        weight = constant_input(conv, "weight")
        if not isinstance(weight, torch.Tensor) or not weight.is_floating_point() or not log.opt_allowed():
            continue
        if fold(conv, node, weight):
            log.graph_update(f"folding {node.kind} into {conv.kind}")
            node.output().replace_all_uses_with(conv.output())
            node.destroy()
            changed = True
    if changed:
        eliminate_dead_code(graph)
    return changed


def _fold_batchnorm(conv: Node, bn: Node, weight: torch.Tensor) -> bool:
    if constant_input(bn, "training") is not False:
        return False
    mean, var = constant_input(bn, "running_mean"), constant_input(bn, "running_var")
    if not isinstance(mean, torch.Tensor) or not isinstance(var, torch.Tensor) or mean.numel() != weight.size(0):
        return False
    bias = constant_input(conv, "bias")
    scale, shift = batchnorm_scale_shift(bn, mean, var)
    new_weight = weight * scale.reshape([-1] + [1] * (weight.dim() - 1)).to(weight.dtype)
    new_bias = ((torch.zeros_like(mean) if bias is None else bias) - mean) * scale + shift
    set_constant_input(conv, "weight", new_weight, "_fused_bn")
    set_constant_input(conv, "bias", new_bias.to(weight.dtype), "_fused_bn")
    return True


def batchnorm_scale_shift(bn: Node, mean: torch.Tensor, var: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """An eval-mode batch_norm as `x * scale + shift` per channel, shift not counting the mean."""
    gamma, beta, eps = constant_input(bn, "weight"), constant_input(bn, "bias"), constant_input(bn, "eps")
    scale = torch.rsqrt(var + eps) * (torch.ones_like(var) if gamma is None else gamma)
    return scale, torch.zeros_like(mean) if beta is None else beta


def _per_channel(other: object, weight: torch.Tensor) -> torch.Tensor | None:
    """`other` (a number or tensor constant) as one value per output channel of `weight`, or None if it is
    not per channel or would change the result's dtype."""
    channels = weight.size(0)
    if isinstance(other, bool) or not isinstance(other, int | float | torch.Tensor):
        return None
    if not isinstance(other, torch.Tensor):
        return torch.full((channels,), float(other), dtype=weight.dtype, device=weight.device)
    if other.device != weight.device or torch.result_type(weight, other) != weight.dtype:
        return None
    if other.numel() == 1:
        return other.reshape(()).expand(channels).to(weight.dtype).clone()
    if other.dim() != weight.dim() or other.size(1) != channels or other.numel() != channels:
        return None
    return other.reshape(channels).to(weight.dtype)


def _fold_add_or_sub(conv: Node, node: Node, weight: torch.Tensor) -> bool:
    alpha = constant_input(node, "alpha")
    other = _per_channel(constant_input(node, "other"), weight)
    if other is None or isinstance(alpha, bool) or not isinstance(alpha, int | float):
        return False
    other = other * alpha
    bias = constant_input(conv, "bias")
    bias = torch.zeros_like(other) if bias is None else bias
    new_bias = bias + other if node.kind is aten.add else bias - other
    set_constant_input(conv, "bias", new_bias, "_fused_add" if node.kind is aten.add else "_fused_sub")
    return True


def _fold_mul_or_div(conv: Node, node: Node, weight: torch.Tensor) -> bool:
    if len(node.inputs) != 2:  # div with a rounding mode
        return False
    other = _per_channel(constant_input(node, "other"), weight)
    if other is None:
        return False
    op, suffix = (torch.mul, "_fused_mul") if node.kind is aten.mul else (torch.div, "_fused_div")
    set_constant_input(conv, "weight", op(weight, other.reshape([-1] + [1] * (weight.dim() - 1))), suffix)
    bias = constant_input(conv, "bias")
    if isinstance(bias, torch.Tensor):
        set_constant_input(conv, "bias", op(bias, other), suffix)
    return True
