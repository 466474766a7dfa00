"""Remove control flow that is decided at compile time: Ifs on constants, and (if asked) loops that surely run.

Much of TorchScript's control flow is static: `for i in range(3)`, loops over a ModuleList, `while k < i` inside
such a loop, an `if` on a module's constant attribute. MLIR preparation needs it gone (tsjit/mlir/prepare.py: the
TOSA and StableHLO backend contracts accept no `scf` ops, and a dead branch's in-place op would keep a program from
value semantics). These rewrites, repeated until none applies, remove it:

- `fold_scalar_constants`: a scalar op (int, float, bool results, or lists of them that nothing writes; no
  tensors, no side effects) whose inputs are all constants (or list literals of constants: `x.device.type in
  ["cpu", "cuda"]`) is replaced by its result, computed by the operator's implementation (`list(x.size()[2:])`
  of known sizes, which F.group_norm's batch-size check multiplies); it also unpacks constant lists and answers
  `a is b` / `a is not b` of a value with itself (`query is not key` in nn.MultiheadAttention called as
  `attention(x, x, x)`) and of None with a value that cannot be None (an `Optional[Tensor]` argument given a
  tensor: nn.MultiheadAttention's `key_padding_mask is not None`, whose If otherwise keeps a branch that types
  never reach);
- `decide_isinstance`: `prim::isinstance` of a value whose type now decides it is that constant: a Union or
  Optional parameter of a function inlined where it is called with one of the members (F.gaussian_nll_loss's
  `var: Tensor | float` given a tensor: `isinstance(var, float)` is False there, and its If goes with it);
- `forward_tuple_elements`: `prim::TupleUnpack` and `prim::TupleIndex` (constant index) of a `prim::TupleConstruct`
  read its elements, so that constants packed into a tuple (`expected_hidden_size` in nn.LSTM's checks) reach the
  ops that fold them (lower_simple_tuples does the same but also runs dead code elimination without keeping the
  `aten::_assert_scalar` checks prepare.py inserts); likewise `aten::len` and `aten::__getitem__` (constant
  index) of a `prim::ListConstruct` that nothing mutates (`for t in tensors` over a list of tensors), and a copy
  of it (`list(parts)`) is a new literal of its elements;
- `forward_dict_elements`: the same for a `prim::DictConstruct` of constant keys that nothing mutates: reads by a
  constant key, `len`, `in`, `keys()`, `values()` and `items()` (`for k in d.keys(): out = out + d[k]`, whose
  loop then runs over a list literal);
- `fold_list_writes`: writes to a list literal in its block (appends, `insert`, `pop`, `l[i] = v`, `del l[i]`,
  `clear`, `reverse`, at constant positions) give the literal its final elements (a list comprehension over a
  tuple, once unrolled: nn.MultiheadAttention's `all([_check_arg_device(x) for x in tensor_args])`, which
  `aten::all` then folds on), and a read between writes reads a literal of the elements so far (a loop that reads
  the list it builds, unrolled);
- `inline_constant_ifs`: an If on a constant condition becomes the nodes of the branch it takes;
- `remove_unused_literals`: list, dict and tuple literals nothing uses go (a loop over `[[1, 2], [3, 4]]`,
  unrolled, leaves the outer literal, whose use of each row kept the rows from counting as only read);
- `peel_constant_loops`: a loop that surely runs (constant trip count and constant initial condition) runs its
  first iteration before the loop (a loop that computes tensors only where unrolling is asked for it; any other,
  such as a product of known sizes, which then folds: F.instance_norm's check), with the iteration number 0; the
  loop continues from iteration 1 and goes away once its condition or trip count is a constant that stops it (a
  loop that never runs goes away with or without unrolling):

      %r = prim::Loop(%3, %true, %x)                 %x.1 = aten::add(%x, %zero)   (the body, i = 0)
        block0(%i, %x.2):                   ->        %r = prim::Loop(%2, %c.1, %x.1)
          %x.3 = aten::add(%x.2, %i)                    block0(%j, %x.2):
          -> (%true, %x.3)                                %i = aten::add(%j, %one) ...

A loop whose body always continues (a `for`) has all its iterations peeled at once, a `while` one at a time (its
condition must fold first). At most `UNROLL_LIMIT` iterations of one loop are peeled. Unlike constant_propagation,
folding here runs the JIT-only scalar builtins and never touches tensors, so it is cheap and safe on graphs that
are not yet typed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from tsjit import log
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value, must_be_none
from tsjit.ir.graph import Block, Graph, Node, Use, Value
from tsjit.ir.symbols import aten, prim
from tsjit.ops.matching import find_operator_for_node
from tsjit.passes.constant_propagation import inline_if_branch
from tsjit.passes.peephole import must_not_be_none

UNROLL_LIMIT = 64
_FOLDABLE_TYPES = (ts.IntType, ts.FloatType, ts.BoolType)
_IDENTITY_TESTS = frozenset({aten.__is__, aten.__isnot__})
_SIDE_EFFECTS = frozenset({prim.Print, aten.warn, prim.RaiseException, prim.Uninitialized})


def eliminate_static_control_flow(graph: Graph, unroll_loops: bool | Callable[[Node], bool] = True) -> bool:
    """Fold and inline (and peel loops, if asked) until nothing changes. `unroll_loops` says which loops that
    compute tensors are peeled: all, none, or those a predicate picks (MLIR preparation picks the few loops
    torch-mlir cannot follow, so that one such loop does not unroll every other loop of the program)."""
    unrolls = unroll_loops if callable(unroll_loops) else lambda loop: unroll_loops
    changed = False
    peeled: dict[Node, int] = {}
    while fold_scalar_constants(graph) | decide_isinstance(graph) | forward_tuple_elements(graph) | \
            forward_list_elements(graph) | forward_dict_elements(graph) | fold_list_writes(graph) | \
            inline_constant_ifs(graph) | peel_constant_loops(graph, peeled, unrolls) | remove_unused_literals(graph):
        changed = True
    return changed


def fold_scalar_constants(graph: Graph) -> bool:
    """Replace scalar ops on constant inputs by their results."""
    changed = False
    for node in list(graph.all_nodes()):
        if _foldable(node) and log.opt_allowed():
            changed |= _fold(graph, node)
    return changed


def _foldable(node: Node) -> bool:
    if node.kind in _IDENTITY_TESTS and _identity_decided(node) is not None:
        return True
    if node.kind is prim.ListUnpack:
        return _is_constant(node.input()) and len(constant_value(node.input().node)) == len(node.outputs)
    if node.kind in _SIDE_EFFECTS or node.blocks or not node.outputs or not node.inputs:
        return False
    if not all(isinstance(v.type, _FOLDABLE_TYPES) or _is_scalar_list(v) and _is_read_only(v) for v in node.outputs):
        return False
    return all(_is_constant_scalar(v) or _is_constant_list(v) for v in node.inputs)


def decide_isinstance(graph: Graph) -> bool:
    """Replace isinstance checks that the checked value's type decides by their answer."""
    changed = False
    for node in list(graph.all_nodes()):
        if node.kind is prim.isinstance and (answer := _isinstance_decided(node)) is not None and log.opt_allowed():
            changed |= _replace_by_constants(graph, node, [answer])
    return changed


