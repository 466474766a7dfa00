"""tsjit's scripted modules as object graphs: a RecursiveScriptModule (or its runtime Object) -> `ModuleValue`.

    scripted = tsjit.script(net)
    lowered = tsjit.mlir.compile(scripted, [torch.randn(2, 4)], output_type="linalg-on-tensors")

`tsjit.mlir.compile` calls `script_module_value` for any target that is a tsjit ScriptModule. The module's state
lives in a `tsjit.ir.objects.Object` (`scripted._c`), whose ClassType lists the attributes in slot order
(parameters, buffers, plain attributes and submodules alike) and holds the compiled methods. Each Object becomes
a ModuleValue (tsjit/mlir/objects.py) of the same class name, its submodules' Objects becoming ModuleValues in
turn, so the importer writes the `torch.class_type` / `torch.nn_module` / `torch.slot` form that torch-mlir's
`torchscript-module-to-torch-backend-pipeline` globalizes (interop-facts D4/D5).

What is carried over, and why:

- Methods: by default the entry method alone, with every method and function call inlined (as
  `inlined_graph`); submodules keep their state as slots, read through `prim::GetAttr` chains. With
  `inline_methods=False`, the methods the entry method reaches through `prim::CallMethod` (transitively) are
  kept as methods of their classes and torch-mlir's pipeline inlines them after globalizing the object graph;
  function calls are inlined either way (`prim::CallFunction` has no torch-dialect form). Inlining on our side
  is the default because torch-mlir stumbles at method boundaries that tsjit's shape refinement types more
  precisely inside than at the call (a method returning a tuple, `MultiheadAttention.merge_masks`, leaves a
  `func.return` of two values in a function returning one). A method never called (an exported helper using
  strings, say) is left out in both modes, so it cannot stop the compilation.
- Attributes: only those the carried methods read or write (`prim::GetAttr` / `prim::SetAttr`), in class
  order. The others (`training` of modules whose code never looks, `_is_full_backward_hook`, dict or string
  attributes of Python-side bookkeeping) would become global slots; a dict global fails the backend contract
  ("unsupported by backend contract: type '!torch.dict<...>'") although nothing reads it.
- Attributes no carried method writes are specialized to their values where every instance of the class
  agrees (`specialize_attributes`), as freezing does for the attributes it can: an int, float, bool, str or None
  becomes a constant in the methods (`self.training` decides the branch of BatchNorm and Dropout at compile
  time, where its in-place running-statistics update would otherwise keep the program from value semantics),
  and an `Optional[Tensor]` attribute holding a tensor is declared a `Tensor` (`Conv2d.bias`): an optional
  non-value tensor cannot become an optional value tensor in the torch dialect, a tensor can. So does a list of
  ints, floats or bools that no operator writes (`Conv2d._reversed_padding_repeated_twice`, the pads of
  `padding_mode="reflect"`): MLIR preparation decides from constants which operators to decompose.
- Values: tensors are detached (the compiled program computes no gradients), everything else is passed as is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import torch

from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import prim
from tsjit.mlir.objects import ModuleValue, Slot, instances
from tsjit.passes import inliner
from tsjit.passes.inline_fork_wait import inline_fork_wait
from tsjit.passes.pass_runner import run_pass


def is_script_module(target) -> bool:
    """Whether `target` is a tsjit scripted module (or its runtime object): something with a module ClassType."""
    return _module_object(target) is not None


def script_module_value(target, method: str = "forward", inline_methods: bool = True) -> ModuleValue:
    """The ModuleValue of a scripted module, with the methods `method` reaches and the attributes they use;
    with `inline_methods`, the entry method alone, every call inlined into it."""
    obj = _module_object(target)
    if obj is None:
        raise MLIRError(f"{type(target).__name__} is not a tsjit ScriptModule")
    if method not in obj.type.methods:
        raise MLIRError(f"{obj.type.qualified_name} has no method {method!r}")
    usage = _Usage(inline_methods)
    usage.visit(obj.type, method)
    root = _convert(obj, usage, set())
    specialize_attributes(root, usage.methods)
    return root


def _module_object(target):
    """The runtime Object behind a RecursiveScriptModule (its `_c`), or `target` itself if it is one."""
    obj = getattr(target, "_c", target)
    class_type = getattr(obj, "type", None)
    if isinstance(class_type, ts.ClassType) and class_type.is_module and hasattr(obj, "_attributes"):
        return obj
    return None


# ---- what the entry method uses ----------------------------------------------------------------------------------
@dataclass
class _Usage:
    """Per class name: the methods reachable from the entry point (graphs with function calls inlined) and the
    attributes those methods read or write."""

    inline_methods: bool = True
    methods: dict[str, dict[str, Graph]] = field(default_factory=dict)
    attributes: dict[str, set[str]] = field(default_factory=dict)

    def visit(self, class_type: ts.ClassType, method: str) -> None:
        """Record `class_type.method` and, transitively, the methods it calls."""
        name = class_type.qualified_name
        if method in self.methods.get(name, {}):
            return
        function = class_type.methods.get(method)
        if function is None:
            raise MLIRError(f"{name} has no method {method!r}")
        graph = function.graph.copy()
        if self.inline_methods:
            inliner.inline_calls(graph)
        inline_function_calls_in_place(graph)
        self.methods.setdefault(name, {})[method] = graph
        used = self.attributes.setdefault(name, set())
        for node in graph.all_nodes():
            self._visit_node(node, used)

    def _visit_node(self, node: Node, used: set[str]) -> None:
        owner = node.inputs[0].type if node.inputs else None
        if node.kind in (prim.GetAttr, prim.SetAttr) and isinstance(owner, ts.ClassType):
            self.attributes.setdefault(owner.qualified_name, set()).add(node.s("name"))
        elif node.kind is prim.CallMethod:
            if not isinstance(owner, ts.ClassType):
                raise MLIRError(f"prim::CallMethod {node.s('name')!r} on a {owner}: only calls on modules of a "
                                f"known class can be compiled (interfaces are not)")
            self.visit(owner, node.s("name"))


def inline_function_calls(graph: Graph) -> Graph:
    """A copy of `graph` whose `prim::CallFunction`s of known functions are inlined; method calls stay."""
    graph = graph.copy()
    inline_function_calls_in_place(graph)
    return graph


def inline_function_calls_in_place(graph: Graph) -> None:
    """Inline the `prim::CallFunction`s of known functions in `graph` itself, and the forks only waited on
    (the torch dialect has no fork/wait; tsjit/passes/inline_fork_wait.py), whose bodies call functions too."""
    while True:
        forked = run_pass(inline_fork_wait, graph)
        calls = [n for n in graph.all_nodes() if n.kind is prim.CallFunction and inliner._callee(n) is not None]
        if not calls and not forked:
            return
        for node in calls:
            inliner._inline_call(node, inliner._callee(node))


# ---- conversion --------------------------------------------------------------------------------------------------
def _convert(obj, usage: _Usage, seen: set[int]) -> ModuleValue:
    """One Object as a ModuleValue; submodules are converted only where a carried method uses them."""
    if id(obj) in seen:
        raise MLIRError(f"module {obj.type.qualified_name} is reachable by two paths; torch-mlir's "
                        f"GlobalizeObjectGraph needs each module to have exactly one")
    seen.add(id(obj))
    name = obj.type.qualified_name
    used = usage.attributes.get(name, set())
    slots = [_slot(obj, attribute, usage, seen) for attribute in _attributes_in_order(obj.type, used)]
    return ModuleValue(name, slots, dict(usage.methods.get(name, {})))


def _attributes_in_order(class_type: ts.ClassType, used: Iterable[str]):
    used = set(used)
    return [a for a in class_type.attributes if a.name in used]


def _slot(obj, attribute, usage: _Usage, seen: set[int]) -> Slot:
    value = getattr(obj, attribute.name)
    if _module_object(value) is not None:
        return Slot(attribute.name, attribute.type, _convert(value, usage, seen))
    if hasattr(value, "type") and hasattr(value, "_attributes"):
        raise MLIRError(f"{obj.type.qualified_name}.{attribute.name}: script class objects have no torch-dialect "
                        f"form")
    return Slot(attribute.name, attribute.type, _detached(value))


def _detached(value):
    """Tensors without autograd history; containers element by element."""
    if hasattr(value, "detach"):
        return value.detach()
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return type(value)(*(_detached(v) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(_detached(v) for v in value)
    if isinstance(value, dict):
        return {k: _detached(v) for k, v in value.items()}
    return value


# ---- specialization to the values ------------------------------------------------------------------------------
_SCALARS = (ts.IntType, ts.FloatType, ts.BoolType, ts.StringType, ts.NoneType)


def specialize_attributes(root: ModuleValue, methods: dict[str, dict[str, Graph]]) -> None:
    """Fold read-only scalar attributes into constants and declare optional tensor attributes by their tensor,
    where all instances of the class hold the same kind of value (see the module docstring)."""
    by_class: dict[str, list[ModuleValue]] = {}
    for module in instances(root):
        by_class.setdefault(module.qualified_name, []).append(module)
    graphs = [g for by_name in methods.values() for g in by_name.values()]  # a parent reads a child's attributes
    reads, written = _attribute_accesses(graphs)
    for name, modules in by_class.items():
        for slot in list(modules[0].slots):
            if (name, slot.name) in written:
                continue
            values = [m.slot(slot.name).value for m in modules]
            found = reads.get((name, slot.name), [])
            if _foldable(slot.type, values) or _foldable_list(slot.type, values, found):
                _fold_attribute(found, list(values[0]) if isinstance(slot.type, ts.ListType) else values[0])
                _retype(modules, slot.name, None)
            elif isinstance(slot.type, ts.OptionalType) and all(isinstance(v, torch.Tensor) for v in values):
                _retype(modules, slot.name, slot.type.elem)
            elif _is_tensor_list(slot.type, values):
                _split_tensor_list(modules, slot.name, found)


def _attribute_accesses(graphs: list[Graph]) -> tuple[dict[tuple[str, str], list[Node]], set[tuple[str, str]]]:
    """The `prim::GetAttr` nodes by (class name, attribute), and the attributes a `prim::SetAttr` writes: one
    walk of the graphs (a walk per attribute cost seconds on a transformer's hundreds of attributes)."""
    reads: dict[tuple[str, str], list[Node]] = {}
    written: set[tuple[str, str]] = set()
    for graph in graphs:
        for node in graph.all_nodes():
            if node.kind in (prim.GetAttr, prim.SetAttr):
                key = (getattr(node.inputs[0].type, "qualified_name", None), node.s("name"))
                if node.kind is prim.GetAttr:
                    reads.setdefault(key, []).append(node)
                else:
                    written.add(key)
    return reads, written


def _foldable(type_: ts.Type, values: list) -> bool:
    """A scalar (or None) attribute with one value in every instance (floats compared with their type)."""
    scalar = isinstance(type_, _SCALARS) or (isinstance(type_, ts.OptionalType) and isinstance(type_.elem, _SCALARS))
    first = values[0]
    if all(v is None for v in values):  # an absent optional of any type (`MultiheadAttention.bias_k`)
        return True
    return scalar and (first is None or isinstance(first, int | float | bool | str)) and all(
        type(v) is type(first) and v == first for v in values)


def _foldable_list(type_: ts.Type, values: list, reads: list[Node]) -> bool:
    """A list of ints, floats or bools, equal in every instance, that no reader may write: every use of every
    read is an operator argument the schema does not write (`aten::append(t[](a!) self, ...)` writes)."""
    if not (isinstance(type_, ts.ListType) and isinstance(type_.elem, ts.IntType | ts.FloatType | ts.BoolType)):
        return False
    return all(v == values[0] for v in values) and all(_reads_only(use) for read in reads for use in read.output().uses)


def _reads_only(use) -> bool:
    schema = use.user.maybe_schema()
    return schema is not None and use.offset < len(schema.arguments) and use.offset not in schema.written_arguments


def _fold_attribute(reads: list[Node], value) -> None:
    """Every `prim::GetAttr` of the attribute becomes a constant of the value."""
    for node in reads:
        graph = node.owning_graph
        with graph.insert_point_guard(node):
            constant = graph.insert_constant(value, source_range=node.source_range)
        node.output().replace_all_uses_with(constant)
        node.destroy()


def _is_tensor_list(type_: ts.Type, values: list) -> bool:
    """A `List[Tensor]` attribute of the same length in every instance (`LSTM._flat_weights`)."""
    return (isinstance(type_, ts.ListType) and isinstance(type_.elem, ts.TensorType)
            and len({len(v) for v in values}) == 1)


def _split_tensor_list(modules: list[ModuleValue], attribute: str, reads: list[Node]) -> None:
    """A read-only `List[Tensor]` attribute becomes one tensor attribute per element (`name$0`, `name$1`, ...)
    and each read a ListConstruct of their reads: a list of non-value tensors read from a slot cannot become a
    list of value tensors in the torch dialect, while each tensor can."""
    count = len(modules[0].slot(attribute).value)
    names = [f"{attribute}${i}" for i in range(count)]
    for module in modules:
        index = next(i for i, s in enumerate(module.slots) if s.name == attribute)
        tensors = module.slots[index].value
        module.slots[index:index + 1] = [Slot(n, ts.TensorType.get(), t) for n, t in zip(names, tensors)]
    for node in reads:
        graph = node.owning_graph
        with graph.insert_point_guard(node):
            elements = [_insert_get_attr(graph, node, n) for n in names]
            listed = graph.insert_node(graph.create(prim.ListConstruct, elements))
            listed.output().set_type(node.output().type)
        node.output().replace_all_uses_with(listed.output())
        node.destroy()


def _insert_get_attr(graph: Graph, read: Node, name: str):
    get = graph.insert_node(graph.create(prim.GetAttr, [read.input()]))
    get.s_("name", name)
    get.output().set_type(ts.TensorType.get())
    get.source_range = read.source_range
    return get.output()


def _retype(modules: list[ModuleValue], attribute: str, type_: ts.Type | None) -> None:
    """Give the attribute a new declared type in every instance, or drop it (None) once nothing reads it."""
    for module in modules:
        index = next(i for i, s in enumerate(module.slots) if s.name == attribute)
        old = module.slots[index]
        if type_ is None:
            del module.slots[index]
        else:
            module.slots[index] = Slot(old.name, type_, old.value)
