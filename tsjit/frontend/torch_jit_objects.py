"""torch.jit's compiled objects inside tsjit programs: a submodule that torch.jit.script or torch.jit.trace made,
a function torch.jit.script compiled.

Their Python source is gone or was never TorchScript (a traced module's), but what torch.jit compiled can be
read back, each once (kept weakly: dropping the torch.jit object drops tsjit's):

- a function by its graph, calls inlined (`inlined_graph`, parsed as any IR text) and its schema (defaults
  included); it becomes a GraphFunction that script code calls and inlines like its own;
- a module by its archive (`save_to_buffer`), loaded as tsjit loads any TorchScript archive: its attributes,
  submodules, methods and classes come along. Loading lives above the frontend, so the api layer registers
  the loader (`MODULE_LOADER`). Modules are kept by their C++ module (`_c`), which is what a ScriptMethod
  knows of its owner (`method.owner`, equal to and hashed as `_c`); one met only through a method call
  (`converted_owner`, while tracing) is kept by its ScriptMethod objects, which its Python module holds in its
  `__dict__`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch

from tsjit.frontend.traced_function import TracedFunction
from tsjit.ir.parser import parse_ir
from tsjit.ir.schema import FunctionSchema, parse_schema

# set by tsjit.api.module: torch.jit module -> tsjit RecursiveScriptModule (loaded from its archive)
MODULE_LOADER: list[Callable[[torch.nn.Module], Any]] = []
_converted: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def is_torch_jit_module(value: Any) -> bool:
    """A module compiled by torch.jit (scripted, traced or loaded by torch.jit.load)."""
    return isinstance(value, torch.nn.Module) and isinstance(getattr(value, "_c", None), torch._C.ScriptModule)


def converted_function(function: torch._C.ScriptFunction) -> ConvertedFunction:
    """The tsjit GraphFunction of a torch.jit ScriptFunction."""
    found = _converted.get(function)
    if found is None:
        graph = parse_ir(str(function.inlined_graph))
        found = _converted[function] = ConvertedFunction(function.qualified_name, graph, parse_schema(
            str(function.schema)))
    return found


def converted_module(module: torch.nn.Module) -> Any:
    """The tsjit RecursiveScriptModule of a torch.jit module."""
    found = _converted.get(module._c)
    if found is None:
        found = _converted[module._c] = MODULE_LOADER[0](module)
    return found


def converted_owner(method: torch._C.ScriptMethod) -> Any:
    """The tsjit module of the torch.jit module whose method this is, converted once per module: the method's
    `owner` is a new Python object on each read, which a weak cache would drop at once, so a module whose Python
    module was not converted is kept by its method objects (each module's own, cached in its `__dict__`)."""
    owner = method.owner
    found = _converted.get(owner)
    if found is None:
        found = _converted.get(method)
    if found is None:
        siblings = [module for key, module in list(_converted.items())
                    if isinstance(key, torch._C.ScriptMethod) and key.owner == owner]
        found = _converted[method] = siblings[0] if siblings else MODULE_LOADER[0](owner)
    return found


class ConvertedFunction(TracedFunction):
    """A graph read back from torch.jit, with torch.jit's schema (argument names and defaults)."""

    def __init__(self, qualname: str, graph, schema: FunctionSchema):
        super().__init__(qualname, graph)
        self._torch_schema = schema

    @property
    def schema(self) -> FunctionSchema:
        return self._torch_schema