def _isinstance_decided(node: Node) -> bool | None:
    true_types, _, statically_true = ts.isinstance_partition(node.input().type, node.tys("types"))
    return True if statically_true else False if not true_types else None


def fold_list_writes(graph: Graph) -> bool:
    """Writes to a list literal in its own block go into literals: the literal, moved after its last write,
    holds the final elements, the reads before it (ops that write no argument) read a new literal of the elements
    so far, and a `pop` is the element it removes. The writes are those of `_LIST_WRITES`, at constant positions
    that exist (a write that would fail stays, and so does its literal). A list comprehension over a tuple, once
    unrolled (nn.MultiheadAttention's `all([_check_arg_device(x) for x in tensor_args])`, which `aten::all` then
    folds on):

        %l : bool[] = prim::ListConstruct()                    %l : bool[] = prim::ListConstruct(%a, %b)
        %1 : bool[] = aten::append(%l, %a)              ->     %r : bool = aten::all(%l)
        %2 : bool[] = aten::append(%l, %b)
        %r : bool = aten::all(%l)

    a loop that reads the list it appends to, unrolled (a permutation built position by position, in
    tsjit/mlir/decompositions.py's movedim; torch-mlir, which does not follow appends, saw the empty literal):

        %l : int[] = prim::ListConstruct()                     %n : int = aten::len(%0)   (%0 = ListConstruct())
        %n : int = aten::len(%l)                        ->     %n.1 : int = aten::len(%1) (%1 = ListConstruct(%a))
        %1 : int[] = aten::append(%l, %a)                      %l : int[] = prim::ListConstruct(%a, %b)
        %n.1 : int = aten::len(%l)
        %2 : int[] = aten::append(%l, %b)

    and a list edited in place (`l.insert(0, 5); v = l.pop(); l[1] = 10`: the literal is `[5, 10, 2]`, `v` is 3).
    Only literals whose uses are such writes (their list results unused) and reads are rewritten, and the graph's
    return of the list (or of a tuple holding it), which comes after every write: anything else (a loop or a
    branch carrying the list, a container or a call keeping it) could see it change.
    """
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind is prim.ListConstruct]:
        events = _writes_and_reads(node.output())
        if events is None or _final_elements(node, events) is None or not log.opt_allowed():
            continue
        _split_at_writes(graph, node, events)
        changed = True
    return changed


