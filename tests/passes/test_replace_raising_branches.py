"""replace_raising_branches (MLIR preparation): an If with one raising branch becomes an assert and the other
branch."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.mlir.prepare import replace_raising_branches
from tsjit.runtime.run import run_graph

ASSERT = """
graph(%x : Tensor, %n : int):
  %msg : str = prim::Constant[value="AssertionError: n must be positive"]()
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %ok : bool = aten::gt(%n, %zero)
   = prim::If(%ok)
    block0():
      -> ()
    block1():
       = prim::RaiseException(%msg, %none)
      -> ()
  %y : Tensor = aten::mul(%x, %n)
  return (%y)
"""


def test_raising_branch_becomes_an_assert():
    graph = check_pass(replace_raising_branches, ASSERT, inputs=[(torch.randn(2), 3)],
                       present=["aten::gt", "aten::Int", "aten::_assert_scalar", "aten::mul"],
                       absent=["prim::If", "prim::RaiseException"])
    with pytest.raises(Exception, match="n must be positive"):
        run_graph(graph, torch.randn(2), -1, optimize=False)


def test_raising_branch_is_dropped_without_checks():
    check_pass(replace_raising_branches, ASSERT, checks=False, inputs=[(torch.randn(2), 3)],
               absent=["aten::_assert_scalar", "prim::If", "prim::RaiseException"])


def test_an_if_without_a_raising_branch_stays():
    check_pass(replace_raising_branches, """
graph(%c : bool, %x : Tensor):
  %y : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      %z : Tensor = aten::neg(%x)
      -> (%z)
  return (%y)""", changed=False, present=["prim::If"])
