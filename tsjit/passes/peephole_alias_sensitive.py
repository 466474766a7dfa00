"""The alias-sensitive peephole rules freezing needs (TorchScript's PeepholeOptimize rules that ask AliasDb).

The rank of a convolution's output is known:

    %y : Tensor = aten::conv2d(%x, ...)              %y : Tensor = aten::conv2d(%x, ...)
    %d : int = aten::dim(%y)                  ->     %d : int = prim::Constant[value=4]()

conv1d, conv2d and conv3d return 3-, 4- and 5-d tensors; `dim(conv(x))` is the check a following BatchNorm
makes, and with it gone the batch_norm is the conv's only user and can be folded into it. The rule holds
unless something resizes the output in place, which AliasDb would see as a write (as TorchScript's
PeepholeOptimizeAliasSensitive).

Adding or subtracting the integer 0 (alpha the integer 1) returns the input, as does multiplying or dividing
by the integer 1, so the output is replaced by the input when AliasDb says the two may become one value:

    %y : Tensor = aten::add(%x, %zero, %one)  ->  (uses of %y read %x)       (`x + i` in an unrolled loop, i = 0)

As TorchScript's rule, only integer scalars qualify (a float could promote an integer tensor's dtype).
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.passes.dead_code_elimination import eliminate_dead_code

CONV_OUTPUT_RANK = {aten.conv1d: 3, aten.conv2d: 4, aten.conv3d: 5}
IDENTITY_OPERAND = {aten.add: 0, aten.sub: 0, aten.mul: 1, aten.div: 1}


def peephole_alias_sensitive(graph: Graph) -> bool:
    """Replace `aten::dim` of convolution outputs by their rank and drop arithmetic that returns its input;
    returns whether anything changed."""
    changed = _conv_dims(graph)
    changed |= _identity_arithmetic(graph)
    if changed:
        eliminate_dead_code(graph)
    return changed


def _conv_dims(graph: Graph) -> bool:
    alias_db: AliasDb | None = None
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in CONV_OUTPUT_RANK]:
        dims = [use.user for use in node.output().uses if use.user.kind is aten.dim]
        if not dims:
            continue
        alias_db = alias_db or AliasDb(graph)
        if alias_db.has_writers(node.output()):
            continue
        for dim in dims:
            if not log.opt_allowed():
                continue
            log.graph_update(f"aten::dim of {node.kind} is {CONV_OUTPUT_RANK[node.kind]}")
            with graph.insert_point_guard(dim):
                dim.output().replace_all_uses_with(graph.insert_constant(CONV_OUTPUT_RANK[node.kind]))
            changed = True
    return changed


def _identity_arithmetic(graph: Graph) -> bool:
    alias_db: AliasDb | None = None
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in IDENTITY_OPERAND]:
        if not _is_identity(node) or not log.opt_allowed():
            continue
        alias_db = alias_db or AliasDb(graph)
        if node.inputs[0].type != node.output().type or \
                not alias_db.safe_to_change_aliasing_relationship(node.inputs[:1], node.outputs):
            continue
        log.graph_update(f"{node.kind} by {IDENTITY_OPERAND[node.kind]} returns its input")
        alias_db.replace_value(node.output(), node.inputs[0])
        node.output().replace_all_uses_with(node.inputs[0])
        changed = True
    return changed


def _is_identity(node: Node) -> bool:
    schema = node.maybe_schema()
    if schema is None or schema.overload_name != "Scalar":
        return False
    operands = [_int_constant(v) for v in node.inputs[1:]]
    return operands[0] == IDENTITY_OPERAND[node.kind] and all(o is not None for o in operands) and \
        (len(operands) == 1 or operands[1] == 1)


def _int_constant(value: Value) -> int | None:
    if value.node.kind is not prim.Constant or not isinstance(value.type, T.IntType):
        return None
    return constant_value(value.node)
