"""Function: a named Graph and the graph executor that runs it (C++ GraphFunction; seed: "Method").

Methods are Functions whose graph takes the object as first input, listed in the object's ClassType
(`type.methods`) and bound to an object as a Method (tsjit.ir.objects). The user-facing classes (ScriptFunction,
ScriptModule, CompilationUnit) build on these in tsjit.api. `runtime_function` is the one place a compiled
function's runtime Function (and so its GraphExecutor) is built and cached.
"""

from __future__ import annotations

import threading
from typing import Any

from tsjit.ir.graph import Graph
from tsjit.runtime.futures import Future
from tsjit.runtime.profiling_graph_executor import make_graph_executor


class Function:
    """A named graph and its executor; calling it runs the graph, from any number of threads at once.

    The executor is the profiling executor unless the switches ask for the simple one
    (profiling_graph_executor.make_graph_executor); `remaining_depth` is a fallback graph's (see there)."""

    def __init__(self, name: str, graph: Graph, optimize: bool = True, remaining_depth: int | None = None):
        self.name = name
        self.qualname = name
        self.graph = graph
        self.executor = make_graph_executor(graph, optimize, remaining_depth)

    def __call__(self, *args: Any) -> Any:
        return self.executor.run(args)

    def run_async(self, *args: Any) -> Future:
        """Start a call on the thread pool (what `tsjit.fork(function, *args)` does)."""
        return self.executor.run_async(args)

    def __repr__(self) -> str:
        return f"<tsjit Function {self.qualname}>"


_runtime_lock = threading.Lock()


def runtime_function(function) -> Function:
    """The one runtime Function of a compiled function or method (a GraphFunction): its optimized graph, calls
    inlined, and the one GraphExecutor with its plan cache.

    Built on first use and kept on the compiled function (`_runtime`), so every way of calling it (a
    ScriptFunction, a module's method, `obj.method()` from Python, save's `__getstate__` and load's
    `__setstate__`) shares one executor. The graph is optimized outside the lock: compiling may call here again.
    The executor reads the optimized graph without copying it (as C++'s GraphFunction hands its optimized graph to
    its executor): every plan starts from a copy of its own, and callers inline from the same graph read-only.
    """
    found = function._runtime
    if found is not None:
        return found
    built = Function(function.qualname, function.optimized_graph())
    with _runtime_lock:
        if function._runtime is None:
            function._runtime = built
        return function._runtime
