"""Guard elimination: fewer, earlier prim::TypeCheck guards (TorchScript's GuardElimination).

(seed: jit-overview.md "Profiling Programs".) The profiling executor guards each fusion group's tensor inputs
(insert_type_guards.py). Three rewrites, in this order:

1. Remove what follows from other guards: an input whose type is implied by tensors an earlier check covers is
   dropped from its check, whose flag then also requires that earlier one. Implied are the outputs of a guarded
   fusion group (the kernel computes them with its inputs' broadcast shape and dtype, without grad) and of an
   operator whose output type shape propagation derives from the checked types:

       %a.1 : Float(2, 3), %ok1 : bool = prim::TypeCheck[types=[Float(2, 3)]](%a)
       %b : Tensor = aten::neg(%a)
       %b.1 : Float(2, 3), %ok2 : bool = prim::TypeCheck[types=[Float(2, 3)]](%b)
           ->   %b's check removed; %ok2's uses read %ok1

2. Move each check up to the definitions of what it checks (the start of its block for values defined outside
   it), unless the graph may change tensor metadata in place (then a check could move before the change).
3. Coalesce adjacent checks into one (a value checked twice with one type once): the checks of a graph's
   inputs end up as a single prim::TypeCheck at the top. A failure in any of them now fails them all, and each
   guarded group falls back (correct, as any failure is).
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ir.types import BoolType, TensorType
from tsjit.passes.dead_code_elimination import SIDE_EFFECT_KINDS
from tsjit.passes.shape_analysis import may_change_tensor_metadata, propagate_shapes

# what is known of a value: its type, guaranteed when all of the flags (TypeCheck outputs) are true
Known = dict[Value, tuple[TensorType, frozenset[Value]]]


def guard_elimination(graph: Graph) -> bool:
    """Remove implied checks, move checks to definitions, coalesce adjacent ones; returns whether it changed."""
    changed = _remove_implied(graph.block, {})
    if not may_change_tensor_metadata(graph):
        changed |= any([_move_to_definitions(block) for block in _blocks(graph.block)])
    return any([_coalesce(block) for block in _blocks(graph.block)]) or changed


def _blocks(block: Block) -> list[Block]:
    found = [block]
    for node in block.nodes():
        for inner in node.blocks:
            found += _blocks(inner)
    return found


# ---- 1. removing checks other checks imply -----------------------------------------------------------------------
def _remove_implied(block: Block, known: Known) -> bool:
    changed = False
    for node in list(block.nodes()):
        if node.kind is prim.TypeCheck:
            check, removed = _without_implied(node, known)
            changed |= removed
            if check is not None:
                flag = frozenset([check.outputs[-1]])
                for value, checked, type_ in zip(check.inputs, check.outputs, check.tys("types")):
                    known[value] = known[checked] = (type_, flag)
        elif node.kind is prim.If:
            for inner in node.blocks:
                changed |= _remove_implied(inner, dict(known))
            _learn_guarded_group(node, known)
        elif node.blocks:
            for inner in node.blocks:
                changed |= _remove_implied(inner, dict(known))
        else:
            _learn_derived(node, known)
    return changed


def _without_implied(check: Node, known: Known) -> tuple[Node | None, bool]:
    """The check without the inputs `known` implies (a new node, None if none is left), and whether any was."""
    types = check.tys("types")
    implied = [k for k, (value, type_) in enumerate(zip(check.inputs, types))
               if value in known and known[value][0].is_subtype_of(type_)]
    if not implied or not log.opt_allowed():
        return check, False
    flags = sorted(frozenset().union(*(known[check.inputs[k]][1] for k in implied)), key=lambda v: v.unique)
    kept = [k for k in range(len(types)) if k not in implied]
    graph = check.graph
    new = None
    with graph.insert_point_guard(check):
        if kept:
            new = graph.insert_node(graph.create(prim.TypeCheck, [check.inputs[k] for k in kept], len(kept) + 1))
            new.tys_("types", [types[k] for k in kept])
            for k, output in zip(kept, new.outputs):
                output.set_type(types[k])
                check.outputs[k].replace_all_uses_with(output)
            new.outputs[-1].set_type(BoolType.get())
        flag = _all_of(([new.outputs[-1]] if new is not None else []) + flags, graph)
    for k in implied:
        check.outputs[k].replace_all_uses_with(check.inputs[k])
    check.outputs[-1].replace_all_uses_with(flag)
    check.destroy()
    return new, True


def _all_of(flags: list[Value], graph: Graph) -> Value:
    """A bool that is true when all these flags are (`aten::__and__` of them), at the insertion point."""
    result = flags[0]
    for flag in flags[1:]:
        result = graph.insert(aten.__and__, (result, flag))
    return result


def _learn_guarded_group(branch: Node, known: Known) -> None:
    """The outputs of `If(TypeCheck flag) { FusionGroup(checked inputs) } else {...}` have the group's types."""
    flag = branch.input()
    if flag.node.kind is not prim.TypeCheck or flag is not flag.node.outputs[-1]:
        return
    returned = branch.blocks[0].return_node.inputs
    group = returned[0].node if returned else None
    if group is None or group.kind is not prim.FusionGroup or any(v.node is not group for v in returned):
        return
    for output, value in zip(branch.outputs, returned):
        if isinstance(value.type, TensorType) and value.type.dtype is not None:
            known[output] = (value.type.with_requires_grad(False), frozenset([flag]))


