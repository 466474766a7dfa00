"""flatten_tuple_inputs (MLIR preparation): a tuple input becomes one input per element."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.ir.parser import parse_ir
from tsjit.mlir.prepare import flatten_tuple_inputs
from tsjit.runtime.run import run_graph

TUPLE_INPUT = """
graph(%x : Tensor, %h : (Tensor, (int, Tensor))):
  %a : Tensor, %rest : (int, Tensor) = prim::TupleUnpack(%h)
  %n : int, %b : Tensor = prim::TupleUnpack(%rest)
  %y : Tensor = aten::add(%x, %a, %n)
  %z : Tensor = aten::mul(%y, %b)
  return (%z)"""


def test_tuple_inputs_become_one_input_per_element():
    # the signature changes, so the results are compared here, with the arguments flattened the same way
    graph = check_pass(flatten_tuple_inputs, TUPLE_INPUT, run=False,
                       present=["graph(%x : Tensor,", "prim::TupleConstruct", "prim::TupleConstruct"])
    assert [str(v.type) for v in graph.inputs] == ["Tensor", "Tensor", "int", "Tensor"]
    x, a, b = torch.randn(3), torch.randn(3), torch.randn(3)
    assert_same(run_graph(graph, x, a, 2, b, optimize=False),
                run_graph(parse_ir(TUPLE_INPUT), x, (a, (2, b)), optimize=False))


def test_graphs_without_tuple_inputs_stay():
    check_pass(flatten_tuple_inputs, """
graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  return (%y)""", changed=False)
