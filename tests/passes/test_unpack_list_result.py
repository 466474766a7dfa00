"""unpack_list_result (MLIR preparation): a returned `Tensor[]` of known length is returned as a tuple."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.mlir.prepare import unpack_list_result
from tsjit.runtime.run import run_graph

LIST_RESULT = """
graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %parts : Tensor[] = aten::split(%x, %two, %zero)
  return (%parts)"""


def test_a_list_result_of_known_length_becomes_a_tuple():
    graph = check_pass(unpack_list_result, LIST_RESULT, run=False, length=3,
                       present=["prim::ListUnpack(%parts)", "(Tensor, Tensor, Tensor) = prim::TupleConstruct"])
    x = torch.randn(6)
    assert_same(run_graph(graph, x, optimize=False), tuple(torch.split(x, 2)))


def test_a_list_of_unknown_length_stays():
    check_pass(unpack_list_result, LIST_RESULT, changed=False, length=None)
