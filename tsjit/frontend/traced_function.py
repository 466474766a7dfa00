"""TracedFunction: a graph recorded by the tracer, as a TorchScript function or method.

The tracer of single calls (tsjit.api.trace) and of module hierarchies (trace_module.py, which makes every traced
submodule call a method) both make these, so it lives in the frontend beside GraphFunction.
"""

from __future__ import annotations

from tsjit.frontend.ir_emitter import GraphFunction
from tsjit.ir import types as T
from tsjit.ir.graph import Graph, Value
from tsjit.ir.schema import Argument, FunctionSchema


class TracedFunction(GraphFunction):
    """A recorded graph as a TorchScript function (or method): nothing to compile, and its schema read off the
    graph, so ScriptFunction, the inliner and calls from script treat it as any compiled function."""

    def __init__(self, qualname: str, graph: Graph):
        super().__init__(qualname, None, None)
        self.graph = graph
        self._state = "defined"

    @property
    def schema(self) -> FunctionSchema:
        arguments = [Argument(_argument_name(v, i), T.unshaped_type(v.type)) for i, v in enumerate(self.graph.inputs)]
        return FunctionSchema(self.name, "", arguments, [Argument("", T.unshaped_type(self.graph.outputs[0].type))])

    def refresh_schema(self) -> None:
        """The graph changed (its outputs were pruned): forget the optimized copy made from it."""
        self._optimized = None


def _argument_name(value: Value, index: int) -> str:
    if not value.has_debug_name():
        return f"argument_{index}"
    base, _, suffix = value.debug_name.rpartition(".")
    return base if base and suffix.isdigit() else value.debug_name
