"""fold_frozen_conv_add_or_sub: a constant added to (or subtracted from) a frozen convolution's result folds into
its bias."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.frozen_conv_folding import fold_frozen_conv_add_or_sub

CONV_THEN = """
graph(%x : Float(1, 3, 6, 6), %w : Tensor, %b : Tensor, %other : Tensor):
  %ones : int[] = prim::Constant[value=[1, 1]]()
  %zeros : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %ones, %zeros, %ones, %one)
  %z : Tensor = aten::OP(%y, %other, %one)
  return (%z)
"""


def constants() -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, 3, 3), "b": torch.randn(4), "other": torch.randn(1, 4, 1, 1)}


def test_add_and_sub_fold_into_the_bias():
    for op in ("add", "sub"):
        check_pass(fold_frozen_conv_add_or_sub, CONV_THEN.replace("OP", op), constants=constants(),
                   present=["aten::conv2d"], absent=[f"aten::{op}("])


def test_an_operand_known_only_at_run_time_stays():
    check_pass(fold_frozen_conv_add_or_sub, CONV_THEN.replace("OP", "add"), changed=False, present=["aten::add"],
               inputs=[(torch.randn(1, 3, 6, 6), *constants().values())])
