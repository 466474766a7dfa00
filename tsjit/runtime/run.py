"""run_graph: run any Graph on Python values, e.g. one read with `parse_ir`.

    graph = parse_ir('''
        graph(%x : Tensor):
          %y : Tensor = aten::relu(%x)
          return (%y)''')
    run_graph(graph, torch.randn(3))      # the relu of the input
"""

from __future__ import annotations

from typing import Any

from tsjit.ir.graph import Graph
from tsjit.runtime.function import Function


def run_graph(graph: Graph, *args: Any, optimize: bool = True) -> Any:
    """The graph's result for `args`: its one output, a tuple of several, or None for none.

    The graph is specialized and compiled anew on each call and is not modified; keep a Function to reuse the
    compiled plans.
    """
    return Function("graph", graph, optimize)(*args)