class _Undecided(Exception):
    """A write whose position is not a constant."""


def _position(node: Node, index: int) -> int:
    value = node.input(index)
    if not _is_constant_scalar(value) or type(constant_value(value.node)) is not int:
        raise _Undecided
    return constant_value(value.node)


# each write applied to the elements (Values) as Python applies it to a list; `pop` returns what it removes
_LIST_WRITES: dict = {
    aten.append: lambda elements, node: elements.append(node.input(1)),
    aten.insert: lambda elements, node: elements.insert(_position(node, 1), node.input(2)),
    aten.pop: lambda elements, node: elements.pop(_position(node, 1) if len(node.inputs) > 1 else -1),
    aten._set_item: lambda elements, node: elements.__setitem__(_position(node, 1), node.input(2)),
    aten.Delete: lambda elements, node: elements.__delitem__(_position(node, 1)),
    aten.clear: lambda elements, node: elements.clear(),
    aten.reverse: lambda elements, node: elements.reverse(),
}


def _is_write(use: Use) -> bool:
    return use.user.kind in _LIST_WRITES and use.offset == 0


def _writes_and_reads(value: Value) -> list[tuple[Node, Use]] | None:
    """The writes to `value` and its reads in execution order, each as (the node in value's block where it
    happens, the use); None unless every use is a write in value's block, a read or the graph's return, and one
    is a write."""
    block = value.node.owning_block
    events = []
    for use in value.uses:
        user = use.user
        if _is_write(use) and user.owning_block is block and (user.kind is aten.pop or not user.has_uses()):
            events.append((user, use))
            continue
        schema = user.maybe_schema()
        if (schema is None or schema.is_mutable) and not _returned(user, block):
            return None
        events.append((_ancestor_in(user, block), use))
    if not any(_is_write(use) for _, use in events):
        return None
    return sorted(events, key=functools.cmp_to_key(_execution_order))


def _returned(user: Node, block: Block | None) -> bool:
    """Whether `user` is the graph's return, or a tuple in the graph's block that only the return uses."""
    if block is None or block.owning_node is not None:
        return False
    if user.kind is prim.TupleConstruct and user.owning_block is block:
        return all(use.user is block.return_node for use in user.output().uses)
    return user is block.return_node


def _final_elements(node: Node, events: list) -> list[Value] | None:
    """The literal's elements after its writes; None if a write's position is not a constant or would fail."""
    elements = list(node.inputs)
    try:
        for _, use in events:
            if _is_write(use):
                _LIST_WRITES[use.user.kind](elements, use.user)
    except (_Undecided, IndexError):
        return None
    return elements


