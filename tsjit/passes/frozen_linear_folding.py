"""Folding an eval-mode batch_norm into the linear layer before it, in frozen graphs.

    %y : Tensor = aten::linear(%x, %w, %b)                          %y : Tensor = aten::linear(%x, %w', %b')
    %z : Tensor = aten::batch_norm(%y, %g, %beta, %mean, %var, False, ...)   ->   (%z replaced by %y)

batch_norm in eval mode is `y * scale + shift` per feature (scale = g / sqrt(var + eps)), so the linear's rows
are scaled and its bias shifted. As TorchScript's pass, this assumes batch_norm's channels are the linear's
output features (BatchNorm1d on an (N, C) input). It changes numerics slightly: optimize_numerics only.
"""

from __future__ import annotations

import torch

from tsjit import log
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.frozen_conv_folding import batchnorm_scale_shift
from tsjit.passes.frozen_folding_utils import all_parameters_constant, constant_input, set_constant_input


def fold_frozen_linear_batchnorm(graph: Graph) -> bool:
    """Fold every eval-mode batch_norm of a linear's output into the linear; returns whether any was."""
    changed = False
    for bn in [n for n in graph.all_nodes() if n.kind is aten.batch_norm]:
        linear = bn.inputs[0].node
        if linear.kind is not aten.linear or not _only_other_uses_are_dim(linear.output(), bn):
            continue
        if not (all_parameters_constant(linear) and all_parameters_constant(bn)):
            continue
        weight, bias = constant_input(linear, "weight"), constant_input(linear, "bias")
        mean, var = constant_input(bn, "running_mean"), constant_input(bn, "running_var")
        if (not isinstance(weight, torch.Tensor) or weight.dim() != 2 or not weight.is_floating_point()
                or not isinstance(mean, torch.Tensor) or not isinstance(var, torch.Tensor)
                or mean.numel() != weight.size(0) or constant_input(bn, "training") is not False
                or not log.opt_allowed()):
            continue
        log.graph_update("folding aten::batch_norm into aten::linear")
        scale, shift = batchnorm_scale_shift(bn, mean, var)
        set_constant_input(linear, "weight", weight * scale.unsqueeze(-1).to(weight.dtype), "_fused_bn")
        new_bias = ((torch.zeros_like(mean) if bias is None else bias) - mean) * scale + shift
        set_constant_input(linear, "bias", new_bias.to(weight.dtype), "_fused_bn")
        bn.output().replace_all_uses_with(linear.output())
        bn.destroy()
        changed = True
    if changed:
        eliminate_dead_code(graph)
    return changed


def _only_other_uses_are_dim(value: Value, bn: Node) -> bool:
    """Whether `bn` is the only user of the linear's values: BatchNorm1d's rank check reads only its rank,
    which folding keeps."""
    return all(use.user is bn or use.user.kind is aten.dim for use in value.uses)
