"""Modules as torch-dialect object graphs (seed: torch-mlir-architecture.md, "Modeling the torch.nn.Module object
(IValue) hierarchy"), and the small interface through which a module reaches the importer.

A module is given to `tsjit.mlir.compile` as a `ModuleValue`: its class's qualified name, its attribute slots in
class order (name, TorchScript type, value) and its methods (name -> Graph whose first input is `self`). Slot
values are tensors, ints, floats, bools, strs, None, lists/tuples of those, or other ModuleValues (submodules).
Anything can provide one through a `to_module_value()` method; tsjit's own ScriptModules are converted by
tsjit.mlir.script_objects.

Each class becomes a `torch.class_type` declaring its attributes and methods, each method a `func.func`, and
each instance a `torch.nn_module` whose slots hold the values, children before parents:

    torch.class_type @__torch__.M {
      torch.attr private "w" : !torch.tensor
      torch.method "forward", @__torch__.M.forward
    }
    func.func private @__torch__.M.forward(%self: !torch.nn.Module<"__torch__.M">, %x: ...) -> ...
    %w = torch.tensor.literal(dense<...> : tensor<3x4xf32>) : !torch.tensor<[3,4],f32>
    torch.nn_module {
      torch.slot "w", %w : !torch.tensor<[3,4],f32>
    } : !torch.nn.Module<"__torch__.M">

Every func is `private`: a `torch.method` must reference a private function; whether a method is public is said
by the `torch.method` op. Workaround (issue 7, item 4): every attribute is `private`, and so is every method
except the entry points.
torch-mlir's GlobalizeObjectGraph keeps public attributes as module initializers, which the backend contract
rejects ("unsupported by backend contract: module initializers"), and a public method other than the entry
point keeps its `!torch.tensor` signature and fails as "non-value tensor type". Nothing outside the compiled
program can observe attributes or other methods, so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.ir.graph import Graph
from tsjit.mlir.importer import ClassInfo, Emitter, FunctionSpec, import_function, method_symbol, mlir_string
from tsjit.mlir.types import mlir_type


@dataclass(frozen=True)
class Slot:
    """One attribute of a module instance."""

    name: str
    type: ts.Type
    value: Any


@dataclass(eq=False)
class ModuleValue:
    """A module instance: its class, its attribute slots in class order, and its methods."""

    qualified_name: str
    slots: list[Slot] = field(default_factory=list)
    methods: dict[str, Graph] = field(default_factory=dict)

    def slot(self, name: str) -> Slot:
        found = next((s for s in self.slots if s.name == name), None)
        if found is None:
            raise MLIRError(f"{self.qualified_name} has no attribute {name!r}")
        return found


def as_module_value(target) -> ModuleValue | None:
    """`target` as a ModuleValue if it is one or can make one (`to_module_value()`), else None."""
    if isinstance(target, ModuleValue):
        return target
    convert = getattr(target, "to_module_value", None)
    return convert() if callable(convert) else None


def instances(root: ModuleValue) -> Iterator[ModuleValue]:
    """Every module of the hierarchy, children before their parent; each must be reachable by one path."""
    seen: set[int] = set()
    yield from _post_order(root, seen)


def _post_order(module: ModuleValue, seen: set[int]) -> Iterator[ModuleValue]:
    if id(module) in seen:
        raise MLIRError(f"module {module.qualified_name} is reachable by two paths; torch-mlir's "
                        f"GlobalizeObjectGraph needs each module to have exactly one")
    seen.add(id(module))
    for slot in module.slots:
        if isinstance(slot.value, ModuleValue):
            yield from _post_order(slot.value, seen)
    yield module


def collect_classes(root: ModuleValue) -> dict[str, ClassInfo]:
    """One ClassInfo per class name; instances of one class must agree on their attributes."""
    classes: dict[str, ClassInfo] = {}
    for module in instances(root):
        attributes = {slot.name: slot.type for slot in module.slots}
        info = classes.setdefault(module.qualified_name, ClassInfo(module.qualified_name, attributes))
        if list(info.attributes.items()) != list(attributes.items()):
            raise MLIRError(f"two instances of {module.qualified_name} have different attributes")
        info.methods.update(module.methods)
    return classes


# ---- emission ----------------------------------------------------------------------------------------------
def import_object_graph(root: ModuleValue, entry_points: Sequence[str], value_semantics: bool,
                        type_bounds: Mapping[int, str] | None = None) -> str:
    """The object-graph text of a module hierarchy; `entry_points` are the root's public methods."""
    classes = collect_classes(root)
    parts = [_class_type(info, entry_points if name == root.qualified_name else ()) for name, info in
             classes.items()]
    for name, info in classes.items():
        for method, graph in info.methods.items():
            is_entry = name == root.qualified_name and method in entry_points
            # an entry point returns a tuple as several results, as in the function form: torch-mlir's
            # AdjustCallingConventions leaves a `func.return` of the elements in a func typed to return the tuple
            spec = FunctionSpec(method_symbol(name, method), value_semantics, private=True,
                                type_bounds=(type_bounds or {}) if is_entry else {}, flatten_tuple_return=is_entry)
            parts.append(import_function(graph, spec, classes))
    parts.append(_instances(root))
    return "\n".join(parts)


def _class_type(info: ClassInfo, entry_points: Sequence[str]) -> str:
    lines = [f"torch.class_type @{info.qualified_name} {{"]
    for name, type_ in info.attributes.items():
        lines.append(f"  torch.attr private {mlir_string(name)} : {mlir_type(type_, value_semantics=False)}")
    for method in info.methods:
        visibility = "" if method in entry_points else "private "
        lines.append(f"  torch.method {visibility}{mlir_string(method)}, @{method_symbol(info.qualified_name, method)}")
    return "\n".join(lines + ["}"])


def _instances(root: ModuleValue) -> str:
    """The nn_module ops of all instances; slot values are built first, as top-level ops."""
    emitter = Emitter()
    modules: dict[int, str] = {}
    for module in instances(root):
        slots = [_slot_value(emitter, slot, modules) for slot in module.slots]
        result = emitter.fresh() + " = " if module is not root else ""
        emitter.line(result + "torch.nn_module {")
        for slot, (name, type_) in zip(module.slots, slots):
            emitter.line(f"  torch.slot {mlir_string(slot.name)}, {name} : {type_}")
        emitter.line(f'}} : !torch.nn.Module<"{module.qualified_name}">')
        modules[id(module)] = result[:-3]
    return "\n".join(emitter.lines)


def _slot_value(emitter: Emitter, slot: Slot, modules: dict[int, str]) -> tuple[str, str]:
    if isinstance(slot.value, ModuleValue):
        return modules[id(slot.value)], f'!torch.nn.Module<"{slot.value.qualified_name}">'
    return emitter.constant(slot.value, slot.type, value_semantics=False)
