"""fold_frozen_conv_mul_or_div: a frozen convolution's result multiplied (or divided) by a constant folds into
its weights and bias."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.frozen_conv_folding import fold_frozen_conv_mul_or_div

CONV_THEN = """
graph(%x : Float(1, 3, 6, 6), %w : Tensor, %b : Tensor, %other : Tensor):
  %ones : int[] = prim::Constant[value=[1, 1]]()
  %zeros : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %ones, %zeros, %ones, %one)
  %z : Tensor = aten::OP(%y, %other)
  return (%z)
"""


def constants() -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, 3, 3), "b": torch.randn(4), "other": torch.rand(1, 4, 1, 1) + 0.5}


def test_mul_and_div_fold_into_the_weights():
    for op in ("mul", "div"):
        check_pass(fold_frozen_conv_mul_or_div, CONV_THEN.replace("OP", op), constants=constants(),
                   present=["aten::conv2d"], absent=[f"aten::{op}("])


def test_an_operand_known_only_at_run_time_stays():
    check_pass(fold_frozen_conv_mul_or_div, CONV_THEN.replace("OP", "mul"), changed=False, present=["aten::mul"],
               inputs=[(torch.randn(1, 3, 6, 6), *constants().values())])
