"""`tsjit.save` and `tsjit.load`: TorchScript archives, as torch.jit.save and torch.jit.load write and read them;
`tsjit.export_opnames`: the operators a module's methods run, as torch.jit lists them for a mobile build.

serialization/ does the work (serializer.py, deserializer.py); what a user gets back from `load` is a
RecursiveScriptModule, which only the api builds, so the user-facing pair lives here and serialization never
imports the api.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

import torch

from tsjit.api.module import ScriptModule, wrap_module
from tsjit.errors import TsjitError
from tsjit.passes.inliner import inline_calls
from tsjit.serialization import deserializer, serializer
from tsjit.serialization.archive_reader import DEFAULT_LIMITS, ArchiveLimits


def save(module: Any, path_or_file: str | os.PathLike | BinaryIO, _extra_files: dict[str, Any] | None = None
         ) -> None:
    """Save a scripted module (or function) as a TorchScript archive; see serialization/serializer.py."""
    serializer.save(module, path_or_file, _extra_files)


def load(path_or_file: str | os.PathLike | BinaryIO | bytes, _extra_files: dict[str, Any] | None = None,
         map_location: str | torch.device | None = None, _limits: ArchiveLimits = DEFAULT_LIMITS,
         trusted: bool = True) -> Any:
    """Load a TorchScript archive written by tsjit.save or torch.jit.save; see serialization/deserializer.py.
    Pass `trusted=False` for an archive from a source you do not trust (serialization/untrusted.py, and the
    README's threat model)."""
    root, class_hooks = deserializer.load(path_or_file, _extra_files, map_location, _limits, trusted)
    return wrap_module(root, class_hooks)


def export_opnames(m: ScriptModule) -> list[str]:
    """The operators the module's methods run, calls inlined, by name and overload (`aten::add.Tensor`), sorted:
    torch.jit.export_opnames's list. Prim nodes are the interpreter's own instructions, not operators."""
    if not isinstance(m, ScriptModule):
        raise TsjitError(f"export_opnames expects a scripted module, got {type(m).__name__}")
    names = set()
    for function in m._c.type.methods.values():
        graph = function.graph.copy()
        inline_calls(graph)
        for node in graph.all_nodes():
            schema = node.maybe_schema() if node.kind.ns != "prim" else None
            if schema is not None:
                names.add(schema.operator_name)
    return sorted(names)
