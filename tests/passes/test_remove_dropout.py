"""remove_dropout: dropout in evaluation mode (train the constant False) returns its input."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.passes.remove_dropout import remove_dropout


def test_dropout_in_eval_is_removed():
    check_pass(remove_dropout, """
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::dropout(%x, %p, %f)
  %z : Tensor = aten::feature_dropout_(%y, %p, %f)
  return (%z)""", absent=["dropout"])


def test_dropout_in_training_or_unknown_mode_stays():
    check_pass(remove_dropout, """
graph(%x : Tensor, %train : bool):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::dropout(%x, %p, %t)
  %z : Tensor = aten::dropout(%y, %p, %train)
  return (%z)""", changed=False, present=["aten::dropout", "aten::dropout"])
