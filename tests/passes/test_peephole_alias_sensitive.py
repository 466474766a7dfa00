"""peephole_alias_sensitive: the peephole rules freezing runs that ask AliasDb."""

from __future__ import annotations

import pytest
from pass_case import check_pass

from tsjit.passes.peephole_alias_sensitive import peephole_alias_sensitive

CHANGED = {
    "conv_dim_known": """
graph(%x : Float(1, 2, 5), %w : Float(3, 2, 2)):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %ones : int[] = prim::Constant[value=[1]]()
  %zeros : int[] = prim::Constant[value=[0]]()
  %y : Tensor = aten::conv1d(%x, %w, %none, %ones, %zeros, %ones, %one)
  %d : int = aten::dim(%y)
  return (%d)""",
    "add_int_zero_and_mul_one_removed": """
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %0, %1)
  %z : Tensor = aten::mul(%y, %1)
  %n : Tensor = aten::neg(%z)
  return (%n)""",
}
UNCHANGED = {
    "conv_dim_resized": """
graph(%x : Tensor, %w : Tensor, %s : int[]):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %ones : int[] = prim::Constant[value=[1, 1]]()
  %zeros : int[] = prim::Constant[value=[0, 0]]()
  %y : Tensor = aten::conv2d(%x, %w, %none, %ones, %zeros, %ones, %one)
  %r : Tensor = aten::resize_(%y, %s, %none)
  %d : int = aten::dim(%y)
  return (%d)""",
    "float_zero_or_output_alias": """
graph(%x : Tensor):
  %0 : float = prim::Constant[value=0.]()
  %1 : int = prim::Constant[value=1]()
  %i : int = prim::Constant[value=0]()
  %y : Tensor = aten::add(%x, %0, %1)
  %z : Tensor = aten::add(%x, %i, %1)
  return (%y, %z)""",
}


@pytest.mark.parametrize("name", CHANGED)
def test_rewrites(name):
    check_pass(peephole_alias_sensitive, CHANGED[name], absent=["aten::dim", "aten::add", "aten::mul"])


@pytest.mark.parametrize("name", UNCHANGED)
def test_what_aliasing_forbids_stays(name):
    check_pass(peephole_alias_sensitive, UNCHANGED[name], changed=False, run=False)
