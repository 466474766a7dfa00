"""frozen_linear_transpose: a linear layer with a constant weight becomes a matmul by the transposed weight."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.frozen_linear_transpose import frozen_linear_transpose

LINEAR = """
graph(%x : Float(2, 4), %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)
"""


def test_linear_becomes_matmul_and_add():
    check_pass(frozen_linear_transpose, LINEAR, constants={"w": torch.randn(3, 4), "b": torch.randn(3)},
               present=["aten::matmul", "aten::add"], absent=["aten::linear"])


def test_a_weight_known_only_at_run_time_stays():
    check_pass(frozen_linear_transpose, LINEAR, changed=False, present=["aten::linear"],
               inputs=[(torch.randn(2, 4), torch.randn(3, 4), torch.randn(3))])
