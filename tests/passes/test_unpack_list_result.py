"""unpack_list_result (MLIR preparation): returned lists of known length are returned as their elements."""

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
    graph = check_pass(unpack_list_result, LIST_RESULT, run=False, lengths=[3],
                       present=["prim::ListUnpack(%parts)", "(Tensor, Tensor, Tensor) = prim::TupleConstruct"])
    x = torch.randn(6)
    assert_same(run_graph(graph, x, optimize=False), tuple(torch.split(x, 2)))


def test_a_list_of_unknown_length_stays():
    check_pass(unpack_list_result, LIST_RESULT, changed=False, lengths=[None])


def test_lists_in_a_returned_tuple_become_its_elements():
    graph = check_pass(unpack_list_result, """
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %sizes : int[] = prim::ListConstruct(%one, %two)
  %copy : int[] = aten::list(%sizes)
  %t : (Tensor, int[]) = prim::TupleConstruct(%x, %copy)
  return (%t)""", run=False, lengths=[2], present=["(Tensor, int, int) = prim::TupleConstruct(%x, %one, %two)"])
    x = torch.randn(2)
    assert_same(run_graph(graph, x, optimize=False), (x, 1, 2))


def test_a_list_written_after_it_is_built_is_unpacked():
    graph = check_pass(unpack_list_result, """
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %sizes : int[] = prim::ListConstruct(%one)
  %grown : int[] = aten::append(%sizes, %one)
  %t : (Tensor, int[]) = prim::TupleConstruct(%x, %sizes)
  return (%t)""", run=False, lengths=[2],
                       present=["prim::ListUnpack(%sizes)", "(Tensor, int, int) = prim::TupleConstruct"])
    x = torch.randn(2)
    assert_same(run_graph(graph, x, optimize=False), (x, 1, 1))
