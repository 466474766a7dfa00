"""Rewrite in-place tensor ops into their out-of-place forms where nothing else can see the mutation.

MLIR's importer (tsjit/mlir/prepare.py) gives tensors value semantics only when no node writes a tensor in
place: torch-mlir cannot carry non-value tensors through `prim::If` and `prim::Loop` ("unsupported by backend
contract: non-value tensor type"). Accumulations like `acc -= j` are everywhere in TorchScript programs, so,
as TorchScript's own RemoveMutation pass does, an in-place op on a tensor that has no other observer becomes the
out-of-place op, and later readers of the tensor read the new value:

    %acc.1 : Tensor = aten::zeros_like(%x, ...)             %acc.1 : Tensor = aten::zeros_like(%x, ...)
    %acc.2 : Tensor = aten::sub_(%acc.1, %j, %one)    ->    %acc.2 : Tensor = aten::sub(%acc.1, %j, %one)
    %r : Tensor = aten::mul(%acc.1, %x)                     %r : Tensor = aten::mul(%acc.2, %x)

The mutated tensor must be fresh: made in the same block by an op whose result aliases nothing (not a graph
input, an attribute, a constant or a view), and read before the mutation only by ops that do not alias it (no
view, list or yield could observe the write). A loop-carried tensor qualifies when its initial value is fresh and
unused after the loop, since the loop's first iteration writes that tensor.

A write into a `select` or `slice` view of a fresh tensor (`y[0] = 3`, `y[1:] += 1`) becomes the out-of-place op
on the view and a `select_scatter` / `slice_scatter` that makes the new whole tensor:

    %row : Tensor = aten::select(%y, %zero, %zero)          %row : Tensor = aten::select(%y, %zero, %zero)
    %w : Tensor = aten::copy_(%row, %three, %false)   ->    %w : Tensor = aten::copy(%row, %three, %false)
    %r : Tensor = aten::relu(%y)                            %y.1 : Tensor = aten::select_scatter(%y, %w, %zero, %zero)
                                                            %r : Tensor = aten::relu(%y.1)

Later reads of the view (and of the op's result) read the same view of the new whole tensor, so that a second
write through the view (`v.add_(1); v.mul_(2)`) writes the whole tensor again.

A view of the tensor taken before the write and read only up to it (`x[1:2] = x[0:1]`: the source is a view of
the written tensor) sees the old value, as it did. A write into a view of a view (`x[:, 3] = 2`, `x[2, 2] = v`)
becomes a write of the outer view, one level at a time:

  %col : Tensor = aten::slice(%y, %one, %one, %two, %one)     %w : Tensor = aten::copy(%cell, %v, %false)
  %cell : Tensor = aten::select(%col, %zero, %two)      ->    %c : Tensor = aten::select_scatter(%col, %w, %zero, %two)
  %w : Tensor = aten::copy_(%cell, %v, %false)                %c.1 : Tensor = aten::copy_(%col, %c, %false)

`return_written_inputs` makes writes to the graph's own tensor inputs removable, as functionalization does in
torch.export: a written input is cloned first thing, the clone takes the input's uses (so the writes land on a
fresh tensor that this pass then removes), and its final value becomes an extra graph output, which the caller
copies back into its tensor (tsjit.mlir does), so that what the caller observes is unchanged.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Use, Value
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ops.registry import find_operator

_SCATTERS = {aten.select: aten.select_scatter, aten.slice: aten.slice_scatter}


def remove_mutation(graph: Graph) -> bool:
    """Functionalize every in-place op whose write nothing else observes; repeat until none is left."""
    changed = False
    while True:
        node = next((n for n in graph.all_nodes() if _functionalizable(n) or _view_write(n) or
                     _nested_view_write(n)), None)
        if node is None or not log.opt_allowed():
            return changed
        if _view_write(node):
            _functionalize_view_write(graph, node)
        elif _nested_view_write(node):
            _write_outer_view(graph, node)
        else:
            _functionalize(graph, node)
        changed = True


def _out_of_place(node: Node) -> Symbol | None:
    """`aten::add` for a node of `aten::add_.Tensor`, when that overload exists with the same arguments."""
    schema = node.maybe_schema()
    if schema is None or not schema.name.endswith("_") or schema.name.endswith("__"):
        return None
    first = schema.arguments[0] if schema.arguments else None
    if first is None or first.alias_info is None or not first.alias_info.is_write:
        return None
    name = schema.name[:-1]
    functional = find_operator(f"{name}.{schema.overload_name}" if schema.overload_name else name)
    if functional is None or [a.type for a in functional.schema.arguments] != [a.type for a in schema.arguments]:
        return None
    return Symbol(name)


def _functionalizable(node: Node) -> bool:
    if _out_of_place(node) is None or not isinstance(node.input(0).type, ts.TensorType):
        return False
    return _is_fresh(node.input(0), node)


def _is_fresh(value: Value, mutation: Node) -> bool:
    """Whether writing `value` at `mutation` is invisible to everything but readers after `mutation`."""
    definition = value.node
    if definition.kind is prim.Param:
        return _is_fresh_loop_carried(value, mutation)
    if definition.owning_block is not mutation.owning_block or not _origin_is_fresh(value):
        return False
    return all(_harmless_use(use, mutation) for use in value.uses)


def _is_fresh_loop_carried(value: Value, mutation: Node) -> bool:
    """A loop body's carried tensor: its initial value is written by the first iteration."""
    block = value.node.owning_block
    loop = block.owning_node if block is not None else None
    if loop is None or loop.kind is not prim.Loop or block is not mutation.owning_block or value.offset == 0:
        return False
    return _consumed_fresh(loop.input(1 + value.offset), loop) and \
        all(_harmless_use(use, mutation) for use in value.uses)


