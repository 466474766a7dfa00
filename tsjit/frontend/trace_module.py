"""Tracing nn.Modules: parameters and buffers read through prim::GetAttr, submodules kept as submodules.

(seed: jit-overview.md "Tracer": "If we are tracing a torch.nn.Module, the tracer also adds Parameters and
sub-Modules to the Module being constructed".) Every module of the hierarchy gets its own ClassType, as
torch.jit's TracedModule does (never shared, mangled when a name repeats). While a method traces, each
submodule's `forward` is wrapped: a call records into a fresh graph, which becomes a method of the submodule
(`forward`, then `forward1`, ... for later calls), and the caller's graph gets a prim::CallMethod:

    graph(%self : __torch__.M, %x : Float(2, 3, ...)):           graph(%self : __torch__.Sub, %x : Float(2, 3, ...)):
      %s : __torch__.Sub = prim::GetAttr[name="s"](%self)          %w : Tensor = prim::GetAttr[name="w"](%self)
      %3 : Tensor = prim::CallMethod[name="forward"](%s, %x)       %3 : Float(2, 3, ...) = aten::mul(%x, %w)
      return (%3)                                                  return (%3)

A submodule method's inputs are the tensors passed to the call (other arguments are baked in as constants, as
tracing bakes every Python value), then any traced tensor of an enclosing graph the body uses (torch.jit's
lambda lifting); its outputs are the tensors of the result, a tuple when there are several. Once the method is
traced, `fixup_calls` keeps only the outputs the callers use, as torch.jit's scope-block conversion does.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import Any

import torch

from tsjit.frontend.concrete_module_type import ConcreteModuleType, ModuleAttribute, iterable_kind_of
from tsjit.frontend.torch_jit_objects import converted_module, is_torch_jit_module
from tsjit.frontend.torch_tracing_flags import get_tracing_state
from tsjit.frontend.traced_function import TracedFunction
from tsjit.frontend.tracer import TraceFrame, TracingState, type_of_result
from tsjit.ir import types as T
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code


class ModuleFrame(TraceFrame):
    """The graph of one method of a traced module: its first input is the module (`%self`), and the
    module's parameters and buffers (and those of its submodules) are read with prim::GetAttr chains."""

    def __init__(self, graph: Graph, module: torch.nn.Module, class_type: T.ClassType,
                 parent: TraceFrame | None = None, scope: str | None = None):
        super().__init__(graph, parent, scope)
        self.module = module
        self.self_value = graph.add_input("self", class_type)
        self._paths: dict[int, str] | None = None
        self._module_paths: dict[int, str] | None = None
        self._attributes: dict[str, Value] = {}

    def owns_attribute(self, tensor: torch.Tensor) -> bool:
        return id(tensor) in self._tensor_paths()

    def attribute_value(self, tensor: torch.Tensor) -> Value | None:
        path = self._tensor_paths().get(id(tensor))
        return self.attribute(path) if path is not None else None

    def module_value(self, module: torch.nn.Module) -> Value | None:
        if self._module_paths is None:
            self._module_paths = {}
            for path, submodule in self.module.named_modules(remove_duplicate=False):
                self._module_paths.setdefault(id(submodule), path)
                if is_torch_jit_module(submodule):  # it runs as its tsjit module, which records the call
                    self._module_paths.setdefault(id(converted_module(submodule)), path)
        path = self._module_paths.get(id(module))
        return self.attribute(path) if path is not None else None

    def fork_frame(self) -> ModuleForkFrame:
        return ModuleForkFrame(self)

    def _tensor_paths(self) -> dict[int, str]:
        """`id(tensor)` -> `"sub.weight"` for every parameter and buffer under this frame's module."""
        if self._paths is None:
            named = [*self.module.named_parameters(remove_duplicate=False),
                     *self.module.named_buffers(remove_duplicate=False)]
            self._paths = {}
            for path, tensor in named:
                self._paths.setdefault(id(tensor), path)
        return self._paths

    def attribute(self, path: str) -> Value:
        """`%self.a.b` as a chain of prim::GetAttr nodes, each link made once per graph."""
        if not path:
            return self.self_value
        value = self._attributes.get(path)
        if value is None:
            owner_path, _, name = path.rpartition(".")
            owner = self.attribute(owner_path)
            node = self.graph.insert_node(self.graph.create(prim.GetAttr, [owner]).s_("name", name))
            value = node.output().set_type(owner.type.get_attribute(name))
            if name.isidentifier():
                value.set_debug_name(name)
            self._attributes[path] = value
        return value


