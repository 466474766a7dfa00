"""flatten_tensor_list_inputs (MLIR preparation): a `Tensor[]` input becomes one input per example tensor."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.ir.parser import parse_ir
from tsjit.mlir.prepare import flatten_tensor_list_inputs
from tsjit.runtime.run import run_graph

LIST_INPUT = """
graph(%xs : Tensor[], %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %c : Tensor = aten::cat(%xs, %zero)
  %z : Tensor = aten::mul(%c, %y)
  return (%z)"""


def test_a_tensor_list_input_becomes_one_input_per_tensor():
    # the signature changes (a second run would expand other inputs), so the results are compared here
    graph = check_pass(flatten_tensor_list_inputs, LIST_INPUT, run=False, idempotent=False, lengths={0: 3},
                       present=["graph(%xs.0 : Tensor,", "prim::ListConstruct(%xs.0, %xs.1, %xs.2)"])
    assert [str(v.type) for v in graph.inputs] == ["Tensor"] * 4
    xs, y = [torch.randn(2) for _ in range(3)], torch.randn(6)
    assert_same(run_graph(graph, *xs, y, optimize=False), run_graph(parse_ir(LIST_INPUT), xs, y, optimize=False))


def test_without_lengths_nothing_changes():
    check_pass(flatten_tensor_list_inputs, LIST_INPUT, changed=False, lengths={})
