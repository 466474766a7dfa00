"""The user-facing API, named like torch.jit: `script`, ScriptFunction, CompilationUnit, `ignore`, `unused`,
`export`, `annotate` (function.py). Modules and classes build on these (module.py, by the module frontend).
"""

from tsjit.api.function import CompilationUnit, ScriptFunction, annotate, export, ignore, script, unused

__all__ = ["CompilationUnit", "ScriptFunction", "annotate", "export", "ignore", "script", "unused"]