class ModuleForkFrame(ModuleFrame):
    """The graph of a call forked from a module's method: it reads attributes and calls submodules of the same
    module, through a `self` input standing for the forking graph's (dropped if unused, as any capture)."""

    def __init__(self, parent: ModuleFrame):
        super().__init__(Graph(), parent.module, parent.self_value.type, parent, parent.scope)
        self.captures[self.self_value] = parent.self_value


class TracedModuleType:
    """What tracing builds for one module: its concrete type (and ClassType) and how many calls it had."""

    def __init__(self, module: torch.nn.Module, path: str, concrete_type: ConcreteModuleType):
        self.module = module
        self.path = path
        self.concrete_type = concrete_type
        self.calls = 0

    @property
    def class_type(self) -> T.ClassType:
        return self.concrete_type.jit_type

    def next_method_name(self) -> str:
        """`forward` for the first call, then `forward1`, `forward2`, ... (torch.jit's names)."""
        self.calls += 1
        return "forward" if self.calls == 1 else f"forward{self.calls - 1}"


def traced_module_types(root: torch.nn.Module) -> dict[torch.nn.Module, TracedModuleType]:
    """A TracedModuleType for every module of the hierarchy (a module registered twice appears once);
    modules already scripted keep their own types."""
    found: dict[torch.nn.Module, TracedModuleType] = {}
    _collect_types(root, "", found)
    return found


def _collect_types(module: torch.nn.Module, path: str, found: dict) -> ConcreteModuleType:
    if module in found:
        return found[module].concrete_type
    if is_torch_jit_module(module):  # called as the tsjit module it converts to (see ModuleCalls.installed)
        concrete_type = converted_module(module)._concrete_type
        found[module] = TracedModuleType(module, path, concrete_type)
        return concrete_type
    if is_script_module(module):
        found[module] = TracedModuleType(module, path, module._concrete_type)
        return module._concrete_type
    children = {name: _collect_types(child, f"{path}.{name}" if path else name, found)
                for name, child in module._modules.items() if child is not None}
    found[module] = TracedModuleType(module, path, traced_concrete_type(module, children))
    return found[module].concrete_type


def traced_concrete_type(module: torch.nn.Module, children: dict[str, ConcreteModuleType]) -> ConcreteModuleType:
    """The type of a traced module: parameters, buffers, `training` and submodules (torch.jit's TracedModule
    keeps no other attribute: the trace baked their values in)."""
    concrete = ConcreteModuleType(type(module))
    concrete.iterable_kind = iterable_kind_of(module)
    for table, is_parameter in ((module._parameters, True), (module._buffers, False)):
        for name, value in table.items():
            if value is not None:
                concrete.attributes[name] = ModuleAttribute(T.TensorType.get(), is_parameter, not is_parameter)
    concrete.attributes["training"] = ModuleAttribute(T.BoolType.get())
    concrete.modules = children
    concrete.build()
    concrete.methods_compiled = True
    return concrete