def _consumed_fresh(value: Value, consumer: Node) -> bool:
    """A fresh tensor that `consumer` takes over: nothing reads it after the consumer starts (reads inside a
    loop's body happen after its first iteration wrote it)."""
    if not all(use.user is consumer or use.user.is_before(consumer) for use in value.uses):
        return False
    return _origin_is_fresh(value) and all(_harmless_use(use, consumer) for use in value.uses)


def _origin_is_fresh(value: Value) -> bool:
    """Whether `value` is a tensor the program created that no other value aliases: the result of an op that
    returns no alias, or an If / Loop result whose every source is such a tensor used by nothing else."""
    node = value.node
    if node.kind is prim.Loop:
        return _consumed_fresh(node.input(2 + value.offset), node) and \
            _yield_is_fresh(node.blocks[0], 1 + value.offset)
    if node.kind is prim.If:
        return all(_yield_is_fresh(block, value.offset) for block in node.blocks)
    return _makes_fresh_tensor(node)


def _yield_is_fresh(block, index: int) -> bool:
    yielded = block.outputs[index]
    if yielded.node.owning_block is not block or not _origin_is_fresh(yielded):
        return False
    return all(use.user is block.return_node or _harmless_use(use, block.return_node) for use in yielded.uses)


def _makes_fresh_tensor(node: Node) -> bool:
    """An op whose results alias none of its inputs (not a view, not an in-place op)."""
    schema = node.maybe_schema() if node.kind.ns == "aten" else None
    return schema is not None and all(r.alias_info is None for r in schema.returns)


def _harmless_use(use: Use, mutation: Node, view: Node | None = None) -> bool:
    """The mutation itself (or the view it writes through), any use after it (it will read the new value), or
    an earlier read that keeps no alias (its argument has no alias annotation)."""
    user = use.user
    if user is mutation or user is view or user.is_after(mutation):
        return True
    return _keeps_no_alias(use) or _view_read_before(use, mutation)


def _argument_alias(use: Use):
    """The alias annotation of the argument `use` passes (None when it has none), or False without a schema."""
    user = use.user
    schema = user.maybe_schema() if user.kind.ns in ("aten", "prim") else None
    if schema is None or use.offset >= len(schema.arguments):
        return False
    return schema.arguments[use.offset].alias_info


def _keeps_no_alias(use: Use) -> bool:
    return _argument_alias(use) is None


def _is_view_use(use: Use) -> bool:
    """Whether the user returns a view of the used value (`aten::select(Tensor(a) self, ...) -> Tensor(a)`)."""
    alias = _argument_alias(use)
    return bool(alias) and not alias.is_write and len(use.user.outputs) == 1


def _view_read_before(use: Use, mutation: Node) -> bool:
    """A view taken before `mutation` and read, up to `mutation` only, by ops that keep no alias (or by
    `mutation` itself): it sees the value before the write, as it did before the write was removed."""
    if not _is_view_use(use) or not use.user.is_before(mutation):
        return False
    return all(u.user is mutation or (u.user.is_before(mutation) and (_keeps_no_alias(u) or
                                                                      _view_read_before(u, mutation)))
               for u in use.user.output().uses)


def _view_write(node: Node) -> bool:
    """An in-place op on a select/slice view (in the same block) of a fresh tensor that nothing else views."""
    view = node.input(0).node if node.inputs else None
    if view is None or view.kind not in _SCATTERS or view.owning_block is not node.owning_block:
        return False
    if _out_of_place(node) is None or not all(_harmless_use(use, node) for use in view.output().uses):
        return False
    base = view.input(0)
    if base.node.owning_block is not node.owning_block or not _origin_is_fresh(base):
        return False
    return all(_harmless_use(use, node, view) for use in base.uses)


