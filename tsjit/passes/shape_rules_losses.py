"""Shape and dtype rules of the loss functions: each operator's result per element, or reduced to a number
(the table and its conventions are in shape_rules.py; these register into it)."""

from __future__ import annotations

from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.passes.shape_rules import (
    AbstractTensor,
    Decline,
    Sizes,
    broadcast,
    contiguous_rule,
    need,
    numel,
    rule,
    same_size,
    tensor,
)

_NONE, _MEAN, _SUM = 0, 1, 2  # the `reduction` argument's codes


def _reduced_loss(dtype: torch.dtype, per_element: Sizes, reduction: int) -> T.TensorType:
    """The losses per element with reduction 'none', else their mean or sum: a number."""
    need(reduction in (_NONE, _MEAN, _SUM), f"{reduction} is not a valid value for reduction")
    return tensor(dtype, per_element if reduction == _NONE else ())


def _pointwise_dtype(input: AbstractTensor, target: AbstractTensor) -> torch.dtype:
    """Losses of two floating tensors of one dtype; other dtypes fail or promote by operator: the meta kernel
    decides."""
    if not input.dtype.is_floating_point or input.dtype != target.dtype:
        raise Decline
    return input.dtype


@rule("aten::mse_loss", "aten::l1_loss")
def _pointwise_loss(self: AbstractTensor, target: AbstractTensor, reduction: int = _MEAN) -> T.TensorType:
    """Differences of `self` and `target`, which broadcast (eager warns where their sizes differ)."""
    return _reduced_loss(_pointwise_dtype(self, target), broadcast(self.sizes, target.sizes), reduction)


@rule("aten::kl_div")
def _kl_div(self: AbstractTensor, target: AbstractTensor, reduction: int = _MEAN, log_target: Any = False
            ) -> T.TensorType:
    return _pointwise_loss(self, target, reduction)


@rule("aten::poisson_nll_loss")
def _poisson_nll_loss(input: AbstractTensor, target: AbstractTensor, log_input: Any, full: Any, eps: Any,
                      reduction: int) -> T.TensorType:
    return _pointwise_loss(input, target, reduction)


def _class_targets(input: AbstractTensor, target: AbstractTensor) -> Sizes:
    """Class indices for (C,) or (N, C, *d) scores: a number, or (N, *d); the losses have the target's sizes."""
    if target.dtype is not torch.int64 or not input.dtype.is_floating_point:
        raise Decline  # other index dtypes fail with the kernel's own message
    rank = len(input.sizes)
    need(rank >= 1, "expected a 1-D or larger input")
    expected = () if rank == 1 else input.sizes[:1] + input.sizes[2:]
    need(len(target.sizes) == len(expected) and all(same_size(a, b) for a, b in zip(target.sizes, expected)),
         "the target's sizes do not fit the input")
    return target.sizes


def _class_weight(input: AbstractTensor, weight: AbstractTensor | None) -> None:
    if weight is not None:
        classes = input.sizes[0] if len(input.sizes) == 1 else input.sizes[1]
        need(weight.dtype == input.dtype and weight.sizes in ((classes,), (None,)), "weight must have C elements")


@contiguous_rule("aten::nll_loss_forward")
def _nll_loss_forward(self: AbstractTensor, target: AbstractTensor, weight: AbstractTensor | None, reduction: int,
                      ignore_index: int) -> list[T.TensorType]:
    """The losses and the total weight of the counted targets (a number)."""
    need(len(self.sizes) in (1, 2), "nll_loss expects a 1-D or 2-D input")
    per_element = _class_targets(self, target)
    _class_weight(self, weight)
    return [_reduced_loss(self.dtype, per_element, reduction), tensor(self.dtype, ())]


@rule("aten::cross_entropy_loss")
def _cross_entropy(self: AbstractTensor, target: AbstractTensor, weight: AbstractTensor | None = None,
                   reduction: int = _MEAN, ignore_index: int = -100, label_smoothing: Any = 0.0) -> T.TensorType:
    """Class indices (integer targets) or class probabilities (floating targets of the input's sizes)."""
    _class_weight(self, weight)
    if target.dtype.is_floating_point:
        need(target.dtype == self.dtype and target.sizes == self.sizes, "probabilities must fit the input")
        per_element = () if len(self.sizes) == 1 else self.sizes[:1] + self.sizes[2:]
        return _reduced_loss(self.dtype, per_element, reduction)
    return _reduced_loss(self.dtype, _class_targets(self, target), reduction)


@rule("aten::multi_margin_loss")
def _multi_margin_loss(self: AbstractTensor, target: AbstractTensor, p: Any = 1, margin: Any = 1,
                       weight: AbstractTensor | None = None, reduction: int = _MEAN) -> T.TensorType:
    """Scores (N, C) against N class indices: a loss per row; a vector or a number is one row, against a target
    of one element (whose sizes the loss takes)."""
    need(p in (1, 2), "only p == 1 and p == 2 supported")
    need(len(self.sizes) <= 2 and numel(self.sizes) != 0, "Expected non-empty vector or matrix")
    if weight is not None or target.dtype is not torch.int64 or not self.dtype.is_floating_point:
        raise Decline  # weights and other dtypes: the meta kernel says how they fail or not
    if len(self.sizes) == 2:
        return _reduced_loss(self.dtype, _class_targets(self, target), reduction)
    need(len(target.sizes) <= 1 and numel(target.sizes) in (1, None), "inconsistent target size")
    if not target.sizes and reduction == _NONE:
        raise Decline  # eager's loss is a number here, the meta kernel's a vector: the rule does not choose
    return _reduced_loss(self.dtype, target.sizes, reduction)
