"""The user-facing API, named like torch.jit: `script`, ScriptFunction, CompilationUnit, `ignore`, `unused`,
`export`, `script_if_tracing`, `annotate` (function.py); `interface` (frontend/interfaces.py). Modules build on
these (module.py).
"""

from tsjit.api.function import (
    CompilationUnit,
    ScriptFunction,
    annotate,
    export,
    ignore,
    script,
    script_if_tracing,
    unused,
)
from tsjit.api.module import RecursiveScriptModule, ScriptModule  # registers script(nn.Module)
from tsjit.frontend.interfaces import interface

__all__ = ["CompilationUnit", "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "annotate", "export",
           "ignore", "interface", "script", "script_if_tracing", "unused"]
