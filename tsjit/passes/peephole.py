"""Peephole optimization: small local rewrites, without and (in the graph executor) with refined tensor types.

The shape-independent rules of TorchScript's PeepholeOptimize (peephole_non_tensor.cpp), which
`GraphFunction.optimized_graph` runs so that inlined callees look as torch.jit's do:

    %y : int = prim::unchecked_cast(%x)        where %x : int already       ->  uses of %y read %x
    %b : bool = aten::__is__(%x, %none)        where %x cannot be None     ->  False
    %c : bool = prim::If(%p)  -> (True) / -> (False)                       ->  uses of %c read %p
    %z : int = aten::add(%a, %zero)           (int arithmetic with 0 or 1) ->  uses of %z read %a
    %e : bool = aten::eq(%a, %a)              (ints, floats, bools, None)  ->  True
    %s : int[]? = aten::_size_if_not_equal(%a, %b)   (constant sizes)         ->  None, or %a

With `shape_peepholes=True` (the graph executor, after shape propagation refined the tensor types of a plan;
seed: "Derivative Preserving Optimization") the rules that read refined types apply too. Every one keeps
autograd intact: it answers a question about metadata with a constant, or drops an operator that returns its
input itself (`to`, `type_as`) or a same-shape view of it (`expand_as`):

    aten::dim(%x), len(%x.shape)                 where %x : Float(*, *)          ->  2
    prim::dtype(%x), prim::device(%x), prim::is_cuda(%x), aten::is_floating_point(%x)  ->  6, "cpu", False, True
    aten::size(%x, %i), %x.shape[%i], aten::size(%x)  where that size is known    ->  the constant (list)
    aten::to(%x, %dtype, ...), aten::type_as(%x, %y)  to the dtype/device %x has  ->  %x
    aten::expand_as(%x, %y)                      where both have the same known sizes  ->  %x
    aten::_grad_sum_to_size(%g, [256])           where %g : Float(*, *)           ->  aten::sum(%g, [0], False)

The last is a broadcast gradient's reduction (a bias's, in backward graphs) as the one sum that sum_to_size runs
inside, without its view or the Python call of `_grad_sum_to_size`: which dimensions it sums follows from the
rank and the constant sizes alone when no size is 1 (the leading dimensions) or none are leading (those of size 1,
kept). The sum's result is fresh memory where sum_to_size could return its input: both are valid gradients. (The
sizes are the forward's, as the gradient formulas pass them, which sum_to_size would check against %g's.)

Those rules are only sound when no tensor's metadata changes in place, which the executor checks
(shape_analysis.may_change_tensor_metadata); on other graphs they must stay off, as tensor types there can be
stale (a traced graph records the sizes of its example inputs).
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.constants import constant_value, must_be_none
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.scalar_type import dtype_to_code
from tsjit.ir.symbols import aten, prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.shape_analysis import list_is_never_written

_IMMUTABLE_EQUALITY = (T.BoolType, T.IntType, T.FloatType, T.NoneType)


def peephole_optimize(graph: Graph, shape_peepholes: bool = False, remove_dead: bool = True) -> bool:
    """Apply the peephole rules (with `shape_peepholes`, also those reading refined tensor types), then (unless
    `remove_dead` is False, for a caller that eliminates dead code itself once after several passes) remove what
    they made dead; returns whether anything changed."""
    rules = {**_RULES, **_SHAPE_RULES} if shape_peepholes else _RULES
    changed = _optimize_block(graph.block, rules)
    if changed and remove_dead:
        eliminate_dead_code(graph)
    return changed


def _optimize_block(block: Block, rules: dict) -> bool:
    changed = False
    for node in list(block.nodes()):
        for inner in node.blocks:
            changed |= _optimize_block(inner, rules)
        changed |= _none_outputs_to_constants(node)
        rule = rules.get(node.kind)
        if rule is not None:
            changed |= rule(node)
    return changed


def _none_outputs_to_constants(node: Node) -> bool:
    """A value typed None is the None constant (an Optional attribute initialized to None, say)."""
    if node.kind is prim.Constant:
        return False
    changed = False
    for output in node.outputs:
        if isinstance(output.type, T.NoneType) and output.uses:
            changed |= _replace_by_constant(output, None)
    return changed


def _if_outputs(node: Node) -> bool:
    """`x and True` style outputs that equal the condition; Optional outputs both branches fill."""
    changed = False
    then_block, else_block = node.blocks
    for i, output in enumerate(node.outputs):
        if output.type == T.BoolType.get() and output.uses:
            if _constant(then_block.outputs[i]) is True and _constant(else_block.outputs[i]) is False:
                changed |= _replace(output, node.inputs[0])
    for i, output in enumerate(node.outputs):
        then_type, else_type = then_block.outputs[i].type, else_block.outputs[i].type
        if isinstance(output.type, T.OptionalType) and not isinstance(then_type, T.OptionalType) \
                and not isinstance(else_type, T.OptionalType):
            unified = T.unify_types(then_type, else_type)
            if unified is not None and log.opt_allowed():
                log.graph_update(f"refining the type of %{output.debug_name} to {unified}")
                output.set_type(unified)
                changed = True
    return changed


def _is_none_comparison(node: Node) -> bool:
    for index in (0, 1):
        if must_be_none(node.inputs[index]) and must_not_be_none(node.inputs[1 - index]):
            return _replace_by_constant(node.output(), node.kind is aten.__isnot__)
    return False


def _unwrap(node: Node) -> bool:
    return must_not_be_none(node.inputs[0]) and _replace(node.output(), node.inputs[0])


def _unchecked_cast(node: Node) -> bool:
    subtype = T.unshaped_type(node.inputs[0].type).is_subtype_of(T.unshaped_type(node.output().type))
    return subtype and _replace(node.output(), node.inputs[0])


def _int_of_int(node: Node) -> bool:
    if len(node.inputs) != 1 or not isinstance(node.inputs[0].type, T.IntType):
        return False
    return _replace(node.output(), node.inputs[0])


def _equal_to_itself(node: Node) -> bool:
    """`a == a` on numbers, bools, None (and lists/dicts of them) is True; `!=` False."""
    if len(node.inputs) != 2 or node.inputs[0] is not node.inputs[1]:
        return False
    type_ = node.inputs[0].type
    if isinstance(type_, T.ListType):
        plain = isinstance(type_.elem, _IMMUTABLE_EQUALITY)
    elif isinstance(type_, T.DictType):
        plain = isinstance(type_.key, _IMMUTABLE_EQUALITY) and isinstance(type_.value, _IMMUTABLE_EQUALITY)
    else:
        plain = isinstance(type_, _IMMUTABLE_EQUALITY)
    return plain and _replace_by_constant(node.output(), node.kind is aten.eq)


def _int_operands(node: Node) -> int | None:
    """For int arithmetic: the constant operand (moved second for add and mul), or None."""
    if len(node.inputs) != 2 or any(v.type != T.IntType.get() for v in node.inputs):
        return None
    first = _constant(node.inputs[0])
    if node.kind in (aten.mul, aten.add) and _is_int(first):
        _swap_inputs(node)  # commutative: keep the constant second
        return first
    second = _constant(node.inputs[1])
    return second if _is_int(second) else None


def _swap_inputs(node: Node) -> None:
    first, second = node.inputs
    node.replace_input(0, second)
    node.replace_input(1, first)


def _mul_or_div(node: Node) -> bool:
    """`a * 1` and `a // 1` are a (not `a / 1`: that is a float)."""
    return _int_operands(node) == 1 and _replace(node.output(), node.inputs[0])


def _add_or_sub(node: Node) -> bool:
    """`a + 0` is a; `(a + 2) - 3` is `a - 1`."""
    constant = _int_operands(node)
    if constant is None:
        return False
    if constant == 0:
        return _replace(node.output(), node.inputs[0])
    dependency = node.inputs[0].node
    if dependency.kind not in (aten.add, aten.sub):
        return False
    delta = _int_operands(dependency)
    if delta is None:
        return False
    merged = constant + delta if dependency.kind is node.kind else constant - delta
    if merged == 0:
        return _replace(node.output(), dependency.inputs[0])
    if not log.opt_allowed():
        return False
    log.graph_update(f"folding %{dependency.output().debug_name} into %{node.output().debug_name}")
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        node.replace_input(0, dependency.inputs[0])
        node.replace_input(1, graph.insert_constant(merged))
    return True


def _replace(output: Value, value: Value) -> bool:
    """Make the uses of `output` read `value`, if the optimization limiter allows; whether it did."""
    if not log.opt_allowed():
        return False
    log.graph_update(f"replacing uses of %{output.debug_name} with %{value.debug_name}")
    output.replace_all_uses_with(value)
    return True


def _replace_by_constant(output: Value, value: Any) -> bool:
    """Make the uses of `output` read the constant `value`, if the optimization limiter allows."""
    if not log.opt_allowed():
        return False
    log.graph_update(f"replacing uses of %{output.debug_name} with {value}")
    graph = output.node.owning_graph
    with graph.insert_point_guard(output.node):
        output.replace_all_uses_with(graph.insert_constant(value))
    return True


def _size_if_not_equal(node: Node) -> bool:
    """`aten::_size_if_not_equal(a, b)` (a broadcast gradient's size, in the gradient formulas) with both sizes
    constant: None when they are equal, else `a` as a constant."""
    sizes = [_constant_ints(v) for v in node.inputs]
    if None in sizes:
        return False
    if sizes[0] == sizes[1]:
        return _replace_by_constant(node.output(), None)
    return _replace(node.output(), node.inputs[0])


def _constant_ints(value: Value) -> list[int] | None:
    """The ints of an int-list constant, or of a list of int constants nobody writes to (known sizes)."""
    node = value.node
    if node.kind is prim.Constant:
        constant = constant_value(node)
        return constant if isinstance(constant, list) and all(map(_is_int, constant)) else None
    if node.kind is not prim.ListConstruct or not list_is_never_written(value):
        return None
    elements = [_constant(v) for v in node.inputs]
    return elements if all(map(_is_int, elements)) else None  # type: ignore[return-value]


_RULES = {
    prim.If: _if_outputs, aten.__is__: _is_none_comparison, aten.__isnot__: _is_none_comparison,
    prim.unchecked_unwrap_optional: _unwrap, aten._unwrap_optional: _unwrap, prim.unchecked_cast: _unchecked_cast,
    aten.Int: _int_of_int, aten.ceil: _int_of_int, aten.eq: _equal_to_itself, aten.ne: _equal_to_itself,
    aten.mul: _mul_or_div, aten.floordiv: _mul_or_div, aten.add: _add_or_sub,
    aten.sub: _add_or_sub, aten._size_if_not_equal: _size_if_not_equal,
}


# ---- rules reading refined tensor types (shape_peepholes) ----------------------------------------------------------
def _known(value: Value) -> T.TensorType | None:
    """The refined type of a defined tensor, or None."""
    type_ = value.type
    return type_ if isinstance(type_, T.TensorType) and type_.undefined is False else None


def _known_sizes(value: Value) -> tuple[int, ...] | None:
    type_ = _known(value)
    if type_ is None or type_.sizes is None or None in type_.sizes:
        return None
    return type_.sizes  # type: ignore[return-value]


def _dim(node: Node) -> bool:
    type_ = _known(node.inputs[0])
    return type_ is not None and type_.rank is not None and _replace_by_constant(node.output(), type_.rank)


def _dtype(node: Node) -> bool:
    type_ = _known(node.inputs[0])
    return type_ is not None and type_.dtype is not None and _replace_by_constant(
        node.output(), dtype_to_code(type_.dtype))


def _device(node: Node) -> bool:
    type_ = _known(node.inputs[0])
    return type_ is not None and type_.device is not None and _replace_by_constant(node.output(), type_.device)


_DEVICE_PROPERTIES = {prim.is_cuda: "cuda", prim.is_cpu: "cpu", prim.is_xpu: "xpu", prim.is_mps: "mps",
                      prim.is_meta: "meta", prim.is_xla: "xla", prim.is_ipu: "ipu", prim.is_maia: "maia",
                      prim.is_mtia: "mtia", prim.is_vulkan: "vulkan"}


def _device_property(node: Node) -> bool:
    type_ = _known(node.inputs[0])
    return type_ is not None and type_.device is not None and _replace_by_constant(
        node.output(), type_.device.type == _DEVICE_PROPERTIES[node.kind])


def _dtype_property(node: Node) -> bool:
    type_ = _known(node.inputs[0])
    if type_ is None or type_.dtype is None:
        return False
    kind = type_.dtype.is_floating_point if node.kind is aten.is_floating_point else type_.dtype.is_complex
    return _replace_by_constant(node.output(), kind)


def _size(node: Node) -> bool:
    """`x.size(i)` with that size known; `x.size()` with every size known becomes a fresh list of constants."""
    sizes = _known_sizes(node.inputs[0])
    type_ = _known(node.inputs[0])
    if len(node.inputs) == 2 and type_ is not None and type_.sizes is not None:
        index = _constant(node.inputs[1])
        if _is_int(index) and -len(type_.sizes) <= index < len(type_.sizes) and type_.sizes[index] is not None:
            return _replace_by_constant(node.output(), type_.sizes[index])
        return False
    if len(node.inputs) != 1 or sizes is None or not log.opt_allowed():
        return False
    log.graph_update(f"replacing uses of %{node.output().debug_name} with the known sizes {list(sizes)}")
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        elements = [graph.insert_constant(size) for size in sizes]
        listed = graph.insert_node(graph.create(prim.ListConstruct, elements))
    listed.output().set_type(node.output().type)
    node.output().replace_all_uses_with(listed.output())
    return True


def _read_only_size_list(value: Value) -> Node | None:
    """The aten::size(%x) node behind a list nobody writes to, or None."""
    node = value.node
    if node.kind is aten.size and len(node.inputs) == 1 and list_is_never_written(value):
        return node
    return None


def _len(node: Node) -> bool:
    """`len(x.shape)` is the rank; `len(x)` the first size."""
    if len(node.inputs) != 1:
        return False
    size_node = _read_only_size_list(node.inputs[0])
    if size_node is not None:
        type_ = _known(size_node.inputs[0])
        return type_ is not None and type_.rank is not None and _replace_by_constant(node.output(), type_.rank)
    type_ = _known(node.inputs[0])
    if type_ is None or not type_.sizes or type_.sizes[0] is None:
        return False
    return _replace_by_constant(node.output(), type_.sizes[0])


def _size_item(node: Node) -> bool:
    """`x.shape[i]` with that size known."""
    size_node = _read_only_size_list(node.inputs[0]) if len(node.inputs) == 2 else None
    type_ = _known(size_node.inputs[0]) if size_node is not None else None
    index = _constant(node.inputs[1])
    if type_ is None or type_.sizes is None or not _is_int(index) or not -len(type_.sizes) <= index < len(
            type_.sizes):
        return False
    size = type_.sizes[index]
    return size is not None and _replace_by_constant(node.output(), size)


def _same_dtype_and_device(a: T.TensorType | None, b: T.TensorType | None) -> bool:
    return (a is not None and b is not None and a.dtype is not None and a.device is not None
            and a.dtype == b.dtype and a.device == b.device)


def _type_as(node: Node) -> bool:
    """`x.type_as(y)` returns `x` itself when y has x's dtype and device."""
    return (len(node.inputs) == 2 and _same_dtype_and_device(_known(node.inputs[0]), _known(node.inputs[1]))
            and _replace(node.output(), node.inputs[0]))


def _to(node: Node) -> bool:
    """`x.to(...)` returns `x` itself when it asks for x's dtype and device, no copy and no memory format."""
    self_type = _known(node.inputs[0])
    schema = node.maybe_schema()
    if self_type is None or schema is None or schema.is_vararg:
        return False
    for argument, value in zip(schema.arguments[1:], node.inputs[1:]):
        if argument.name == "other":
            keeps = _same_dtype_and_device(self_type, _known(value))
        elif argument.name == "non_blocking":
            keeps = True
        elif value.node.kind is not prim.Constant:
            return False
        else:
            keeps = _keeps(argument.name, _constant(value), self_type)
        if not keeps:
            return False
    return _replace(node.output(), node.inputs[0])


def _keeps(name: str, value: Any, self_type: T.TensorType) -> bool:
    """Whether the constant argument `name` of aten::to leaves a tensor of `self_type` as it is."""
    if name == "dtype":
        return value is None or (self_type.dtype is not None and value == dtype_to_code(self_type.dtype))
    if name == "device":
        return value is None or (self_type.device is not None and torch.device(value) == self_type.device)
    if name == "copy":
        return value is False
    return name in ("memory_format", "layout", "pin_memory") and value is None


def _expand_as(node: Node) -> bool:
    """`x.expand_as(y)` where both have the same known sizes is a view of all of x: x itself will do."""
    sizes = _known_sizes(node.inputs[0])
    return sizes is not None and sizes == _known_sizes(node.inputs[1]) and _replace(node.output(), node.inputs[0])


def _grad_sum_to_size(node: Node) -> bool:
    """`_grad_sum_to_size(g, sizes)` with constant sizes and g's rank known: one aten::sum (see the module doc)."""
    type_, sizes = _known(node.inputs[0]), _constant(node.inputs[1])
    if type_ is None or type_.rank is None or not isinstance(sizes, list) or not all(map(_is_int, sizes)):
        return False
    leading = type_.rank - len(sizes)
    ones = [leading + i for i, size in enumerate(sizes) if size == 1]
    if leading < 0 or bool(leading) == bool(ones) or not log.opt_allowed():  # nothing to sum, or two steps
        return False
    dims, keepdim = (list(range(leading)), False) if leading else (ones, True)
    log.graph_update(f"replacing %{node.output().debug_name} = _grad_sum_to_size(...) with a sum over {dims}")
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        summed = graph.insert(aten.sum, [node.inputs[0], dims, keepdim], source_range=node.source_range)
    summed.set_type(node.output().type)
    node.output().replace_all_uses_with(summed)
    return True


_SHAPE_RULES = {
    aten.dim: _dim, prim.dtype: _dtype, prim.device: _device, **dict.fromkeys(_DEVICE_PROPERTIES, _device_property),
    aten.is_floating_point: _dtype_property, aten.is_complex: _dtype_property, aten.size: _size, aten.len: _len,
    aten.__getitem__: _size_item, aten.type_as: _type_as, aten.to: _to, aten.expand_as: _expand_as,
    aten._grad_sum_to_size: _grad_sum_to_size,
}


# ---- None-ness (C++ Value::mustBeNone / mustNotBeNone) --------------------------------------------------------------
def must_not_be_none(value: Value) -> bool:
    if value.node.kind is prim.AutogradAdd:
        return True
    type_ = value.type
    if isinstance(type_, T.OptionalType) or (isinstance(type_, T.TensorType) and type_.undefined is not False):
        return False
    if isinstance(type_, T.UnionType):
        return not type_.can_hold_type(T.NoneType.get())
    return not isinstance(type_, T.NoneType | T.AnyType)


def _constant(value: Value):
    return constant_value(value.node) if value.node.kind is prim.Constant else None


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
