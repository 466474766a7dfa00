"""The user-facing API, named like torch.jit: `script`, ScriptFunction, CompilationUnit, `ignore`, `unused`,
`export`, `script_if_tracing`, `annotate` (function.py); `interface` (frontend/interfaces.py). Modules build on
these (module.py, imported on first use: scripting a function needs none of the module frontend, and
`script(nn.Module)` imports it, which registers its rule).
"""

import importlib
from typing import Any

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

_LAZY = {"RecursiveScriptModule": "tsjit.api.module", "ScriptModule": "tsjit.api.module",
         "interface": "tsjit.frontend.interfaces"}

__all__ = ["CompilationUnit", "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "annotate", "export",
           "ignore", "interface", "script", "script_if_tracing", "unused"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tsjit.api' has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(module), name)
    return value
