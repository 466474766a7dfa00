"""inline_calls: calls whose callee graph is known are replaced by its nodes."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.api import CompilationUnit
from tsjit.passes.inliner import inline_calls
from tsjit.passes.pass_runner import run_pass
from tsjit.runtime.run import run_graph


def test_callees_are_inlined_transitively():
    cu = CompilationUnit("""
def inner(x):
    return x * 2
def middle(x):
    return inner(x) + 1
def outer(x):
    return middle(x).relu()
""")
    # IR text cannot name a function constant, so this graph comes from the frontend
    graph = cu.outer.graph.copy()
    assert run_pass(inline_calls, graph) and not run_pass(inline_calls, graph)
    graph.lint()
    assert [str(node.kind) for node in graph.nodes() if str(node.kind) != "prim::Constant"] == [
        "aten::mul", "aten::add", "aten::relu"]
    x = torch.randn(3)
    assert_same(run_graph(graph, x, optimize=False), run_graph(cu.outer.graph, x, optimize=False))


def test_a_graph_without_known_callees_stays():
    check_pass(inline_calls, """
graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)""", changed=False)