class ModuleCalls:
    """Turns the submodule calls of a module being traced into methods and prim::CallMethod nodes."""

    def __init__(self, types: dict[torch.nn.Module, TracedModuleType]):
        self.types = types
        self.call_sites: list[CallSite] = []

    @contextlib.contextmanager
    def installed(self, state: TracingState, root: torch.nn.Module) -> Iterator[None]:
        """Wrap the `forward` of every module under `root` (not `root` itself, nor scripted modules, whose
        calls record themselves) while the `with` runs; a module torch.jit compiled runs as the tsjit module it
        converts to, whose calls record themselves too."""
        saved = {module: module.__dict__.get("forward") for module in self.types
                 if module is not root and not is_script_module(module)}
        try:
            for module in saved:
                if is_torch_jit_module(module):
                    module.__dict__["forward"] = converted_module(module).forward
                else:
                    module.forward = self._wrapper(state, module, module.forward)
            yield
        finally:
            for module, forward in saved.items():
                _restore_forward(module, forward)

    def _wrapper(self, state: TracingState, module: torch.nn.Module, forward):
        def traced_forward(*args, **kwargs):
            if get_tracing_state() is not state or not self._callable_from(state.frame, module):
                return forward(*args, **kwargs)
            return self.call(state, module, forward, args, kwargs)

        return traced_forward

    def _callable_from(self, frame: TraceFrame, module: torch.nn.Module) -> bool:
        """Whether the module is below the module whose method is recording (so a GetAttr chain reaches it)."""
        if not isinstance(frame, ModuleFrame):
            return False
        return _relative_path(self.types[frame.module].path, self.types[module].path) is not None

    def call(self, state: TracingState, module: torch.nn.Module, forward, args: tuple, kwargs: dict) -> Any:
        """Trace `forward(*args, **kwargs)` into a new method of the submodule and record the call."""
        with state.recording():
            frame = ModuleFrame(Graph(), module, self.types[module].class_type, state.frame,
                                _scope(state.frame, self.types[module].path))
            tensors = _bind_arguments(frame, forward, args, kwargs)
        with state.in_frame(frame):
            result = forward(*args, **kwargs)
            with state.recording():
                captured = [t for t in frame.captures.values() if isinstance(t, torch.Tensor)]
                returned = _changed_tensors(state, frame, [*_tensors_in(result), *tensors, *captured])
                frame.graph.register_output(_pack(frame.graph, [state.value_of(t) for t in returned]))
        with state.recording():
            self._record_call(state, frame, tensors, returned)
        return result

    def _record_call(self, state: TracingState, frame: ModuleFrame, tensors: list, returned: list) -> None:
        """Make the traced graph a method of the submodule and call it from the caller's graph."""
        eliminate_dead_code(frame.graph)
        info, parent = self.types[frame.module], frame.parent
        name = info.next_method_name()
        info.class_type.methods[name] = _method(info, name, frame.graph)
        module_value = parent.attribute(_relative_path(self.types[parent.module].path, info.path))
        inputs = [module_value, *map(state.value_of, tensors), *map(state.outer_value, frame.captures.values())]
        node = state.create_node(prim.CallMethod, inputs).s_("name", name)
        self.call_sites.append(CallSite(node, frame.module, name, _bind_call_outputs(state, node, returned)))

    def fixup(self) -> None:
        """Keep only the method outputs callers use, outermost calls first (their graphs are final then)."""
        for site in reversed(self.call_sites):
            eliminate_dead_code(site.node.owning_graph)
            site.prune_outputs(self.types[site.module].class_type.methods[site.method])


class CallSite:
    """A prim::CallMethod a trace recorded, and the prim::TupleUnpack spreading its tuple result (if any)."""

    def __init__(self, node: Node, module: torch.nn.Module, method: str, unpack: Node | None):
        self.node = node
        self.module = module
        self.method = method
        self.unpack = unpack

    def prune_outputs(self, function) -> None:
        """Drop the results no caller reads from the method's tuple (a single one is returned as itself)."""
        if self.unpack is None:
            return
        alive = self.unpack.is_in_block_list()  # dead code elimination removes it when nothing is used
        used = [i for i, output in enumerate(self.unpack.outputs) if output.uses] if alive else []
        if alive and len(used) == len(self.unpack.outputs):
            return
        graph = function.graph
        kept = [graph.outputs[0].node.inputs[i] for i in used]
        graph.erase_output(0)
        graph.register_output(_pack(graph, kept))
        eliminate_dead_code(graph)
        self._rewire_caller(used, graph.outputs[0].type)
        function.refresh_schema()

    def _rewire_caller(self, used: list[int], returned: T.Type) -> None:
        call_output = self.node.outputs[0]
        call_output.set_type(T.unshaped_type(returned))
        if not used:
            if self.unpack.is_in_block_list():
                self.unpack.destroy()
            return
        if len(used) == 1:
            self.unpack.outputs[used[0]].replace_all_uses_with(call_output)
            self.unpack.destroy()
            return
        for offset in reversed(range(len(self.unpack.outputs))):
            if offset not in used:
                self.unpack.erase_output(offset)


