"""Peephole optimization on non-tensor values: small local rewrites TorchScript applies before inlining.

These are the shape-independent rules of TorchScript's PeepholeOptimize (peephole_non_tensor.cpp), which
`GraphFunction.optimized_graph` runs so that inlined callees look as torch.jit's do:

    %y : int = prim::unchecked_cast(%x)        where %x : int already       ->  uses of %y read %x
    %b : bool = aten::__is__(%x, %none)        where %x cannot be None     ->  False
    %c : bool = prim::If(%p)  -> (True) / -> (False)                       ->  uses of %c read %p
    %z : int = aten::add(%a, %zero)           (int arithmetic with 0 or 1) ->  uses of %z read %a
    %e : bool = aten::eq(%a, %a)              (ints, floats, bools, None)  ->  True

Shape-dependent rules (`x.dim()` of a known rank, `x.expand(x.size())`) need shapes and are not here.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code

_IMMUTABLE_EQUALITY = (T.BoolType, T.IntType, T.FloatType, T.NoneType)


def peephole_optimize(graph: Graph) -> bool:
    """Apply the non-tensor peephole rules, then remove what they made dead; returns whether anything changed."""
    changed = _optimize_block(graph.block)
    if changed:
        eliminate_dead_code(graph)
    return changed


def _optimize_block(block: Block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for inner in node.blocks:
            changed |= _optimize_block(inner)
        changed |= _none_outputs_to_constants(node)
        rule = _RULES.get(node.kind)
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


def _replace_by_constant(output: Value, value: bool | None) -> bool:
    """Make the uses of `output` read the constant `value`, if the optimization limiter allows."""
    if not log.opt_allowed():
        return False
    log.graph_update(f"replacing uses of %{output.debug_name} with {value}")
    graph = output.node.owning_graph
    with graph.insert_point_guard(output.node):
        output.replace_all_uses_with(graph.insert_constant(value))
    return True


_RULES = {
    prim.If: _if_outputs, aten.__is__: _is_none_comparison, aten.__isnot__: _is_none_comparison,
    prim.unchecked_unwrap_optional: _unwrap, aten._unwrap_optional: _unwrap, prim.unchecked_cast: _unchecked_cast,
    aten.Int: _int_of_int, aten.ceil: _int_of_int, aten.eq: _equal_to_itself, aten.ne: _equal_to_itself,
    aten.mul: _mul_or_div, aten.floordiv: _mul_or_div, aten.add: _add_or_sub,
    aten.sub: _add_or_sub,
}


# ---- None-ness (C++ Value::mustBeNone / mustNotBeNone) --------------------------------------------------------------
def must_be_none(value: Value) -> bool:
    node = value.node
    if isinstance(value.type, T.NoneType) and len(node.outputs) == 1:
        return True
    return node.kind is prim.Constant and not node.attribute_names() and isinstance(value.type, T.OptionalType)


def must_not_be_none(value: Value) -> bool:
    if value.node.kind is prim.AutogradAdd:
        return True
    type_ = value.type
    if isinstance(type_, T.OptionalType):
        return False
    if isinstance(type_, T.UnionType):
        return not type_.can_hold_type(T.NoneType.get())
    return not isinstance(type_, T.NoneType | T.AnyType)


def _constant(value: Value):
    from tsjit.ir.constants import constant_value

    return constant_value(value.node) if value.node.kind is prim.Constant else None


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
