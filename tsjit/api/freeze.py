"""Freezing: `tsjit.freeze(module)` and `tsjit.optimize_for_inference(module)`, as torch.jit's.

    frozen = tsjit.freeze(tsjit.script(net).eval())
    frozen.graph      # parameters are tensor constants; conv + batch_norm folded; dropout gone
    frozen(x)         # the same results as net(x), faster

A frozen module is a new module (the original is untouched, though tensors are shared with it, as with
torch.jit's): its forward (and the preserved methods) have
every call inlined and every attribute that is never written replaced by a constant (tsjit.passes.freeze_module),
then the frozen-graph optimizations run (tsjit.passes.frozen_graph_optimizations). Attributes still read (a
buffer updated in forward, the preserved ones) stay; everything else, `training` included, is gone, which is
how optimize_for_inference tells a frozen module from one to freeze first.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tsjit.api.module import RecursiveScriptModule, ScriptModule, wrap_module
from tsjit.errors import TsjitError
from tsjit.frontend.concrete_module_type import claim_qualified_name
from tsjit.frontend.ir_emitter import GraphFunction
from tsjit.ir.graph import Graph
from tsjit.ir.objects import Object
from tsjit.passes.freeze_module import freeze_module
from tsjit.passes.frozen_graph_optimizations import optimize_for_inference_graph, optimize_frozen_graph
from tsjit.passes.pass_runner import run_pass

_NOT_SCRIPTED = ("{} expects a ScriptModule as input. Please use torch.jit.script or torch.jit.trace to script "
                 "your 'nn.Module'.")


class FrozenFunction(GraphFunction):
    """A method of a frozen module: a graph made by freezing, nothing to compile, the original's schema."""

    def __init__(self, qualname: str, graph: Graph, schema):
        super().__init__(qualname, None, None)
        self.graph = graph
        self._schema = schema
        self._state = "defined"


def freeze(mod: Any, preserved_attrs: list[str] | None = None, optimize_numerics: bool = True
           ) -> RecursiveScriptModule:
    """A frozen copy of the scripted module `mod` (in eval mode): `forward` and the methods named in
    `preserved_attrs` are kept, the attributes named there stay attributes; `optimize_numerics=False` skips
    the foldings that change numerics slightly (conv and linear with batch_norm, add, mul...)."""
    if not isinstance(mod, ScriptModule):
        raise TsjitError(_NOT_SCRIPTED.format("Freezing"))
    if mod.training:
        raise TsjitError("Freezing is currently only implemented for modules in eval mode. Please call .eval() on "
                         "your module before freezing.")
    preserved = list(preserved_attrs or [])
    methods = mod._c.type.methods
    for name in preserved:
        if name not in methods and not mod._c.type.has_attribute(name):
            raise TsjitError(f"Unknown name: {name}")
    kept = [name for name in ("forward", *preserved) if name in methods]
    frozen = _freeze_methods(mod._c, list(dict.fromkeys(kept)), preserved)
    run_frozen_optimizations(frozen, optimize_numerics, [name for name in kept if name != "forward"])
    return frozen


def _freeze_methods(root: Object, names: list[str], preserved: list[str]) -> RecursiveScriptModule:

    functions = {name: root.type.methods[name] for name in names}
    graphs = {name: function.graph.copy() for name, function in functions.items()}
    frozen_root = freeze_module(root, graphs, preserved, claim_qualified_name)
    for name, function in functions.items():
        schema = function.schema
        self_argument = dataclasses.replace(schema.arguments[0], type=frozen_root.type, real_type=frozen_root.type)
        frozen_schema = dataclasses.replace(schema, arguments=(self_argument, *schema.arguments[1:]))
        qualname = f"{frozen_root.type.qualified_name}.{name}"
        frozen_root.type.methods[name] = FrozenFunction(qualname, graphs[name], frozen_schema)
    return wrap_module(frozen_root, lambda class_type: ([], []))


def run_frozen_optimizations(mod: RecursiveScriptModule, optimize_numerics: bool = True,
                             preserved_methods: list[str] | None = None) -> None:
    """The optimizations of frozen graphs on `forward` and `preserved_methods`, in place."""
    for name in ("forward", *(preserved_methods or [])):
        function = mod._c.type.methods.get(name)
        if function is not None:
            run_pass(optimize_frozen_graph, function.graph, optimize_numerics)


def optimize_for_inference(mod: Any, other_methods: list[str] | None = None) -> RecursiveScriptModule:
    """`mod` frozen (if it is not yet) and then optimized for running on the CPU: frozen-graph optimizations
    plus the inference rewrites that need no MKLDNN (tsjit.passes.frozen_graph_optimizations)."""
    if not isinstance(mod, ScriptModule):
        raise TsjitError(_NOT_SCRIPTED.format("optimize_for_inference"))
    other_methods = list(other_methods or [])
    if mod._c.type.has_attribute("training"):
        mod = freeze(mod.eval(), preserved_attrs=other_methods)
    methods = mod._c.type.methods
    for name in ("forward", *other_methods):
        function = methods.get(name)
        if function is not None:
            graph = function.graph.copy()  # a new function: the old one may have run (and cached its plan)
            run_pass(optimize_for_inference_graph, graph)
            methods[name] = FrozenFunction(function.qualname, graph, function.schema)
    return mod
