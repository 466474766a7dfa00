"""tsjit: TorchScript, written in Python.

The public API is named like torch.jit. Parts load on first use, so `import tsjit` stays cheap:

    tsjit.script(fn_or_module)                # Python source -> ScriptFunction / ScriptModule
    @tsjit.interface                          # a class of method declarations -> an interface type
    tsjit.trace(fn_or_module, example_inputs) # a recorded run -> ScriptFunction / ScriptModule
    tsjit.is_tracing() / tsjit.is_scripting() # also what torch.jit.is_tracing() answers inside tsjit.trace
    tsjit.save(module, path) / tsjit.load(path)
    tsjit.freeze(module) / tsjit.optimize_for_inference(module)   # attributes as constants, folded
    tsjit.parse_ir(text)                      # TorchScript graph text -> Graph
    tsjit.run_graph(graph, *args)             # run any graph with the interpreter
    tsjit.register_operator(schema, fn)       # open operator registration
    tsjit.fork(fn, *args) / tsjit.wait(fut)   # asynchronous calls (a torch.futures.Future: `.then` works)
    tsjit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)]) / tsjit.last_executed_optimized_graph()
    tsjit._jit_set_profiling_executor(False)  # new executors are the simple one (TSJIT_PROFILING_EXECUTOR=0)
    with tsjit.fuser("none"), tsjit.optimized_execution(False): ...   # the executor's switches

docs/torch_jit_api.md lists every public name of torch.jit and tsjit's status for it. TSJIT=0 (or PYTORCH_JIT=0)
at import makes script and trace return the Python objects they are given.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tsjit import garbage_collection
from tsjit.errors import TsjitError
from tsjit.ir.graph import Block, Graph, Node, Use, Value

if TYPE_CHECKING:  # what type checkers see of the names _LAZY loads on first use (py.typed: checked by mypy)
    from typing import Final  # noqa: F401

    from tsjit.api import (  # noqa: F401
        CompilationUnit,
        RecursiveScriptModule,
        ScriptFunction,
        ScriptModule,
        annotate,
        export,
        ignore,
        interface,
        script,
        script_if_tracing,
        unused,
    )
    from tsjit.api.archive import export_opnames, load, save  # noqa: F401
    from tsjit.api.execution import fuser, optimized_execution, strict_fusion  # noqa: F401
    from tsjit.api.freeze import freeze, optimize_for_inference, run_frozen_optimizations  # noqa: F401
    from tsjit.api.module import Attribute, script_method  # noqa: F401
    from tsjit.api.trace import TopLevelTracedModule, TracedModule, TracingCheckError, trace, trace_module  # noqa: F401
    from tsjit.api.type_checks import isinstance  # noqa: F401
    from tsjit.errors import Error, ScriptWarning  # noqa: F401
    from tsjit.frontend.torch_tracing_flags import is_scripting, is_tracing  # noqa: F401
    from tsjit.frontend.tracer import TracerWarning  # noqa: F401
    from tsjit.ir.parser import parse_ir  # noqa: F401
    from tsjit.ir.schema import parse_schema  # noqa: F401
    from tsjit.ops.registry import register_operator  # noqa: F401
    from tsjit.runtime.futures import Future, fork, wait  # noqa: F401
    from tsjit.runtime.run import run_graph  # noqa: F401

    __version__: str

# public name -> module that defines it (imported on first access)
_LAZY = {
    "script": "tsjit.api", "ScriptFunction": "tsjit.api", "ScriptModule": "tsjit.api",
    "RecursiveScriptModule": "tsjit.api", "CompilationUnit": "tsjit.api", "annotate": "tsjit.api",
    "ignore": "tsjit.api", "unused": "tsjit.api", "export": "tsjit.api", "interface": "tsjit.api",
    "script_if_tracing": "tsjit.api",
    "is_tracing": "tsjit.frontend.torch_tracing_flags", "is_scripting": "tsjit.frontend.torch_tracing_flags",
    "freeze": "tsjit.api.freeze", "optimize_for_inference": "tsjit.api.freeze", "Final": "typing",
    "trace": "tsjit.api.trace", "trace_module": "tsjit.api.trace", "TracingCheckError": "tsjit.api.trace",
    "TracedModule": "tsjit.api.trace", "TopLevelTracedModule": "tsjit.api.trace",
    "TracerWarning": "tsjit.frontend.tracer",
    "save": "tsjit.api.archive", "load": "tsjit.api.archive",
    "parse_ir": "tsjit.ir.parser",
    "parse_schema": "tsjit.ir.schema",
    "register_operator": "tsjit.ops.registry",
    "run_graph": "tsjit.runtime.run",
    "fork": "tsjit.runtime.futures", "wait": "tsjit.runtime.futures", "Future": "tsjit.runtime.futures",
    "Error": "tsjit.errors", "ScriptWarning": "tsjit.errors",
    "optimized_execution": "tsjit.api.execution", "fuser": "tsjit.api.execution",
    "strict_fusion": "tsjit.api.execution",
    "run_frozen_optimizations": "tsjit.api.freeze",
    "script_method": "tsjit.api.module", "Attribute": "tsjit.api.module", "isinstance": "tsjit.api.type_checks",
    "export_opnames": "tsjit.api.archive",
    **dict.fromkeys(["set_fusion_strategy", "last_executed_optimized_graph", "_jit_set_profiling_executor",
                     "_jit_set_profiling_mode", "_jit_set_num_profiled_runs"],
                    "tsjit.runtime.profiling_graph_executor"),
}

__all__ = ["Block", "Graph", "Node", "TsjitError", "Use", "Value", *_LAZY]

# The scripting frontend every `script` call needs loads with tsjit, as torch.jit's loads with torch: a program's
# first call pays for compiling it, not for importing the compiler. What only some programs need (modules and
# classes, tracing, archives, the printer, MLIR, the JIT-only builtin tables) still loads on first use.
with garbage_collection.paused():  # what importing makes lives on: no collection walks it halfway
    import tsjit.api  # noqa: E402, F401  (script, and the emitter, resolver and executor it runs)
    import tsjit.frontend.builtin_functions  # noqa: E402, F401  (every builtin call asks it; a cycle defers it there)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the installed package's version, as pip shows it
        from importlib import metadata  # deferred: read on first use, `import tsjit` stays cheap

        globals()[name] = metadata.version("tsjit")
        return globals()[name]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tsjit' has no attribute {name!r}")
    with garbage_collection.paused():  # the first use imports most of tsjit: objects that live on
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
