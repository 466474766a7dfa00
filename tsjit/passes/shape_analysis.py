"""Shape propagation: carry the specialized input types (dtype, rank, device) through the graph.

(seed: jit-overview.md "Required Passes": "propagates the input ranks, dtypes, devices ... to the rest of the
graph"; pytorch-ir-2018.md "Graph specialization".) After the executor gives the inputs their ArgumentSpec types,
every node's tensor outputs get the most refined type that holds for every call of the plan:

    %w : Float(*, *)  %x : Float(*, *)              %9 : Float(*, *) = aten::t(%w)
    %9 : Tensor = aten::t(%w)                  ->   %10 : Float(*, *) = aten::mm(%x, %9)
    %10 : Tensor = aten::mm(%x, %9)

Each operator's output types come from its rule (shape_rules.py, shape_rules_nn.py, shape_rules_losses.py,
shape_rules_linalg.py: type promotion, broadcasting, views, matmul, convolution, losses...), computed from what is
known of the inputs; unknown sizes stay unknown. Operators
without a rule run on meta tensors (PyTorch's own shape functions, no data): every unknown size becomes a made-up
one, twice with different made-up sizes (all 1 if those fail, say in a broadcast against a known size), and
only what all runs agree on is kept: dtype and rank, and sizes when every input size was known. Unknown Scalar
arguments run as a number of their type, unknown bools both ways (`training`, `keepdim`). Device comes from a
constant `device=` argument or from the inputs. Where an operator cannot run (an unknown int argument, a
data-dependent result, a failing meta kernel) the output keeps its unrefined type, apart from a few rank rules
(`x.view(n, -1)` has rank 2), and the pass never fails. prim::If outputs get what both branches agree on (a branch
that raises does not count); prim::Loop carries types around its body until they stop changing. Tensor lists keep
the type `Tensor[]` (list types are invariant, so a refined one would no longer match schemas); their element
type is still known when unpacking or indexing a list nobody writes to.

Both give the same results (tests/passes/test_shape_rules.py compares them), and both are cached by operator and
what is known of the inputs, so a graph that repeats an operator on like inputs (a 100-op chain, an unrolled
loop, every plan of a program) works each one out once.

Every tensor type in the graph's blocks is recomputed, so stale refinements (a traced graph's sizes) go away.
What the pass does not know is left unrefined: requires_grad, strides, values read from attributes. When the
graph may change a tensor's metadata in place (`x.unsqueeze_(0)`, `out=` arguments, calls into Python), an SSA
value's type would not hold for its whole life, so nothing is refined: see `may_change_tensor_metadata`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, NamedTuple

import torch

from tsjit import log
from tsjit.ir import types as T
from tsjit.ir.constants import constant_value, is_wrapped_number
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ops.matching import find_operator_for_node
from tsjit.passes import shape_rules_linalg, shape_rules_losses, shape_rules_nn  # noqa: F401  (rules register)
from tsjit.passes.check_strict_fusion import is_strict_fusion
from tsjit.passes.dead_code_elimination import SIDE_EFFECT_KINDS
from tsjit.passes.shape_rules import RULES, AbstractTensor, Decline, DeviceArgument, UnknownBool

# the made-up sizes of unknown dimensions, one per run (large enough for the usual kernels, even for view(-1, 8));
# if a run fails (a broadcast against a known size), all unknown sizes are 1 instead
FAKE_SIZES = (8, 12)
FALLBACK_SIZES = (1,)
# operators that change a tensor's sizes, strides or dtype in place
METADATA_MUTATORS = frozenset({
    aten.resize_, aten.resize_as_, aten.unsqueeze_, aten.squeeze_, aten.t_, aten.transpose_, aten.swapdims_,
    aten.swapaxes_, aten.as_strided_, aten.set_, aten.set_data, aten._resize_output_, aten.sparse_resize_,
    aten.sparse_resize_and_clear_,
})
# calls that may do anything to the tensors they see
OPAQUE_CALLS = frozenset({prim.PythonOp, prim.IgnoredPythonOp, prim.CallFunction, prim.CallMethod})
# operators whose output rank depends on which sizes are 1: made-up sizes cannot tell
SIZE_DEPENDENT_RANK = frozenset({aten.squeeze, aten.squeeze_copy})
# operators whose output rank is the length of their size list (argument 1), even when its values are unknown
SIZE_LIST_OPS = frozenset({aten.view, aten.reshape, aten.expand, aten.broadcast_to, aten._unsafe_view,
                           aten.view_copy, aten.expand_copy})
# operators whose output rank is the input rank plus a constant, whatever their int arguments are
RANK_DELTAS = {aten.select: -1, aten.unsqueeze: 1, aten.slice: 0, aten.narrow: 0, aten.transpose: 0,
               aten.select_copy: -1, aten.roll: 0, aten.movedim: 0}
_MAX_LOOP_ITERATIONS = 8
# inferred output types by (operator, inputs, default dtype, whether rules were used); cleared when full
_CACHE: dict[tuple, list[T.Type | None]] = {}
_CACHE_LIMIT = 16384


def propagate_shapes(graph: Graph, use_rules: bool = True) -> bool:
    """Refine every tensor type in the graph from its input types; returns whether a type changed.

    `use_rules=False` runs every operator on meta tensors (the rules' oracle in tests)."""
    if may_change_tensor_metadata(graph):
        log.graph_debug("the graph may change tensor metadata in place: only erasing stale refinements")
        return _erase_block(graph.block)
    # autocast changes dtypes, but not on meta tensors: under it (or a `with` that may turn it on) dtypes are unknown
    trust_dtypes = not torch._C._is_any_autocast_enabled() and not any(
        node.kind is prim.Enter and not is_strict_fusion(node.inputs[0].type) for node in graph.all_nodes())
    propagator = _Propagator(trust_dtypes, use_rules)
    propagator.run_block(graph.block)
    return propagator.changed


def may_change_tensor_metadata(graph: Graph, callees_known: bool = False) -> bool:
    """Whether some node may change the sizes, strides or dtype of an existing tensor (so types could lie): the
    one home of that question (the executor's peephole rules, shape propagation, MLIR's fold_static_types).

    `callees_known=True` when every graph a call can reach is checked too (MLIR preparation checks each method of
    the object graph), so calls are not opaque."""
    for node in graph.all_nodes():
        if node.kind in METADATA_MUTATORS or (node.kind in OPAQUE_CALLS and not callees_known):
            return True
        if any(node.kind_of(name) in ("g", "gs") for name in node.attribute_names()):
            return True  # forked or closure subgraphs: assume the worst of what they run
        schema = node.maybe_schema() if node.kind.ns == "aten" else None
        if schema is not None and any(arg.kwarg_only and arg.alias_info is not None and arg.alias_info.is_write
                                      for arg in schema.arguments):
            return True  # `out=` arguments (keyword-only and written to) are resized
    return False


def _erase_block(block: Block) -> bool:
    changed = False
    for node in block.nodes():
        for inner in node.blocks:
            changed |= _set_types(inner.inputs, [T.unshaped_type(v.type) for v in inner.inputs])
            changed |= _erase_block(inner)
        if node.kind is not prim.Constant:
            changed |= _set_types(node.outputs, [T.unshaped_type(v.type) for v in node.outputs])
    return changed


def _set_types(values, types) -> bool:
    changed = False
    for value, type_ in zip(values, types):
        if value.type != type_:
            log.graph_debug(f"%{value.debug_name} : {value.type} -> {type_}")
            value.set_type(type_)
            changed = True
    return changed


class _Unknown(Exception):
    """An input whose value (or a stand-in for it) is not known: the node cannot be run."""


class _Propagator:
    def __init__(self, trust_dtypes: bool, use_rules: bool):
        self.trust_dtypes = trust_dtypes
        self.use_rules = use_rules
        self.changed = False
        # the element type of tensor lists nobody writes to; kept here, as a `Float(*)[]` type would no longer
        # match the `Tensor[]` arguments of schemas (list types are invariant)
        self.elements: dict[Value, T.TensorType] = {}

    def run_block(self, block: Block) -> None:
        for node in block.nodes():
            self.visit(node)

    def visit(self, node: Node) -> None:
        handler = _STRUCTURAL.get(node.kind)
        if handler is not None:
            handler(self, node)
        elif node.blocks:
            for inner in node.blocks:
                self.set(inner.inputs, [T.unshaped_type(v.type) for v in inner.inputs])
                self.run_block(inner)
            self.set(node.outputs, [T.unshaped_type(v.type) for v in node.outputs])
        elif node.kind is not prim.Constant:
            self.visit_operator(node)

    def visit_operator(self, node: Node) -> None:
        types = None
        if any(_holds_tensor(v.type) for v in node.outputs):
            try:
                types = self.infer(node)
            except Exception as error:  # a shape function that fails leaves the type unrefined, never the pass
                log.graph_debug(f"no shapes for {node.kind}: {type(error).__name__}: {error}")
        self.refine(node.outputs, types or [None] * len(node.outputs))

    def refine(self, outputs, types) -> None:
        """Give outputs their refined types; tensor lists keep `Tensor[]` and note their element type."""
        for output, type_ in zip(outputs, types):
            if isinstance(type_, T.ListType) and isinstance(type_.elem, T.TensorType) \
                    and list_is_never_written(output):
                self.elements[output] = type_.elem
        self.set(outputs, [_refine_declared(v.type, None if isinstance(t, T.ListType) else t)
                           for v, t in zip(outputs, types)])

    def set(self, values, types) -> None:
        self.changed |= _set_types(values, types)

    # ---- inferring an operator's output types -----------------------------------------------------------------
    def infer(self, node: Node) -> list[T.Type | None] | None:
        if node.kind in SIDE_EFFECT_KINDS or node.kind.ns not in ("aten", "prim"):
            return None
        operator = find_operator_for_node(node)
        if operator is None or operator.schema.is_vararg or not operator.has_operation:
            return None
        try:
            abstract = [self.abstract(value, argument.type)
                        for value, argument in zip(node.inputs, operator.schema.arguments)]
        except _Unknown:
            return self.rank_rule(node)
        key = None if operator.depends_on_node else _cache_key(operator, abstract, self.use_rules)
        types = _CACHE.get(key) if key is not None else None
        if types is None:
            types = output_types(operator, abstract, len(node.outputs), self.use_rules, node)
            if key is not None:
                if len(_CACHE) >= _CACHE_LIMIT:
                    _CACHE.clear()
                _CACHE[key] = types
        device = _output_device(node, abstract, [a for a in _walk(abstract) if isinstance(a, AbstractTensor)])
        return [self.finish(t, device) for t in types]

    def finish(self, type_: T.Type | None, device: torch.device | None) -> T.Type | None:
        """Set the device the inputs decide and drop what the runs cannot know (requires_grad, strides)."""
        if isinstance(type_, T.TensorType):
            dtype = type_.dtype if self.trust_dtypes else None
            return T.TensorType(dtype=dtype, device=device, sizes=type_.sizes)
        if isinstance(type_, T.ListType):
            elem = self.finish(type_.elem, device)
            return T.ListType(elem) if elem is not None else None
        return None

    def abstract(self, value: Value, formal: T.Type) -> Any:
        """A stand-in for an input: its constant value, an AbstractTensor, a list of stand-ins or a placeholder."""
        node, type_ = value.node, value.type
        if formal in _DEVICE_FORMALS:  # meta is passed instead; a constant device is the output's
            return DeviceArgument(_constant(value) if node.kind is prim.Constant else None)
        if node.kind is prim.Constant:
            constant = _constant(value)
            if is_wrapped_number(constant):  # a traced Python number promotes as one (ir/constants.py)
                return constant.item()
            if isinstance(constant, torch.Tensor):
                return AbstractTensor(constant.dtype, constant.device, tuple(constant.shape))
            return constant
        if isinstance(type_, T.TensorType):
            if type_.dtype is None or type_.rank is None or type_.undefined is not False:
                raise _Unknown
            return AbstractTensor(type_.dtype, type_.device, type_.sizes or ())
        if node.kind is prim.ListConstruct and list_is_never_written(value):
            element = formal.elem if isinstance(formal, T.ListType) else T.AnyType.get()
            return [self.abstract(v, element) for v in node.inputs]
        if isinstance(formal, T.NumberType) and isinstance(type_, T.IntType | T.FloatType | T.BoolType):
            return _Placeholder(type_)  # a Scalar's value does not change shapes, its type may change the dtype
        if isinstance(formal, T.BoolType):
            return UnknownBool()  # `training`, `keepdim`: every run tries both values
        raise _Unknown

    def rank_rule(self, node: Node) -> list[T.Type | None] | None:
        """Ranks that follow from the operator alone when int arguments are unknown (`x.view(n, -1)`); sizes too
        for a select at an unknown index."""
        self_type = node.inputs[0].type if node.inputs else None
        if not isinstance(self_type, T.TensorType) or self_type.rank is None or len(node.outputs) != 1:
            return None
        if node.kind in SIZE_LIST_OPS and len(node.inputs) > 1:
            sizes = node.inputs[1]
            if sizes.node.kind is not prim.ListConstruct or not list_is_never_written(sizes):
                return None
            rank = len(sizes.node.inputs)
        elif node.kind in RANK_DELTAS:
            rank = self_type.rank + RANK_DELTAS[node.kind]
        else:
            return None
        dtype = self_type.dtype if self.trust_dtypes else None
        known = _selected_sizes(node, self_type) or (None,) * rank
        return [T.TensorType(dtype=dtype, device=self_type.device, sizes=known)]


def _selected_sizes(node: Node, self_type: T.TensorType) -> tuple[int | None, ...] | None:
    """The sizes of `select(self, dim, index)` when `index` is unknown (a loop's counter: `xs[t]`): the index
    decides only whether the call fails, and the sizes are self's without `dim`, which must be a constant."""
    if node.kind is not aten.select or node.inputs[1].node.kind is not prim.Constant or self_type.sizes is None:
        return None
    dim = _constant(node.inputs[1])
    rank = len(self_type.sizes)
    if type(dim) is not int or not -rank <= dim < rank:
        return None
    return tuple(s for i, s in enumerate(self_type.sizes) if i != dim % rank)


class _Placeholder(NamedTuple):
    """An int, float or bool Scalar argument of unknown value: its type, not its value, may matter."""

    type_: T.Type

    def value(self) -> Any:
        return {T.IntType: 2, T.FloatType: 0.5, T.BoolType: True}[type(self.type_)]


_DEVICE_FORMALS = (T.DeviceType.get(), T.OptionalType(T.DeviceType.get()))
_MAX_UNKNOWN_BOOLS = 3


def _constant(value: Value) -> Any:
    return constant_value(value.node)


def _walk(abstract: Any) -> Iterator[Any]:
    for item in abstract:
        if isinstance(item, list):
            yield from _walk(item)
        else:
            yield item


def output_types(operator, abstract: list[Any], count: int, use_rules: bool = True, node: Node | None = None
                 ) -> list[T.Type | None]:
    """An operator's output types (dtype and sizes) for inputs known as `abstract`: from its rule, else from
    running it on meta tensors; sizes only when every input size is known. Raises where the operator fails."""
    exact = all(None not in t.sizes for t in _walk(abstract) if isinstance(t, AbstractTensor)) and not any(
        isinstance(a, _Placeholder | UnknownBool) for a in _walk(abstract))
    per_output = apply_rule(operator, abstract, count) if use_rules else None
    if per_output is None:
        per_output = _run_on_meta(operator.get_operation(node), abstract, count, exact)
    if exact:
        return per_output
    forget_rank = Symbol(operator.schema.name) in SIZE_DEPENDENT_RANK
    return [None if t is None else _without_sizes(t, forget_rank) for t in per_output]


def apply_rule(operator, abstract: list[Any], count: int) -> list[T.Type | None] | None:
    """The rule's output types, or None without a rule (or when it declines). Raises ShapeError where the
    operator would fail."""
    rule = RULES.get(operator.schema.operator_name)
    if rule is None:
        return None
    try:
        result = rule(*[_rule_argument(a) for a in abstract])
    except Decline:
        return None
    types = result if isinstance(result, list) else [result]
    return types if len(types) == count else None


def _run_on_meta(operation, abstract: list[Any], count: int, exact: bool) -> list[T.Type | None]:
    """The output types of running the operation on meta tensors: once with the known sizes, else with made-up
    sizes for the unknown ones, twice (all 1 if that fails), keeping what the runs agree on."""
    try:
        results = [_results(operation(*args), count)
                   for args in _materialize_runs(abstract, FAKE_SIZES[:1] if exact else FAKE_SIZES)]
    except _Unknown:
        return [None] * count
    except Exception:
        if exact:
            raise
        results = [_results(operation(*args), count) for args in _materialize_runs(abstract, FALLBACK_SIZES)]
    return [_merge_all([_type_of_result(r[i]) for r in results]) for i in range(count)]


def _rule_argument(item: Any) -> Any:
    """What a rule receives for an input: unknown Scalars as a number of their type, lists item by item."""
    if isinstance(item, _Placeholder):
        return item.value()
    if isinstance(item, list):
        return [_rule_argument(i) for i in item]
    return item


def _cache_key(operator, abstract: list[Any], use_rules: bool) -> tuple | None:
    """What decides an operator's inferred types: its inputs (constants with their Python type, as 1, 1.0 and True
    are equal keys otherwise) and the default dtype; None when some constant is not hashable."""
    try:
        key = (operator, tuple(_frozen(a) for a in abstract), torch.get_default_dtype(), use_rules)
        hash(key)
    except TypeError:
        return None
    return key


def _frozen(item: Any) -> Any:
    if isinstance(item, list):
        return (list, tuple(_frozen(i) for i in item))
    if isinstance(item, UnknownBool):
        return UnknownBool
    return type(item), item


def _materialize_runs(abstract: list[Any], fakes: tuple[int, ...]) -> Iterator[list[Any]]:
    """The argument lists to run: each made-up size with each choice of the unknown bools."""
    bools = [item for item in _walk(abstract) if isinstance(item, UnknownBool)]
    if len(bools) > _MAX_UNKNOWN_BOOLS:
        raise _Unknown
    for fake in fakes:
        for choice in itertools.product((False, True), repeat=len(bools)):
            values: dict[int, Any] = {id(b): c for b, c in zip(bools, choice)}
            yield [_materialize(a, fake, values) for a in abstract]


def _materialize(item: Any, fake: int, bools: dict[int, Any]) -> Any:
    if isinstance(item, AbstractTensor):
        sizes = [fake if size is None else size for size in item.sizes]
        return torch.empty(sizes, dtype=item.dtype, device="meta")
    if isinstance(item, _Placeholder):
        return item.value()
    if isinstance(item, UnknownBool):
        return bools[id(item)]
    if isinstance(item, DeviceArgument):
        return torch.device("meta")
    if isinstance(item, list):
        return [_materialize(i, fake, bools) for i in item]
    return item


def _results(result: Any, count: int) -> list[Any]:
    if count == 1:
        return [result]
    return list(result) if isinstance(result, tuple | list) else [None] * count


def _type_of_result(result: Any) -> T.Type | None:
    if isinstance(result, torch.Tensor):
        if result.layout != torch.strided:
            return None
        return T.TensorType(dtype=result.dtype, sizes=tuple(result.shape))
    if isinstance(result, list) and result and all(isinstance(r, torch.Tensor) for r in result):
        elements = [_type_of_result(r) for r in result]
        merged = _merge_all(elements)
        return T.ListType(merged) if merged is not None else None
    return None


def _merge_all(types: list[T.Type | None]) -> T.Type | None:
    if not types or any(t is None for t in types):
        return None
    first = types[0]
    if isinstance(first, T.TensorType):
        merged = first
        for t in types[1:]:
            if not isinstance(t, T.TensorType):
                return None
            merged = merged.merge(t)
        return merged
    if isinstance(first, T.ListType) and all(isinstance(t, T.ListType) for t in types):
        elem = _merge_all([t.elem for t in types])  # type: ignore[union-attr]
        return T.ListType(elem) if elem is not None else None
    return None


def _without_sizes(type_: T.Type, forget_rank: bool) -> T.Type:
    """Made-up sizes decide no size, and for some operators no rank either."""
    if isinstance(type_, T.TensorType):
        return type_.with_rank(None if forget_rank else type_.rank)
    if isinstance(type_, T.ListType):
        return T.ListType(_without_sizes(type_.elem, forget_rank))
    return type_


def _output_device(node: Node, abstract: list[Any], tensors: list[AbstractTensor]) -> torch.device | None:
    """A constant `device=` argument, else the one device all tensor inputs are on (unknown if they differ)."""
    for item in abstract:
        if isinstance(item, DeviceArgument) and item.device is not None:
            return item.device
    if node.kind is aten.cpu:
        return torch.device("cpu")
    if node.kind in (aten.cuda, aten.mps, aten.xpu) or not tensors:
        return None
    devices = {t.device for t in tensors}
    return devices.pop() if len(devices) == 1 else None


def list_is_never_written(value: Value) -> bool:
    """Whether every use of a list only reads it, so what built it is what it holds."""
    for use in value.uses:
        user = use.user
        if user.kind in (prim.ListUnpack, aten.len, aten.__getitem__, aten.format):
            continue
        if user.kind.ns != "aten":
            return False
        schema = user.maybe_schema()
        if schema is None or use.offset >= len(schema.arguments):
            return False
        alias = schema.arguments[use.offset].alias_info
        if alias is not None and (alias.is_write or alias.after_set):
            return False
    return True


def _holds_tensor(type_: T.Type) -> bool:
    return isinstance(type_, T.TensorType) or any(_holds_tensor(t) for t in type_.contained_types())


def _refine_declared(declared: T.Type, refined: T.Type | None) -> T.Type:
    """The refined type where it fits the declared one, else the declared type without stale refinements."""
    unshaped = T.unshaped_type(declared)
    if refined is not None and T.unshaped_type(refined).is_subtype_of(unshaped):
        return refined
    return unshaped


# ---- control flow and containers ---------------------------------------------------------------------------------
def _join(a: T.Type, b: T.Type, declared: T.Type) -> T.Type:
    """What two types flowing into one value agree on, within the declared type."""
    if isinstance(a, T.TensorType) and isinstance(b, T.TensorType):
        return _refine_declared(declared, a.merge(b))
    if isinstance(a, T.TupleType) and isinstance(b, T.TupleType) and isinstance(declared, T.TupleType) \
            and len(a.elements) == len(b.elements) == len(declared.elements):
        return declared.with_contained([_join(x, y, d) for x, y, d in zip(a.elements, b.elements,
                                                                          declared.elements)])
    return T.unshaped_type(declared)


def _raises(block: Block) -> bool:
    return any(node.kind is prim.RaiseException for node in block.nodes())


def _visit_if(self: _Propagator, node: Node) -> None:
    then_block, else_block = node.blocks
    self.run_block(then_block)
    self.run_block(else_block)
    types = []
    for output, a, b in zip(node.outputs, then_block.outputs, else_block.outputs):
        if _raises(then_block) and not _raises(else_block):
            types.append(_refine_declared(output.type, b.type))
        elif _raises(else_block) and not _raises(then_block):
            types.append(_refine_declared(output.type, a.type))
        else:
            types.append(_join(a.type, b.type, output.type))
    self.set(node.outputs, types)


def _visit_loop(self: _Propagator, node: Node) -> None:
    """Types carried around the body until they stop changing. The search for the fixed point sets types it then
    joins back, so whether the pass changed anything is decided by comparing the loop's types before and after."""
    changed_before, types_before = self.changed, _loop_types(node)
    self.changed = False
    _find_loop_fixed_point(self, node)
    self.changed = changed_before or (self.changed and _loop_types(node) != types_before)


def _loop_types(node: Node) -> list:
    values = list(node.outputs)
    for block in node.blocks:
        values += block.inputs
        for inner in block.all_nodes():
            values += inner.outputs
            for nested in inner.blocks:
                values += nested.inputs
    return [value.type for value in values]


def _find_loop_fixed_point(self: _Propagator, node: Node) -> None:
    body = node.blocks[0]
    declared = [T.unshaped_type(v.type) for v in node.outputs]
    carried = [_refine_declared(d, v.type) for d, v in zip(declared, node.inputs[2:])]
    for _ in range(_MAX_LOOP_ITERATIONS):
        self.set(body.inputs[1:], carried)
        self.run_block(body)
        joined = [_join(c, out.type, d) for c, out, d in zip(carried, body.outputs[1:], declared)]
        if joined == carried:
            break
        carried = joined
    else:  # no fixed point: run the body once more from the unrefined types
        carried = declared
        self.set(body.inputs[1:], carried)
        self.run_block(body)
    self.set(node.outputs, carried)


def _visit_tuple_construct(self: _Propagator, node: Node) -> None:
    declared = node.output().type
    if isinstance(declared, T.TupleType) and len(declared.elements) == len(node.inputs):
        refined = declared.with_contained([_refine_declared(d, v.type)
                                           for d, v in zip(declared.elements, node.inputs)])
        self.set(node.outputs, [refined])
    else:
        self.set(node.outputs, [T.unshaped_type(declared)])


def _visit_tuple_unpack(self: _Propagator, node: Node) -> None:
    tuple_type = node.inputs[0].type
    elements = tuple_type.elements if isinstance(tuple_type, T.TupleType) else ()
    if len(elements) == len(node.outputs):
        self.set(node.outputs, [_refine_declared(v.type, e) for v, e in zip(node.outputs, elements)])
    else:
        self.set(node.outputs, [T.unshaped_type(v.type) for v in node.outputs])


def _visit_tuple_index(self: _Propagator, node: Node) -> None:
    tuple_type, index = node.inputs[0].type, node.inputs[1]
    output = node.output()
    if isinstance(tuple_type, T.TupleType) and index.node.kind is prim.Constant:
        position = constant_value(index.node)
        if isinstance(position, int) and -len(tuple_type.elements) <= position < len(tuple_type.elements):
            self.set([output], [_refine_declared(output.type, tuple_type.elements[position])])
            return
    self.set([output], [T.unshaped_type(output.type)])


def _visit_list_construct(self: _Propagator, node: Node) -> None:
    element_types = [v.type for v in node.inputs]
    merged = _merge_all(element_types) if all(isinstance(t, T.TensorType) for t in element_types) else None
    self.refine(node.outputs, [T.ListType(merged) if merged is not None else None])


def _visit_list_unpack(self: _Propagator, node: Node) -> None:
    source = node.inputs[0]
    refined: list[T.Type | None] = [None] * len(node.outputs)
    if source.node.kind is prim.ListConstruct and len(source.node.inputs) == len(node.outputs) \
            and list_is_never_written(source):
        refined = [v.type for v in source.node.inputs]
    elif source in self.elements:
        refined = [self.elements[source]] * len(node.outputs)
    self.set(node.outputs, [_refine_declared(v.type, t) for v, t in zip(node.outputs, refined)])


def _visit_getitem(self: _Propagator, node: Node) -> None:
    source, output = node.inputs[0], node.output()
    if source in self.elements:
        self.set([output], [_refine_declared(output.type, self.elements[source])])
    else:
        self.visit_operator(node)


def _visit_constant_chunk(self: _Propagator, node: Node) -> None:
    """prim::ConstantChunk: pieces of the input's dtype, device and rank; along the chunked dimension, the sizes
    `chunk` gives when the input's is known (else unknown)."""
    source = node.input().type
    pieces: list[T.TensorType | None] = [None] * len(node.outputs)
    rank = source.rank if isinstance(source, T.TensorType) else None
    if isinstance(source, T.TensorType) and source.sizes is not None and rank and -rank <= node.i("dim") < rank:
        dim, size = node.i("dim"), source.sizes[node.i("dim")]
        each = -(-size // node.i("chunks")) if size else None
        for k in range(len(node.outputs)):
            sizes = list(source.sizes)
            sizes[dim] = None if each is None else max(min(each, size - k * each), 0)
            pieces[k] = source.with_sizes(sizes).with_requires_grad(None)
    self.set(node.outputs, [_refine_declared(v.type, piece) for v, piece in zip(node.outputs, pieces)])


def _visit_cast(self: _Propagator, node: Node) -> None:
    output = node.output()
    self.set([output], [_refine_declared(output.type, node.inputs[0].type)])


_STRUCTURAL = {
    prim.If: _visit_if, prim.Loop: _visit_loop, prim.TupleConstruct: _visit_tuple_construct,
    prim.TupleUnpack: _visit_tuple_unpack, prim.TupleIndex: _visit_tuple_index,
    prim.ListConstruct: _visit_list_construct, prim.ListUnpack: _visit_list_unpack,
    aten.__getitem__: _visit_getitem, prim.unchecked_cast: _visit_cast, prim.ConstantChunk: _visit_constant_chunk,
    prim.unchecked_unwrap_optional: _visit_cast, aten._unwrap_optional: _visit_cast,
}
