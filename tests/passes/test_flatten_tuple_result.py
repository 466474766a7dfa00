"""flatten_tuple_result (MLIR preparation): a returned tuple holding tuples is returned flat."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.mlir.prepare import flatten_tuple_result
from tsjit.runtime.run import run_graph


def test_nested_tuple_result_is_returned_flat():
    graph = check_pass(flatten_tuple_result, """
graph(%x : Tensor, %pair : (Tensor, Tensor)):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  %inner : (Tensor, (Tensor, Tensor)) = prim::TupleConstruct(%y, %pair)
  %t : (Tensor, (Tensor, (Tensor, Tensor))) = prim::TupleConstruct(%x, %inner)
  return (%t)""", run=False, present=["prim::TupleUnpack(%pair)", "(Tensor, Tensor, Tensor, Tensor)"])
    x, a, b = torch.randn(3), torch.randn(3), torch.randn(3)
    assert_same(run_graph(graph, x, (a, b), optimize=False), (x, x + x, a, b))


def test_a_flat_tuple_result_stays():
    check_pass(flatten_tuple_result, """
graph(%x : Tensor):
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %x)
  return (%t)""", changed=False)