def _bind_arguments(frame: ModuleFrame, forward, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """Give the method an input per tensor passed to the call, named after `forward`'s parameters."""
    tensors: list[torch.Tensor] = []
    for name, value in _named_arguments(forward, args, kwargs):
        for index, tensor in enumerate(_tensors_in(value)):
            if any(tensor is seen for seen in tensors):
                continue
            tensors.append(tensor)
            input_name = name if isinstance(value, torch.Tensor) else f"{name}_{index}"
            frame.bind(tensor, frame.graph.add_input(input_name, T.TensorType.create_from_tensor(tensor)))
    return tensors


def _named_arguments(forward, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    try:
        bound = inspect.signature(forward).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [(f"argument_{i}", v) for i, v in enumerate([*args, *kwargs.values()])]
    return list(bound.arguments.items())


def _tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for item in value for t in _tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors_in(item)]
    return []


def _changed_tensors(state: TracingState, frame: ModuleFrame, candidates: list[torch.Tensor]) -> list[torch.Tensor]:
    """The distinct tensors among the result and the inputs whose Values the method defines: what it returns
    (an input returned unchanged keeps the caller's Value; one changed in place is returned, as in torch.jit)."""
    changed: list[torch.Tensor] = []
    for tensor in candidates:
        if not any(tensor is seen for seen in changed) and state.value_of(tensor).node is not frame.graph.param_node:
            changed.append(tensor)
    return changed


def _pack(graph: Graph, values: list[Value]) -> Value:
    """One value returns itself, none returns None, several a tuple."""
    if len(values) == 1:
        return values[0]
    if not values:
        return graph.insert_constant(None)
    node = graph.insert_node(graph.create(prim.TupleConstruct, values))
    return node.output().set_type(T.TupleType(tuple(v.type for v in values)))


def _bind_call_outputs(state: TracingState, node: Node, tensors: list[torch.Tensor]) -> Node | None:
    """Bind the call's results in the caller: one tensor directly, several through a prim::TupleUnpack."""
    result_type = T.unshaped_type(type_of_result(tuple(tensors) if len(tensors) != 1 else tensors[0]))
    output = node.add_output(result_type if tensors else T.NoneType.get())
    if len(tensors) == 1:
        state.set_value(tensors[0], output)
    if len(tensors) < 2:
        return None
    state.unpack(output, tuple(tensors))
    return output.uses[0].user


def _method(info: TracedModuleType, name: str, graph: Graph):
    return TracedFunction(f"{info.class_type.qualified_name}.{name}", graph)


def _relative_path(owner: str, path: str) -> str | None:
    """`path` as seen from the module at `owner` (`"s.l"` from `"s"` is `"l"`), None if not below it."""
    if not owner:
        return path
    if path == owner:
        return ""
    return path[len(owner) + 1:] if path.startswith(owner + ".") else None


def _scope(parent: TraceFrame, path: str) -> str:
    """torch.jit's scope names: `__module.s/__module.s.l` for `s.l` called from `s`."""
    own = f"__module.{path}"
    return f"{parent.scope}/{own}" if parent.scope else own


def _restore_forward(module: torch.nn.Module, forward) -> None:
    if forward is None:
        del module.__dict__["forward"]
    else:
        module.__dict__["forward"] = forward


def is_script_module(module: torch.nn.Module) -> bool:
    """A tsjit.ScriptModule (recognized by its class attribute, so the frontend need not import the api)."""
    return getattr(type(module), "is_script_module", False)
