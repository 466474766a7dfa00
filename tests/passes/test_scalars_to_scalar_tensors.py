"""scalars_to_scalar_tensors (MLIR preparation): aten::tensor of a number becomes aten::scalar_tensor."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import scalars_to_scalar_tensors
from tsjit.runtime.run import run_graph


def test_number_tensors_become_scalar_tensors_of_the_same_dtype():
    graph = check_pass(scalars_to_scalar_tensors, """
graph(%n : int, %f : float, %b : bool):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %a : Tensor = aten::tensor(%n, %none, %none, %false)
  %c : Tensor = aten::tensor(%f, %none, %none, %false)
  %d : Tensor = aten::tensor(%b, %none, %none, %false)
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %c, %d)
  return (%t)""", present=["aten::scalar_tensor", "aten::scalar_tensor", "aten::scalar_tensor"],
                       absent=["aten::tensor"])
    results = run_graph(graph, 3, 1.5, True, optimize=False)
    assert [r.dtype for r in results] == [torch.int64, torch.float32, torch.bool]