def _execution_order(a: tuple[Node, Use], b: tuple[Node, Use]) -> int:
    return 0 if a[0] is b[0] else -1 if a[0].is_before(b[0]) else 1


def _ancestor_in(node: Node, block: Block | None) -> Node:
    """The node of `block` that is `node` or holds it in a nested block."""
    owner = node.owning_block
    while owner is not block and owner is not None and owner.owning_node is not None:
        node, owner = owner.owning_node, owner.owning_node.owning_block
    return node


def _split_at_writes(graph: Graph, node: Node, events: list) -> None:
    """Rewrite the literal `node` given its writes and reads in order (see fold_list_writes)."""
    elements = list(node.inputs)
    last_write = max(i for i, (_, use) in enumerate(events) if _is_write(use))
    snapshot = None
    for position, (anchor, use) in enumerate(events):
        if _is_write(use):
            removed = _LIST_WRITES[use.user.kind](elements, use.user)
            if use.user.kind is aten.pop:
                use.user.output().replace_all_uses_with(removed)
            snapshot = None
        elif position < last_write:
            if snapshot is None:
                snapshot = _literal_before(graph, anchor, elements, node.output().type)
            use.user.replace_input(use.offset, snapshot)
    node.move_after(events[last_write][0])
    node.remove_all_inputs()
    for value in elements:
        node.add_input(value)
    for _, use in events[:last_write + 1]:
        if _is_write(use):
            use.user.destroy()


def _literal_before(graph: Graph, anchor: Node, elements: list[Value], type_: ts.Type) -> Value:
    literal = graph.create(prim.ListConstruct, elements).insert_before(anchor)
    return literal.output().set_type(type_)


def _is_scalar_list(value: Value) -> bool:
    return isinstance(value.type, ts.ListType) and isinstance(value.type.elem, _FOLDABLE_TYPES)


def _is_read_only(value: Value) -> bool:
    """Whether only ops that write none of their arguments read the value (an `append` after it, a loop carrying
    it or a return would make a list's contents change or escape). A literal holding it that is only read reads
    it too (`grid = [[1, 2], [3, 4]]`, then `for row in grid`); what a read takes out of a container of lists
    (`grid[0]`) may be the list itself, so it must be only read as well (`grid[0].append(5)` writes the row)."""
    holds_lists = _holds_lists(value.type)
    for use in value.uses:
        user = use.user
        if user.kind in (prim.ListConstruct, prim.TupleConstruct):
            if not _is_read_only(user.output()):
                return False
            continue
        schema = user.maybe_schema()
        if schema is None or schema.is_mutable:
            return False
        if holds_lists and not all(_is_read_only(v) for v in user.outputs if _is_or_holds_list(v.type)):
            return False
    return True


def _holds_lists(type_: ts.Type) -> bool:
    return any(_is_or_holds_list(t) for t in type_.contained_types())


def _is_or_holds_list(type_: ts.Type) -> bool:
    return isinstance(type_, ts.ListType) or _holds_lists(type_)


def _is_constant_scalar(value: Value) -> bool:
    return value.node.kind is prim.Constant and not isinstance(value.type, ts.TensorType)


def _is_constant_list(value: Value) -> bool:
    """A list literal of constants that nothing mutates."""
    return value.node.kind is prim.ListConstruct and all(_is_constant_scalar(e) for e in value.node.inputs) and \
        _is_read_only(value)


def _value_of(value: Value):
    """The Python value of a constant or of a list literal of constants (a fresh list: the op may not keep it)."""
    if value.node.kind is prim.ListConstruct:
        return [constant_value(e.node) for e in value.node.inputs]
    return constant_value(value.node)


def _identity_decided(node: Node) -> bool | None:
    """Whether the two inputs of `aten::__is__` are surely the same object: True for one value, False for None
    and a value that cannot be None; None when it is not known."""
    a, b = node.inputs
    if a is b:
        return True
    if (must_be_none(a) and must_not_be_none(b)) or (must_be_none(b) and must_not_be_none(a)):
        return False
    return None


