"""fold_frozen_conv_batchnorm: batch_norm of a convolution with constant weights folds into the convolution (the
whole-module tests against torch.jit.freeze are in test_frozen_conv_folding.py)."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.frozen_conv_folding import fold_frozen_conv_batchnorm

CONV_BN = """
graph(%x : Float(1, 3, 6, 6), %w : Tensor, %b : Tensor, %mean : Tensor, %var : Tensor, %gamma : Tensor,
      %beta : Tensor):
  %ones : int[] = prim::Constant[value=[1, 1]]()
  %zeros : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %ones, %zeros, %ones, %one)
  %z : Tensor = aten::batch_norm(%y, %gamma, %beta, %mean, %var, %false, %momentum, %eps, %false)
  return (%z)
"""


def weights() -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, 3, 3), "b": torch.randn(4), "mean": torch.randn(4), "var": torch.rand(4) + 0.5,
            "gamma": torch.randn(4), "beta": torch.randn(4)}


def test_batch_norm_folds_into_the_convolution():
    check_pass(fold_frozen_conv_batchnorm, CONV_BN, constants=weights(), present=["aten::conv2d"],
               absent=["aten::batch_norm"])


def test_weights_known_only_at_run_time_stay():
    check_pass(fold_frozen_conv_batchnorm, CONV_BN, changed=False, present=["aten::batch_norm"],
               inputs=[(torch.randn(1, 3, 6, 6), *weights().values())])
