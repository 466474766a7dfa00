"""select_ifs_to_where (MLIR preparation): an If that forwards tensors of one static type becomes aten::where."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import select_ifs_to_where

SELECT = """
graph(%c : bool, %a : Float(2, 3), %b : TYPE):
  %y : Tensor = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%b)
  return (%y)
"""


def test_if_selecting_tensors_of_one_static_type_becomes_where():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    check_pass(select_ifs_to_where, SELECT.replace("TYPE", "Float(2, 3)"), inputs=[(True, a, b), (False, a, b)],
               present=["aten::Int(%c)", "aten::scalar_tensor", "aten::where"], absent=["prim::If"])


def test_if_selecting_tensors_of_different_shapes_stays():
    check_pass(select_ifs_to_where, SELECT.replace("TYPE", "Float(3)"), changed=False, present=["prim::If"])
