"""fold_frozen_linear_batchnorm: batch_norm of a frozen linear layer folds into the linear's weight and bias."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.frozen_linear_folding import fold_frozen_linear_batchnorm

LINEAR_BN = """
graph(%x : Float(2, 3), %w : Tensor, %b : Tensor, %mean : Tensor, %var : Tensor, %gamma : Tensor,
      %beta : Tensor):
  %false : bool = prim::Constant[value=0]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::linear(%x, %w, %b)
  %z : Tensor = aten::batch_norm(%y, %gamma, %beta, %mean, %var, %false, %momentum, %eps, %false)
  return (%z)
"""


def weights() -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3), "b": torch.randn(4), "mean": torch.randn(4), "var": torch.rand(4) + 0.5,
            "gamma": torch.randn(4), "beta": torch.randn(4)}


def test_batch_norm_folds_into_the_linear():
    check_pass(fold_frozen_linear_batchnorm, LINEAR_BN, constants=weights(), present=["aten::linear"],
               absent=["aten::batch_norm"])


def test_weights_known_only_at_run_time_stay():
    check_pass(fold_frozen_linear_batchnorm, LINEAR_BN, changed=False, present=["aten::batch_norm"],
               inputs=[(torch.randn(2, 3), *weights().values())])
