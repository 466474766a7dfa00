"""Module freezing: attributes that are never written become constants of the module's methods.

    %w : Tensor = prim::GetAttr[name="weight"](%conv)          %self.conv.weight : Float(4, 2, 3, 3, ...) =
    %y : Tensor = aten::conv2d(%x, %w, ...)              ->          prim::Constant[value=<Tensor>]()
                                                               %y : Tensor = aten::conv2d(%x, %self.conv.weight, ...)

Freezing works on copies of the methods to keep (`forward` and the preserved ones), in three steps:
1. every call is inlined (calls through module interfaces too, when the attribute is never assigned), so each
   method reads attributes straight off `self` through prim::GetAttr chains;
2. attributes that some method writes (prim::SetAttr, an in-place op on what GetAttr returned, seen by an
   AliasDb in frozen mode), the preserved ones and modules used as values stay attributes; every other GetAttr
   chain is replaced by a constant of the attribute's value (tensors detached, sharing their storage), named
   `self.<path>`, and the graph is optimized (constants folded, dead code removed) as TorchScript does;
3. the module tree is rebuilt with only what the graphs still read (`freeze_module` returns the new root
   object; each kept module gets a fresh class type of its own, named by `rename`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.objects import Object
from tsjit.ir.symbols import prim
from tsjit.passes.common_subexpression_elimination import eliminate_common_subexpression
from tsjit.passes.constant_pooling import constant_pooling
from tsjit.passes.constant_propagation import constant_propagation
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.inliner import inline_calls
from tsjit.passes.loop_unrolling import unroll_constant_loops
from tsjit.passes.lower_tuples import lower_simple_tuples
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.peephole import peephole_optimize
from tsjit.passes.peephole_alias_sensitive import peephole_alias_sensitive

# (id of a module object, attribute name): the key of one attribute slot, however many paths reach it
Slot = tuple[int, str]


def freeze_module(root: Object, graphs: dict[str, Graph], preserved_attrs: Iterable[str],
                  rename: Callable[[str], str]) -> Object:
    """Freeze the methods `graphs` (copies whose first input is `root`; rewritten in place) and return the
    frozen root object, whose type holds those graphs' attributes only (methods are the caller's to add)."""
    preserved = set(preserved_attrs)
    for graph in graphs.values():
        run_pass(inline_calls, graph)
    assigned = _assigned_slots(root, graphs.values())
    for graph in graphs.values():
        while _resolve_interfaces(graph, root, assigned):
            run_pass(inline_calls, graph)
    mutable = _mutable_slots(root, graphs.values(), preserved)
    for graph in graphs.values():
        propagate_attributes(graph, root, mutable)
        _optimize(graph)
    return _rebuild(root, graphs.values(), preserved, rename)


def _optimize(graph: Graph) -> None:
    """What TorchScript runs on a graph whose attributes became constants (C++ runOptimization)."""
    for pass_fn in (eliminate_dead_code, eliminate_common_subexpression, constant_pooling, peephole_optimize,
                    peephole_alias_sensitive, constant_propagation, unroll_constant_loops, constant_propagation,
                    eliminate_common_subexpression, lower_simple_tuples, constant_pooling):
        run_pass(pass_fn, graph)


# ---- attribute chains ----------------------------------------------------------------------------------------
def _get_attr_chains(graph: Graph, root: Object) -> Iterator[tuple[Node, Object, tuple[str, ...]]]:
    """Every prim::GetAttr (or SetAttr) on a module reached from `self` through GetAttrs: the node, the module
    object it reads (or writes), and the attribute's path from `self`."""
    owners: dict[Value, tuple[Object, tuple[str, ...]]] = {graph.inputs[0]: (root, ())}
    for node in graph.all_nodes():
        if node.kind not in (prim.GetAttr, prim.SetAttr) or node.inputs[0] not in owners:
            continue
        obj, path = owners[node.inputs[0]]
        name = node.s("name")
        yield node, obj, (*path, name)
        value = getattr(obj, name, None) if node.kind is prim.GetAttr else None
        if isinstance(value, Object) and value.type.is_module:
            owners[node.output()] = (value, (*path, name))


def _assigned_slots(root: Object, graphs: Iterable[Graph]) -> set[Slot]:
    return {(id(obj), path[-1]) for graph in graphs for node, obj, path in _get_attr_chains(graph, root)
            if node.kind is prim.SetAttr}


def _resolve_interfaces(graph: Graph, root: Object, assigned: set[Slot]) -> bool:
    """Give a submodule read through a module interface (`impl: OneInterface`) its own type when no method
    assigns the attribute, so calls on it inline (TorchScript freezes interface calls too); returns whether
    any was."""
    changed = False
    for node, obj, path in list(_get_attr_chains(graph, root)):
        if node.kind is not prim.GetAttr or not isinstance(node.output().type, T.InterfaceType):
            continue
        value = getattr(obj, path[-1])
        if isinstance(value, Object) and (id(obj), path[-1]) not in assigned:
            node.output().set_type(value.type)
            changed = True
    return changed


def _escapes(value: Value) -> bool:
    """Whether a module value is used other than to read its attributes (passed on, called by interface)."""
    return any(use.user.kind is not prim.GetAttr and (use.user.kind is not prim.SetAttr or use.offset != 0)
               for use in value.uses)