def _fold(graph: Graph, node: Node) -> bool:
    if node.kind in _IDENTITY_TESTS and (same := _identity_decided(node)) is not None:
        return _replace_by_constants(graph, node, [same == (node.kind is aten.__is__)])
    if node.kind is prim.ListUnpack:
        return _replace_by_constants(graph, node, constant_value(node.input().node))
    operator = find_operator_for_node(node)
    if operator is None or operator.schema.is_mutable:
        return False
    try:
        result = operator.get_operation(node)(*(_value_of(v) for v in node.inputs))
    except Exception:  # no implementation, or the op fails on these values: leave it to run
        return False
    return _replace_by_constants(graph, node, [result] if len(node.outputs) == 1 else list(result))


def _replace_by_constants(graph: Graph, node: Node, results: list) -> bool:
    with graph.insert_point_guard(node):
        for output, value in zip(node.outputs, results):
            output.replace_all_uses_with(graph.insert_constant(value, output.type))
    node.destroy()
    return True


def forward_tuple_elements(graph: Graph) -> bool:
    """Outputs of `TupleUnpack(%t)` / `TupleIndex(%t, k)` of `%t = TupleConstruct(...)` -> its inputs; the
    unpacking node is deleted."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in (prim.TupleUnpack, prim.TupleIndex)]:
        construct = node.input(0).node
        if construct.kind is not prim.TupleConstruct:
            continue
        if node.kind is prim.TupleUnpack:
            elements = list(construct.inputs)
        elif _is_constant(node.input(1)) and -len(construct.inputs) <= constant_value(node.input(1).node) < \
                len(construct.inputs):
            elements = [construct.inputs[constant_value(node.input(1).node)]]
        else:
            continue
        if not log.opt_allowed():
            continue
        for output, element in zip(node.outputs, elements):
            output.replace_all_uses_with(element)
        node.destroy()
        changed = True
    return changed


def forward_list_elements(graph: Graph) -> bool:
    """`aten::len(%l)` -> a constant, `aten::__getitem__(%l, k)` (constant k) -> the element and
    `prim::ListUnpack(%l)` -> the elements, and `aten::list(%l)` (a copy) -> a new literal of the elements, where
    `%l = prim::ListConstruct(...)` is only read (its length and elements are then those it was built with;
    `dims_a, dims_b = dims` in torch.tensordot)."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in (aten.len, aten.__getitem__, prim.ListUnpack, aten.list)]:
        construct = node.input(0).node
        if construct.kind is not prim.ListConstruct or not only_read(node.input(0)):
            continue
        if node.kind is aten.__getitem__ and not (
                _is_constant_scalar(node.input(1)) and -len(construct.inputs) <= constant_value(node.input(1).node)
                < len(construct.inputs)):
            continue
        if node.kind is prim.ListUnpack and len(node.outputs) != len(construct.inputs):
            continue
        if not log.opt_allowed():
            continue
        with graph.insert_point_guard(node):
            results = [graph.insert_constant(len(construct.inputs))] if node.kind is aten.len else \
                list(construct.inputs) if node.kind is prim.ListUnpack else \
                [_literal_before(graph, node, list(construct.inputs), node.output().type)] if node.kind is aten.list \
                else [construct.inputs[constant_value(node.input(1).node)]]
        for output, result in zip(node.outputs, results):
            output.replace_all_uses_with(result)
        node.destroy()
        if not construct.has_uses():  # (a literal of lists left would keep its elements from folding)
            construct.destroy()
        changed = True
    return changed


def only_read(value: Value) -> bool:
    """Whether every use of the value is an unpacking, an op that writes none of its arguments, a
    `prim::unchecked_cast` (of an `Optional` list) whose result is only read, or the graph's return (after which
    nothing runs)."""
    for use in value.uses:
        user = use.user
        if user.kind is prim.unchecked_cast:
            if not only_read(user.output()):
                return False
        elif user.kind is not prim.ListUnpack and not _returned(user, value.node.owning_block):
            schema = user.maybe_schema()
            if schema is None or schema.is_mutable:
                return False
    return True


