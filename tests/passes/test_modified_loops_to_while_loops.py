"""modified_loops_to_while_loops (the frontend's clean-up): a loop with both a trip count and a condition becomes a
while loop that counts itself."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.frontend.cleanup_passes import modified_loops_to_while_loops


def test_a_for_loop_with_a_break_becomes_a_while_loop():
    args = [(torch.randn(2), n, limit) for n in (0, 3, 6) for limit in (-1, 0, 2, 10)]
    check_pass(modified_loops_to_while_loops, """
graph(%x : Tensor, %n : int, %limit : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %i, %one)
      %go : bool = aten::lt(%i, %limit)
      -> (%go, %next)
  return (%r)""", inputs=args, present=["aten::gt(%n,", "prim::Loop(%", "aten::add(%", "aten::lt(%", "aten::__and__"])


def test_for_and_while_loops_stay():
    check_pass(modified_loops_to_while_loops, """
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::neg(%acc)
      -> (%true, %next)
  return (%r)""", changed=False)
