"""return_one_result (MLIR preparation): several graph outputs are returned as one flat tuple of their leaves."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.mlir.prepare import return_one_result
from tsjit.runtime.run import run_graph


def test_a_tuple_result_and_a_written_input_become_one_flat_tuple():
    graph = check_pass(return_one_result, """
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  return (%t, %y)""", run=False, present=["(Tensor, Tensor, Tensor) = prim::TupleConstruct(%x, %y, %y)"])
    x = torch.randn(3)
    assert_same(run_graph(graph, x, optimize=False), (x, x + x, x + x))


def test_a_none_result_has_no_leaves():
    check_pass(return_one_result, """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  return (%none, %x)""", run=False, present=["(Tensor) = prim::TupleConstruct(%x)"])


def test_one_output_stays():
    check_pass(return_one_result, """
graph(%x : Tensor):
  return (%x)""", changed=False)