def _learn_derived(node: Node, known: Known) -> None:
    """An operator's tensor output whose type shape propagation derives from known inputs is known too."""
    tensors = [v for v in node.inputs if isinstance(v.type, TensorType)]
    if (len(node.outputs) != 1 or not tensors or node.kind in SIDE_EFFECT_KINDS or node.kind.ns != "aten"
            or not isinstance(node.output().type, TensorType) or any(v not in known for v in tensors)):
        return
    derived = _derived_type(node, known)
    if derived is not None and derived.sizes is not None and None not in derived.sizes:
        grad = any(known[v][0].requires_grad is not False for v in tensors)
        flags = frozenset().union(*(known[v][1] for v in tensors))
        known[node.output()] = (derived.with_requires_grad(None if grad else False), flags)


def _derived_type(node: Node, known: Known) -> TensorType | None:
    """The output type shape propagation gives `node` on its own, its tensor inputs of their known types."""
    scratch = Graph()
    mapping: dict[Value, Value] = {}
    for value in node.inputs:
        _copy_input(value, scratch, mapping, known)
    copy = scratch.insert_node(scratch.create_clone(node, lambda v: mapping[v], copy_blocks=False))
    scratch.register_output(copy.output())
    propagate_shapes(scratch)
    type_ = copy.output().type
    return type_ if isinstance(type_, TensorType) else None


def _copy_input(value: Value, scratch: Graph, mapping: dict[Value, Value], known: Known) -> None:
    """`value` in the scratch graph: constants and lists of constants (`dim=[0]`) copied, others as inputs."""
    if value in mapping:
        return
    node = value.node
    if node.kind is prim.Constant or (node.kind is prim.ListConstruct
                                      and all(v.node.kind is prim.Constant for v in node.inputs)):
        for element in node.inputs:
            _copy_input(element, scratch, mapping, known)
        mapping[value] = scratch.insert_node(scratch.create_clone(node, lambda v: mapping[v])).output()
    else:
        mapping[value] = scratch.add_input(type_=known[value][0] if value in known else value.type)


# ---- 2. moving checks to the definitions ---------------------------------------------------------------------------
def _move_to_definitions(block: Block) -> bool:
    changed = False
    for check in [n for n in block.nodes() if n.kind is prim.TypeCheck]:
        anchor = _definitions_end(check, block)
        if _placed_after(check, anchor, block) or not log.opt_allowed():
            continue
        if anchor is block.param_node:
            check.move_before(next(iter(block.nodes())))
        else:
            check.move_after(anchor)
        changed = True
    return changed


def _definitions_end(check: Node, block: Block) -> Node:
    """The last node of `block` defining an input of the check (the block's parameters if none does)."""
    anchor = block.param_node
    for value in check.inputs:
        node = value.node
        if node.owning_block is block and node.kind is not prim.Param and (anchor is block.param_node
                                                                            or node.is_after(anchor)):
            anchor = node
    return anchor


def _placed_after(check: Node, anchor: Node, block: Block) -> bool:
    """Whether only checks stand between `anchor` (or the block's start) and `check`."""
    node = next(iter(block.nodes())) if anchor is block.param_node else anchor.next
    while node is not check:
        if node is None or node.kind is not prim.TypeCheck:
            return False
        node = node.next
    return True


# ---- 3. coalescing adjacent checks -----------------------------------------------------------------------------------
def _coalesce(block: Block) -> bool:
    changed = False
    run: list[Node] = []
    for node in list(block.nodes()) + [block.return_node]:
        if node.kind is prim.TypeCheck:
            run.append(node)
            continue
        if len(run) > 1 and log.opt_allowed():
            _merge(run)
            changed = True
        run = []
    return changed


def _merge(checks: list[Node]) -> None:
    """One check of everything `checks` check (each value and type once), before the first of them."""
    pairs: list[tuple[Value, TensorType]] = []
    for check in checks:
        for pair in zip(check.inputs, check.tys("types")):
            if pair not in pairs:
                pairs.append(pair)
    graph = checks[0].graph
    with graph.insert_point_guard(checks[0]):
        merged = graph.insert_node(graph.create(prim.TypeCheck, [v for v, _ in pairs], len(pairs) + 1))
    merged.tys_("types", [t for _, t in pairs])
    for output, (_, type_) in zip(merged.outputs, pairs):
        output.set_type(type_)
    merged.outputs[-1].set_type(BoolType.get())
    for check in checks:
        for value, type_, output in zip(check.inputs, check.tys("types"), check.outputs):
            output.replace_all_uses_with(merged.outputs[pairs.index((value, type_))])
        check.outputs[-1].replace_all_uses_with(merged.outputs[-1])
        check.destroy()
