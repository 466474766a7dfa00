"""decompose_unknown_operators (MLIR preparation): operators the torch dialect lacks, replaced by their TorchScript
definitions, which compute what eager computes."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.decompositions import decompose_unknown_operators


def test_diff_and_a_loss_become_known_operators():
    x, y = torch.randn(4, 5), torch.randn(4, 5).sign()
    check_pass(decompose_unknown_operators, """
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %d : Tensor = aten::diff(%x, %one, %one, %none, %none)
  %l : Tensor = aten::soft_margin_loss(%x, %y, %one)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%d, %l)
  return (%t)""", inputs=[(x, y)], present=["aten::narrow", "aten::log1p"],
               absent=["aten::diff", "aten::soft_margin_loss"])


def test_a_multi_result_operator_is_unpacked():
    check_pass(decompose_unknown_operators, """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %s : Tensor, %m : Tensor = aten::std_mean(%x, %true)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%s, %m)
  return (%t)""", inputs=[(torch.randn(3, 4),)], present=["aten::std", "aten::mean"], absent=["aten::std_mean"])


def test_dropout_in_training_keeps_its_operator():
    check_pass(decompose_unknown_operators, """
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %train : bool = prim::Constant[value=1]()
  %y : Tensor = aten::feature_dropout(%x, %p, %train)
  return (%y)""", changed=False, run=False)


def test_other_overloads_stay():
    check_pass(decompose_unknown_operators, """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %false : bool = prim::Constant[value=0]()
  %v : Tensor, %i : Tensor = aten::median(%x, %zero, %false)
  return (%v)""", changed=False, inputs=[(torch.randn(5),)])