def _mutable_slots(root: Object, graphs: Iterable[Graph], preserved: set[str]) -> set[Slot]:
    """The attribute slots that must stay attributes: written, preserved, or of a module used as a value.
    Slots holding the same tensor or container object as a mutable slot are mutable too."""
    mutable: set[Slot] = {(id(root), name) for name in preserved}
    escaped = [value for name in preserved if isinstance(value := getattr(root, name, None), Object)]
    for graph in graphs:
        alias_db = AliasDb(graph, frozen=True)
        for node, obj, path in _get_attr_chains(graph, root):
            slot = (id(obj), path[-1])
            if node.kind is prim.SetAttr:
                mutable.add(slot)
                continue
            value = getattr(obj, path[-1])
            if isinstance(value, Object):
                if _escapes(node.output()):
                    escaped.append(value)
            elif alias_db.has_writers(node.output()):
                mutable.add(slot)
    for obj in escaped:
        mutable.update(_all_slots(obj))
    written = {id(value) for obj, name in _walk_slots(root) if (id(obj), name) in mutable
               and not _is_immutable(value := getattr(obj, name))}
    mutable.update((id(obj), name) for obj, name in _walk_slots(root) if id(getattr(obj, name)) in written)
    return mutable


def _all_slots(obj: Object) -> Iterator[Slot]:
    for owner, name in _walk_slots(obj):
        yield id(owner), name


def _walk_slots(obj: Object, seen: set[int] | None = None) -> Iterator[tuple[Object, str]]:
    """Every (module object, attribute name) of the tree under `obj`, each object once."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    for name in obj.type.attribute_names:
        yield obj, name
        value = getattr(obj, name)
        if isinstance(value, Object) and value.type.is_module:
            yield from _walk_slots(value, seen)


def _is_immutable(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | complex | str | torch.device)


# ---- attributes to constants ---------------------------------------------------------------------------------
def propagate_attributes(graph: Graph, root: Object, mutable: set[Slot]) -> bool:
    """Replace the GetAttr chains of attributes not in `mutable` by constants; returns whether any was."""
    changed = False
    constants: dict[Slot, Value] = {}
    for node, obj, path in list(_get_attr_chains(graph, root)):
        slot = (id(obj), path[-1])
        if node.kind is not prim.GetAttr or slot in mutable:
            continue
        value = getattr(obj, path[-1])
        if isinstance(value, Object) or not _constant_allowed(value) or not log.opt_allowed():
            continue
        if slot not in constants:
            constants[slot] = _insert_at_start(graph, value, node.output().type)
            constants[slot].set_debug_name("self." + ".".join(path))
        log.graph_update(f"attribute self.{'.'.join(path)} becomes a constant")
        node.output().replace_all_uses_with(constants[slot])
        node.destroy()
        changed = True
    return changed


def _insert_at_start(graph: Graph, value: Any, type_: T.Type) -> Value:
    """A constant of the attribute's value at the top of the graph (tensors detached: constants need no grad)."""
    tensor = isinstance(value, torch.Tensor)
    with graph.insert_point_guard(next(iter(graph.nodes()))):
        return graph.insert_constant(value.detach() if tensor else value, None if tensor else type_)


def _constant_allowed(value: Any) -> bool:
    """Values a prim::Constant can hold: numbers, strings, None, devices, tensors and lists, tuples and dicts
    of them."""
    if _is_immutable(value) or isinstance(value, torch.Tensor):
        return True
    if isinstance(value, list | tuple):
        return all(_constant_allowed(v) for v in value)
    if isinstance(value, dict):
        return all(_constant_allowed(k) and _constant_allowed(v) for k, v in value.items())
    return False


# ---- the frozen module tree ----------------------------------------------------------------------------------
def _rebuild(root: Object, graphs: Iterable[Graph], preserved: set[str], rename: Callable[[str], str]) -> Object:
    """The module tree with only the attributes the frozen graphs read or write (and the preserved ones); a
    module used as a value is kept whole. Graph values typed by an old module type get the new one."""
    graphs = list(graphs)
    used: dict[int, set[str]] = {id(root): {name for name in preserved if root.type.has_attribute(name)}}
    whole = {id(getattr(root, name)) for name in used[id(root)] if isinstance(getattr(root, name), Object)}
    for graph in graphs:
        for node, obj, path in _get_attr_chains(graph, root):
            used.setdefault(id(obj), set()).add(path[-1])
            value = getattr(obj, path[-1], None) if node.kind is prim.GetAttr else None
            if isinstance(value, Object) and _escapes(node.output()):
                whole.add(id(value))
    new_types: dict[T.ClassType, T.ClassType] = {}
    frozen = _rebuilt_object(root, used, whole, rename, new_types)
    for graph in graphs:
        for value in _all_values(graph):
            if isinstance(value.type, T.ClassType) and value.type in new_types:
                value.set_type(new_types[value.type])
    return frozen


def _rebuilt_object(obj: Object, used: dict[int, set[str]], whole: set[int], rename: Callable[[str], str],
                    new_types: dict[T.ClassType, T.ClassType]) -> Object:
    if id(obj) in whole:
        return obj
    names = used.get(id(obj), set())
    class_type = T.ClassType(rename(obj.type.qualified_name), is_module=True)
    class_type.constants.update(obj.type.constants)
    slots: dict[str, Any] = {}
    for attribute in obj.type.attributes:
        if attribute.name not in names:
            continue
        value = getattr(obj, attribute.name)
        attribute_type = attribute.type
        if isinstance(value, Object) and value.type.is_module and id(value) not in whole:
            value = _rebuilt_object(value, used, whole, rename, new_types)
            attribute_type = value.type
        class_type.add_attribute(attribute.name, attribute_type, attribute.is_parameter, attribute.is_buffer)
        slots[attribute.name] = value
    new_types[obj.type] = class_type
    return Object(class_type, slots)


def _all_values(graph: Graph) -> Iterator[Value]:
    yield from graph.inputs
    for node in graph.all_nodes():
        for block in node.blocks:
            yield from block.inputs
        yield from node.outputs
