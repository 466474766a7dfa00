"""literal_tensors_to_constants (MLIR preparation): aten::tensor of a list literal of number constants becomes a
constant (`torch.tensor([1.0, 2.0, 3.0]) + x`, e2e's list_literal_in_call, which no backend lowered)."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import literal_tensors_to_constants


def test_a_tensor_of_constant_numbers_becomes_a_constant():
    check_pass(literal_tensors_to_constants, """
graph(%x : Float(3)):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %long : int = prim::Constant[value=4]()
  %a : float = prim::Constant[value=1.]()
  %b : float = prim::Constant[value=2.5]()
  %l : float[] = prim::ListConstruct(%a, %b, %a)
  %t : Tensor = aten::tensor(%l, %none, %none, %false)
  %i : Tensor = aten::tensor(%l, %long, %none, %false)
  %y : Tensor = aten::add(%x, %t, %a)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %i)
  return (%r)""", inputs=[(torch.randn(3),)], absent=["aten::tensor"])


def test_a_tensor_of_values_known_only_at_run_time_stays():
    check_pass(literal_tensors_to_constants, """
graph(%n : float):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %l : float[] = prim::ListConstruct(%n, %n)
  %t : Tensor = aten::tensor(%l, %none, %none, %false)
  return (%t)""", changed=False, inputs=[(1.5,)])