def _nested_view_write(node: Node) -> bool:
    """An in-place op on a select/slice view of a select/slice view (same block), whose result nobody uses and
    whose view is read only up to the op."""
    view = node.input(0).node if node.inputs else None
    if view is None or view.kind not in _SCATTERS or view.owning_block is not node.owning_block:
        return False
    outer = view.input(0).node
    if outer.kind not in _SCATTERS or outer.owning_block is not node.owning_block or node.output().uses:
        return False
    return _out_of_place(node) is not None and all(
        use.user is node or (use.user.is_before(node) and _harmless_use(use, node)) for use in view.output().uses)


def _write_outer_view(graph: Graph, node: Node) -> None:
    view = node.input(0).node
    outer = view.input(0)
    written = _out_of_place_before(node)
    with graph.insert_point_guard(node):
        graph.insert(aten.copy_, [outer, _scatter(graph, view, written), False])
    node.destroy()


def _functional_kind(node: Node) -> Symbol:
    kind = _out_of_place(node)
    assert kind is not None, "only nodes with an out-of-place form are functionalized"
    return kind


def _functionalize_view_write(graph: Graph, node: Node) -> None:
    view = node.input(0).node
    base = view.input(0)
    written = _out_of_place_before(node)
    with graph.insert_point_guard(node):
        whole = _scatter(graph, view, written)
        later = [u for u in view.output().uses if u.user.is_after(node)] + list(node.output().uses)
    base.replace_uses_with_if(whole, lambda use: use.user.is_after(node) and use.user is not whole.node)
    if later:  # (the view read later is the same view of the new whole: a later write through it writes the whole)
        with graph.insert_point_guard(node):
            again = graph.insert(view.kind, [whole, *view.inputs[1:]]).set_type(view.output().type)
        for use in later:
            use.user.replace_input(use.offset, again)
    node.destroy()


def _scatter(graph: Graph, view: Node, written: Value) -> Value:
    """The view's base with `written` in the view's place. A slice of a whole dimension (`x[:, 3]` slices
    dimension 0 with no bounds) is its base, so its scatter is `written` itself (torch-mlir's TOSA and StableHLO
    lowerings of `slice_scatter` need constant bounds)."""
    base = view.input(0)
    if view.kind is aten.slice and _is_whole_slice(view):
        return written
    return graph.insert(_SCATTERS[view.kind], [base, written, *view.inputs[1:]]).set_type(base.type)


def _is_whole_slice(view: Node) -> bool:
    start, end, step = view.inputs[2:]
    if not all(v.node.kind is prim.Constant for v in (start, end, step)):
        return False
    return constant_value(start.node) in (None, 0) and constant_value(end.node) is None and \
        constant_value(step.node) == 1


def _out_of_place_before(node: Node) -> Value:
    """The result of `node`'s out-of-place form, inserted just before it with its inputs, type and source range."""
    functional = node.owning_graph.create(_functional_kind(node), node.inputs)
    functional.output().set_type(node.output().type)
    functional.source_range = node.source_range
    functional.insert_before(node)
    return functional.output()


def _functionalize(graph: Graph, node: Node) -> None:
    functional = _out_of_place_before(node)
    node.input(0).replace_uses_with_if(functional, lambda use: use.user.is_after(node))
    node.output().replace_all_uses_with(functional)
    node.destroy()


def return_written_inputs(graph: Graph) -> bool:
    """Clone each tensor input that an in-place op writes (directly or through views) first thing, give the
    clone the input's uses and return it as an extra graph output, one per written input in input order (see the
    module docstring; remove_mutation then removes the writes):

        graph(%x : Tensor):                                 graph(%x : Tensor):
          %r : Tensor = aten::zero_(%x)               ->      %x.w : Tensor = aten::clone(%x, %none)
          return (%r)                                         %r : Tensor = aten::zero_(%x.w)
                                                              return (%r, %x.w)
    (It changes the graph's outputs, which its caller must expect, so it does not ask
    `tsjit.log.opt_allowed()`.)
    """
    written = written_inputs(graph)
    for value in written:
        graph.register_output(_clone_first_thing(graph, value))
    return bool(written)


def _clone_first_thing(graph: Graph, value: Value) -> Value:
    """A clone of the input `value` at the top of the graph, which takes over all of `value`'s uses."""
    clone = graph.create(aten.clone, [value, graph.insert_constant(None)])
    graph.block.prepend_node(clone)
    clone.inputs[1].node.move_before(clone)
    clone.output().set_type(value.type).set_debug_name(f"{value.debug_name}.w")
    value.replace_uses_with_if(clone.output(), lambda use: use.user is not clone)
    return clone.output()


def written_inputs(graph: Graph) -> list[Value]:
    """The tensor inputs that an in-place op writes, directly or through a chain of views."""
    return [v for v in graph.inputs if isinstance(v.type, ts.TensorType) and _written_through_views(v)]


def _written_through_views(value: Value) -> bool:
    for use in value.uses:
        alias = _argument_alias(use)
        if alias and alias.is_write:
            return True
        if _is_view_use(use) and _written_through_views(use.user.output()):
            return True
    return False