_DICT_READS = frozenset({aten.__getitem__, aten.get, aten.__contains__, aten.len, aten.keys, aten.values, aten.items})


def forward_dict_elements(graph: Graph) -> bool:
    """Reads of `%d = prim::DictConstruct(k0, v0, k1, v1, ...)` (constant keys, `%d` only read) -> what they read:
    `d[k]` and `d.get(k[, default])` (constant k) the value or the default, `len(d)` and `k in d` constants,
    `d.keys()`, `d.values()` and `d.items()` list literals in insertion order (a repeated key keeps its first
    position and its last value, as Python's dict). A read of a missing key stays, to raise at run time."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in _DICT_READS]:
        construct = node.input(0).node
        if construct.kind is not prim.DictConstruct or not only_read(node.input(0)) or \
                not all(_is_constant_scalar(k) for k in construct.inputs[::2]):
            continue
        entries = {constant_value(k.node): v for k, v in zip(construct.inputs[::2], construct.inputs[1::2])}
        keyed = node.kind in (aten.__getitem__, aten.get, aten.__contains__)
        if keyed and not _is_constant_scalar(node.input(1)) or \
                node.kind is aten.__getitem__ and constant_value(node.input(1).node) not in entries:
            continue
        if not log.opt_allowed():
            continue
        with graph.insert_point_guard(node):
            result = _dict_read(graph, node, entries, construct)
        node.output().replace_all_uses_with(result)
        node.destroy()
        if not construct.has_uses():
            construct.destroy()
        changed = True
    return changed


def _dict_read(graph: Graph, node: Node, entries: dict, construct: Node) -> Value:
    """The value a read of a dict literal's `entries` gives, inserted at the insert point."""
    if node.kind is aten.len:
        return graph.insert_constant(len(entries))
    if node.kind in (aten.__getitem__, aten.get, aten.__contains__):
        key = constant_value(node.input(1).node)
        if node.kind is aten.__contains__:
            return graph.insert_constant(key in entries)
        if key in entries:
            return entries[key]
        return node.input(2) if len(node.inputs) > 2 else graph.insert_constant(None, node.output().type)
    keys = [construct.inputs[2 * i] for i in range(len(construct.inputs) // 2)]
    keys = list({constant_value(k.node): k for k in reversed(keys)}.values())[::-1]  # (first positions)
    if node.kind is aten.keys:
        elements = keys
    elif node.kind is aten.values:
        elements = [entries[constant_value(k.node)] for k in keys]
    else:
        pair = node.output().type.elem
        elements = [graph.insert_node(graph.create(prim.TupleConstruct, [k, entries[constant_value(k.node)]]))
                    .output().set_type(pair) for k in keys]
    return graph.insert_node(graph.create(prim.ListConstruct, elements)).output().set_type(node.output().type)


_LITERALS = frozenset({prim.ListConstruct, prim.DictConstruct, prim.TupleConstruct})


def remove_unused_literals(graph: Graph) -> bool:
    """Delete list, dict and tuple literals whose results nothing uses (they have no effect; the literals they
    used go in the next round)."""
    unused = [n for n in graph.all_nodes() if n.kind in _LITERALS and not n.has_uses()]
    unused = [n for n in unused if log.opt_allowed()]
    for node in unused:
        node.destroy()
    return bool(unused)


def inline_constant_ifs(graph: Graph) -> bool:
    """An If on a constant condition -> the nodes of the branch it takes."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind is prim.If and n.input().node.kind is prim.Constant]:
        if node.is_in_block_list() and log.opt_allowed():  # not in a branch an earlier If dropped
            inline_if_branch(node, 0 if constant_value(node.input().node) else 1)
            changed = True
    return changed


def peel_constant_loops(graph: Graph, peeled: dict[Node, int],
                        unrolls: Callable[[Node], bool] = lambda loop: True) -> bool:
    """Peel iterations off each loop that surely runs: all of a counted loop's at once (up to UNROLL_LIMIT), one
    of any other loop, whose condition must fold before the next; remove loops that surely stop (any loop: one
    that never runs forwards its initial values, `for k in range(A.size(-1))` of a 0x0 matrix). A loop that
    computes tensors (or is not counted) is peeled only if `unrolls(loop)`. (One iteration per call, each call a
    pass over the whole graph, made unrolling a loop of n iterations cost n times the unrolled graph.)"""
    changed = False
    for loop in [n for n in graph.all_nodes() if n.kind is prim.Loop]:
        if not loop.is_in_block_list():  # inside a loop removed before
            continue
        trip, condition = loop.input(0), loop.input(1)
        if not (_is_constant(trip) and _is_constant(condition)):
            continue
        stops = not constant_value(condition.node) or constant_value(trip.node) <= 0
        if not stops and (_computes_tensors(loop) or not _is_counted(loop)) and not unrolls(loop):
            continue
        if (stops or peeled.get(loop, 0) < UNROLL_LIMIT) and log.opt_allowed():
            if stops:
                _remove_loop(loop)
            else:
                count = _iterations_to_peel(loop, peeled.get(loop, 0))
                peeled[loop] = peeled.get(loop, 0) + count
                for _ in range(count):
                    _peel(graph, loop)
            changed = True
    return changed


def _iterations_to_peel(loop: Node, peeled_before: int) -> int:
    """The iterations of a loop with a constant trip count to peel now: all that are left, up to UNROLL_LIMIT,
    if the body always continues; one otherwise."""
    if not _is_counted(loop):
        return 1
    return min(constant_value(loop.input(0).node), UNROLL_LIMIT - peeled_before)


def _is_constant(value: Value) -> bool:
    return value.node.kind is prim.Constant


def _is_counted(loop: Node) -> bool:
    """Whether the loop's body always continues (a `for`: the trip count alone bounds it). Peeling one iteration
    off a `while` whose condition depends on the arguments would leave a loop whose start condition is data,
    which the backends can only run as a counted loop with a flag: counted to INT64_MAX, it never ends."""
    condition = loop.blocks[0].outputs[0]
    return _is_constant(condition) and bool(constant_value(condition.node))


def _computes_tensors(loop: Node) -> bool:
    """Whether a value the loop carries or defines inside holds a tensor."""
    inner = [v for block in loop.blocks for node in block.all_nodes() for v in node.outputs]
    return any(_holds_tensor(v.type) for v in [*loop.outputs, *inner])


def _holds_tensor(type_: ts.Type) -> bool:
    return isinstance(type_, ts.TensorType) or any(_holds_tensor(t) for t in type_.contained_types())


def _remove_loop(loop: Node) -> None:
    for output, initial in zip(loop.outputs, loop.inputs[2:]):
        output.replace_all_uses_with(initial)
    loop.destroy()


def _peel(graph: Graph, loop: Node) -> None:
    """The first iteration before the loop, which then runs one time fewer."""
    peel_first_iteration(graph, loop)
    with graph.insert_point_guard(loop):
        loop.replace_input(0, graph.insert(aten.sub, [loop.input(0), 1]))
    _shift_iteration_number(graph, loop.blocks[0])


def _shift_iteration_number(graph: Graph, body) -> None:
    """The remaining iterations are numbered from 1: uses of the counter read `counter + 1`."""
    counter = body.inputs[0]
    if not counter.uses:
        return
    with graph.insert_point_guard(next(iter(body.nodes()), body.return_node)):
        shifted = graph.insert(aten.add, [counter, 1])
    counter.replace_uses_with_if(shifted, lambda use: use.user is not shifted.node)


def peel_first_iteration(graph: Graph, loop: Node) -> None:
    """Run a copy of the body before the loop (iteration 0, carried values = initial values) and start the loop
    from the condition and values it computed."""
    body = loop.blocks[0]
    with graph.insert_point_guard(loop):
        mapping = dict(zip(body.inputs, [graph.insert_constant(0), *loop.inputs[2:]]))
        for node in body.nodes():
            clone = graph.insert_node(graph.create_clone(node, lambda v: mapping.get(v, v)))
            mapping.update(zip(node.outputs, clone.outputs))
    for index, result in enumerate(body.outputs):
        loop.replace_input(1 + index, mapping.get(result, result))
