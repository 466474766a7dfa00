"""AliasDb: which values may share memory and which nodes write it (seed: jit-overview.md "Handling Mutability").

    db = AliasDb(graph)
    db.may_alias(view, x)                      # aten::view(Tensor(a) self, ...) -> Tensor(a): True
    db.has_writers(x)                          # some node writes memory x may alias (aten::add_ on it)
    db.move_after_topologically_valid(n, m)    # reorder only when no data or memory hazard forbids it

Building walks the graph once and records, in a MemoryDAG, "may point to" edges read from the schemas' alias
annotations (`Tensor(a)` shares set a with the input in set a, `Tensor(a!)` is written, `(a -> *)` enters the
wildcard set, unannotated returns are fresh). The analysis is flow-insensitive: a write anywhere in the graph
counts for every query.

Wildcards: memory tsjit cannot follow. Each mutable type has a wildcard set (all tensors share one, `int[]`
has its own) made of the caller's memory of that type and every value "stored away": put into a list, dict,
tuple or object attribute, passed to prim::fork, to an argument annotated `(a -> *)`, or to a node without a
schema (calls, Python ops) or an operator registered `conservative`. Graph inputs may alias each other (the
caller's memory); what is read back out of a container or attribute, or returned by unknown code, may be
anything in the set; a fresh value that was stored away still aliases no input. `Any` may alias every set.
Nodes without a schema and conservative operators are also assumed to write all their inputs.

Control flow: prim::If outputs may be either block's output; prim::Loop carried values may be the initial
value or any iteration's. prim::fork hands its inputs to its `Subgraph`, run on another thread: they are
stored away, and the aten::wait on its future writes them if the subgraph writes its inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from tsjit.ir import operator_hook
from tsjit.ir.alias_info import WILDCARD, AliasInfo
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.memory_dag import Element, MemoryDAG
from tsjit.ir.schema import FunctionSchema
from tsjit.ir.symbols import aten, cuda, prim
from tsjit.ir.types import (
    AnyClassType,
    AnyListType,
    AnyType,
    AwaitType,
    ClassType,
    DictType,
    FutureType,
    InterfaceType,
    ListType,
    OptionalType,
    RRefType,
    TensorType,
    TupleType,
    Type,
    UnionType,
    unshaped_type,
)

# node kinds that always have side effects (the seed's Node::hasSideEffects); the grad mode's setter and getter
# too (torch registers both conservative), so `with torch.no_grad():` keeps its order and is never dead code
SIDE_EFFECT_KINDS = frozenset({
    prim.PythonOp, prim.IgnoredPythonOp, prim.Print, prim.RaiseException, prim.SetAttr, aten.warn, aten.save,
    aten.manual_seed, aten.set_grad_enabled, aten.is_grad_enabled, prim.AddStatValue, prim.TimePoint,
    prim.CallFunction, prim.CallMethod,
    prim.BailoutTemplate, prim.BailOut, prim.rpc_async, prim.rpc_sync, prim.rpc_remote, aten.wait,
    cuda.set_stream, cuda._set_device, cuda._current_device, cuda.synchronize, prim.Enter, prim.Exit,
})
# kinds whose mutable outputs are new memory
_CREATOR_KINDS = frozenset({
    prim.Constant, prim.Uninitialized, prim.CreateObject, prim.EmptyListLiteral, prim.AutogradZero,
    prim.AutogradAdd, prim.BroadcastSizes, prim.ChunkSizes, prim.isinstance,
})
_CONTAINER_CONSTRUCT_KINDS = frozenset({prim.TupleConstruct, prim.ListConstruct, prim.DictConstruct})
# kinds that read values out of a container or object: what comes out may be anything that went in
_EXTRACTOR_KINDS = frozenset({
    prim.TupleUnpack, prim.TupleIndex, prim.TupleSlice, prim.ListUnpack, prim.GetAttr, prim.DictIndex,
    prim.ListIndex,
})
# kinds whose output i is (a view of) input i, or of the last input when there are fewer inputs
_FORWARDING_KINDS = frozenset({
    prim.unchecked_cast, prim.ConstantChunk, prim.TypeCheck, prim.RequiresGradCheck, prim.profile, prim.Guard,
})
# kinds that only read their inputs (their outputs, if any, are numbers), whatever schema they have
_READER_KINDS = frozenset({
    prim.Print, prim.RaiseException, prim.ImplicitTensorToNum, prim.AutogradAnyNonZero, prim.AutogradAllZero,
    prim.AutogradAllNonZero,
})
_ANY_KEY = "Any"
_ANY_CONTAINERS = (AnyListType.get(), AnyClassType.get())


# ---- mutable types -----------------------------------------------------------------------------------------------
def is_mutable_type(type_: Type) -> bool:
    """Types whose values can be written to or hold something that can: tensors, lists, dicts, objects..."""
    return isinstance(type_, TensorType) or bool(_alias_types(type_))  # tensors first: most values, costly hash


def _alias_types(type_: Type) -> dict[str, Type]:
    """The wildcard sets a value of `type_` belongs to, each with the (unrefined) type it stands for; none for
    immutable types (ints, strings, tuples of them). Remembered per type (callers must not change the dict):
    every AliasDb asks it for every value.

    Tensors of any refinement share the set "Tensor"; lists, dicts, objects and futures have a set per
    (unrefined) type; tuples, optionals and unions belong to the sets of what they may hold.
    """
    try:
        return _ALIAS_TYPES[type_]
    except KeyError:
        if len(_ALIAS_TYPES) >= _ALIAS_TYPES_LIMIT:
            _ALIAS_TYPES.clear()  # class types are compared by identity: keep old ones from piling up
        found = _ALIAS_TYPES[type_] = _compute_alias_types(type_)
        return found
    except TypeError:  # an unhashable type
        return _compute_alias_types(type_)


_ALIAS_TYPES: dict[Type, dict[str, Type]] = {}
_ALIAS_TYPES_LIMIT = 4096


def _compute_alias_types(type_: Type) -> dict[str, Type]:
    if isinstance(type_, TensorType):
        return {"Tensor": TensorType.get()}
    if type_ is AnyType.get():
        return {_ANY_KEY: type_}
    if isinstance(type_, ListType | DictType | ClassType | InterfaceType) or type_ in _ANY_CONTAINERS:
        unshaped = unshaped_type(type_)
        return {str(unshaped): unshaped}
    if isinstance(type_, FutureType | AwaitType | RRefType):
        unshaped = unshaped_type(type_)
        return {str(unshaped): unshaped} if _alias_types(type_.elem) else {}
    if isinstance(type_, TupleType | OptionalType | UnionType):
        return {key: t for inner in type_.contained_types() for key, t in _alias_types(inner).items()}
    return {}


def has_side_effects(node: Node) -> bool:
    """Whether running `node` does something besides computing its outputs (print, raise, set an attribute,
    call unknown code); such nodes are never removed, merged or reordered with each other. As in TorchScript,
    the effects of a forked graph belong to the aten::wait on its future, so an unused prim::fork is dead."""
    if node.kind in SIDE_EFFECT_KINDS:
        return True
    if node.kind.ns == "prim" or node.kind in _SPECIAL_KINDS:
        return False
    return is_conservative(node)


def may_write(node: Node) -> bool:
    """Whether AliasDb may record a write by `node` itself (nodes in its blocks aside), decided without building
    one: prim::SetAttr, aten::wait, nodes without a schema or of a conservative operator, and schemas with a written
    (`!`) argument. Passes that only ask about writes skip building the AliasDb of a graph where no node may write
    (`graph_may_write`): most graphs of inference code."""
    if node.kind is prim.SetAttr or node.kind is aten.wait:
        return True
    if node.kind in _SPECIAL_KINDS:
        return False
    if is_conservative(node):
        return True
    return bool(node.schema.written_arguments)


def written_inputs(node: Node) -> list[Value]:
    """The inputs `node` itself may write, as AliasDb records them: a written (`!`) argument of its schema (or what
    it contains), the object of prim::SetAttr, every mutable input of a node without a schema or of a
    conservative operator. (aten::wait writes what its forked graph writes: not its inputs.)"""
    if node.kind is prim.SetAttr:
        return [node.inputs[0]]
    if node.kind in _SPECIAL_KINDS:
        return []
    if is_conservative(node):
        return [value for value in node.inputs if is_mutable_type(value.type)]
    inputs = node.inputs
    return [inputs[i] for i in node.schema.written_arguments if i < len(inputs)]


def graph_may_write(graph: Graph) -> bool:
    """Whether some node of the graph, at any depth, may write memory (see may_write)."""
    return any(may_write(node) for node in graph.all_nodes())


def is_conservative(node: Node) -> bool:
    """A node whose effects tsjit cannot know: no matching schema, or an operator registered `conservative`."""
    schema = node.maybe_schema()
    return schema is None or operator_hook.is_conservative(schema)


# ---- the database ------------------------------------------------------------------------------------------------
class AliasDb:
    """Aliasing and mutation facts of one graph, and the node moves they allow.

    The database describes the graph as it was built; a pass that rewires values tells it with
    `replace_value` (CSE) or builds a new AliasDb. With `frozen=True` (freezing a module), a module attribute
    read by prim::GetAttr is fresh memory of that read instead of the caller's wildcard, so a write through one
    attribute does not make every other attribute look written.
    """

    def __init__(self, graph: Graph, frozen: bool = False):
        self.graph = graph
        self.frozen = frozen
        self._dag = MemoryDAG()
        self._elements: dict[Value, Element] = {}
        self._wildcards: dict[str, Element] = {}  # per alias type: what is stored away or external
        self._externals: dict[str, Element] = {}  # per alias type: the caller's memory
        self._writes: dict[Node, list[tuple[Element, bool]]] = {}  # element written, and whether what it holds
        self._fork_writes: dict[Node, list[Element]] = {}  # prim::fork: the inputs its graph writes
        self._wildcard_writers: set[Node] = set()  # aten::wait on an unknown future: may write every wildcard
        self._all_writes: int | None = None
        self._wildcard_mask = (-1, 0)  # (DAG version, mask): see _wildcard_locations
        for value in graph.inputs:
            self._mark_external(value)
        self._analyze_block(graph.block)

    # ---- queries -------------------------------------------------------------------------------------------
    def may_alias(self, a: Value | Iterable[Value], b: Value | Iterable[Value]) -> bool:
        """Whether some value of `a` and some value of `b` may share memory."""
        return bool(self._locations(a) & self._locations(b))

    def may_contain_alias(self, a: Value | Iterable[Value], b: Value | Iterable[Value]) -> bool:
        """Like may_alias, but also through what the values contain (a list and the tensors stored in it)."""
        return bool(self._reachable(a) & self._reachable(b))

    def may_alias_wildcard(self, value: Value | Iterable[Value]) -> bool:
        """Whether the memory of `value` may be seen by code outside this graph's analysis."""
        return bool(self._reachable(value) & self._wildcard_locations())

    def has_writers(self, target: Node | Value | Iterable[Value]) -> bool:
        """Whether any node writes memory that `target` (a value, values, or a node's inputs and outputs) may
        alias."""
        values = (*target.inputs, *target.outputs) if isinstance(target, Node) else target
        return bool(self._locations(values) & self._written_locations())

    def writes_to_alias(self, node: Node, values: Value | Iterable[Value]) -> bool:
        """Whether `node` (or a node nested in its blocks) writes memory that one of `values` may alias."""
        return bool(self._node_writes(node) & self._locations(values))

    def is_mutable(self, node: Node) -> bool:
        """Whether `node` (or a node nested in its blocks) writes to memory at all."""
        return bool(self._node_writes(node))

    def reachable_memory(self, values: Value | Iterable[Value]) -> int:
        """All memory `values` can get at (through containers too), as an opaque set that passes accumulate
        with `|` and test with `writes_to_memory` (dead code elimination's "live memory")."""
        return self._reachable(values)

    def writes_to_memory(self, node: Node, memory: int) -> bool:
        """Whether `node` (or a node nested in its blocks) writes some of `memory` (from reachable_memory)."""
        return bool(self._node_writes(node) & memory)

    def writes_to_wildcard(self, node: Node) -> bool:
        """Whether `node` (or a node nested in its blocks) writes memory of a wildcard set."""
        return bool(self._node_writes(node) & self._wildcard_locations())

    def direct_writes(self, node: Node) -> int:
        """The memory `node` itself writes (the nodes in its blocks aside), as a set like reachable_memory's: for
        passes that visit every node and combine the answers themselves (dead code elimination), where asking
        about each node with its blocks would walk nested blocks once per enclosing node."""
        return self._direct_writes(node)

    def wildcard_memory(self) -> int:
        """The memory of every wildcard set (code outside the graph's analysis may read or write it)."""
        return self._wildcard_locations()

    def escapes_scope(self, values: Value | Iterable[Value]) -> bool:
        """Whether the memory of `values` is visible outside the graph: a wildcard's, or a graph output's."""
        return self.may_alias_wildcard(values) or self.may_contain_alias(values, self.graph.outputs)

    def safe_to_change_aliasing_relationship(self, a: Iterable[Value], b: Iterable[Value]) -> bool:
        """Whether making `a` and `b` the same values (or aliases) is unobservable: nobody writes either,
        and not both are visible outside the graph."""
        a, b = tuple(a), tuple(b)
        if self.has_writers(a) or self.has_writers(b):
            return False
        return not (self.escapes_scope(a) and self.escapes_scope(b))

    def replace_value(self, old: Value, new: Value) -> None:
        """Record that the readers of `old` now read `new`: whatever aliased `old` may now alias `new`."""
        if old in self._elements and new in self._elements:
            # a write reaching `old` reaches its memory; without one, the written memory stays the same
            if self.has_writers(old):
                self._all_writes = None
            self._dag.make_pointer_to(self._elements[old], self._elements[new])

    # ---- moving nodes --------------------------------------------------------------------------------------
    def move_after_topologically_valid(self, node: Node, move_point: Node) -> bool:
        """Move `node` right after `move_point` (same block) if that keeps every data dependency and the order
        of writes and reads of the same memory, taking along the nodes that must move with it; returns whether
        it moved."""
        return self._try_move(node, move_point, after=True, dry_run=False)

    def move_before_topologically_valid(self, node: Node, move_point: Node) -> bool:
        """Move `node` right before `move_point`, as move_after_topologically_valid."""
        return self._try_move(node, move_point, after=False, dry_run=False)

    def could_move_after_topologically(self, node: Node, move_point: Node) -> bool:
        """Whether move_after_topologically_valid would succeed (nothing moves)."""
        return self._try_move(node, move_point, after=True, dry_run=True)

    def could_move_before_topologically(self, node: Node, move_point: Node) -> bool:
        """Whether move_before_topologically_valid would succeed (nothing moves)."""
        return self._try_move(node, move_point, after=False, dry_run=True)

    def _try_move(self, node: Node, move_point: Node, after: bool, dry_run: bool) -> bool:
        if node.owning_block is None or node.owning_block is not move_point.owning_block:
            return False
        if node is move_point:
            return True
        forward = node.is_before(move_point)
        working = _WorkingSet(self, node)
        for other in _between(node, move_point, forward):
            if other is move_point and forward != after:
                break  # placed on this side of the move point: it is not crossed
            if working.depends_on(other):
                if other is move_point:
                    return False
                working.add(other)
        if not dry_run:
            ordered = working.nodes if forward else working.nodes[::-1]  # program order
            anchor = move_point
            for moving in ordered:
                if after:
                    moving.move_after(anchor)
                    anchor = moving
                else:
                    moving.move_before(move_point)
        return True

    # ---- building ------------------------------------------------------------------------------------------
    def _analyze_block(self, block: Block) -> None:
        for node in block.nodes():
            self._analyze_node(node)

    def _analyze_node(self, node: Node) -> None:
        handler = _HANDLERS.get(node.kind)
        if handler is not None:
            handler(self, node)
            return
        for block in node.blocks:  # blocks of other nodes (prim::Closure, prim::With...): inputs may be anything
            for value in block.inputs:
                self._set_wildcard(value)
            self._analyze_block(block)
        if is_conservative(node):
            self._analyze_conservative(node)
        else:
            self._analyze_from_schema(node, node.schema)

    def _analyze_from_schema(self, node: Node, schema: FunctionSchema) -> None:
        bound: dict[str, list[Element]] = {}
        for i, value in enumerate(node.inputs):
            if not is_mutable_type(value.type):
                continue
            if i >= len(schema.arguments):  # extra inputs of a vararg schema
                self._store(value)
                continue
            info = schema.arguments[i].alias_info
            if info is not None:
                self._bind_input(node, value, info, bound)
        for i, value in enumerate(node.outputs):
            if not is_mutable_type(value.type):
                continue
            if i >= len(schema.returns):
                self._set_wildcard(value)
                continue
            info = schema.returns[i].alias_info
            if info is None:
                self._give_fresh_alias(value)
            else:
                self._bind_output(value, info, bound)

    def _bind_input(self, node: Node, value: Value, info: AliasInfo, bound: dict[str, list[Element]]) -> None:
        element = self._element(value)
        for contained in (info, *info.contained_types):
            for name in contained.before_set:
                bound.setdefault(name, []).append(element)
        if info.is_write:
            self._register_write(node, element, contained=False)
        if any(c.is_write for c in info.contained_types):
            self._register_write(node, element, contained=True)
        if any(WILDCARD in c.after_set and WILDCARD not in c.before_set for c in (info, *info.contained_types)):
            self._store(value)

    def _bind_output(self, value: Value, info: AliasInfo, bound: dict[str, list[Element]]) -> None:
        if not info.before_set:  # `Tensor(a)[]`: a new container holding members of set a
            container = self._give_fresh_alias(value, with_wildcard_contents=False)
            held = value.type.contained_types()
            for contained in info.contained_types:
                for target in self._set_targets(held[0] if held else value.type, contained.before_set, bound):
                    self._dag.add_to_contained(target, container)
            return
        element = self._element(value)
        for target in self._set_targets(value.type, info.before_set, bound):
            self._dag.make_pointer_to(element, target)

    def _set_targets(self, type_: Type, sets: Iterable[str], bound: dict[str, list[Element]]) -> Iterator[Element]:
        """The elements of the alias sets `sets`: the inputs bound to them, or the wildcard of `type_`."""
        for name in sets:
            if name == WILDCARD or name not in bound:
                yield from self._contents_for(type_)
            else:
                yield from bound[name]

    def _analyze_conservative(self, node: Node) -> None:
        """Unknown semantics: every mutable input is written and escapes, every output may be anything."""
        for value in node.inputs:
            if is_mutable_type(value.type):
                self._register_write(node, self._element(value), contained=True)
                self._store(value)
        for value in node.outputs:
            self._set_wildcard(value)

    def _analyze_creator(self, node: Node) -> None:
        for value in node.outputs:
            if is_mutable_type(value.type):
                self._give_fresh_alias(value)

    def _analyze_container_construct(self, node: Node) -> None:
        container = node.output()
        if not is_mutable_type(container.type):
            return
        element = self._give_fresh_alias(container, with_wildcard_contents=False)
        for value in node.inputs:
            for wildcard in self._store(value):
                self._dag.add_to_contained(wildcard, element)

    def _analyze_extractor(self, node: Node) -> None:
        if self.frozen and node.kind is prim.GetAttr and getattr(node.inputs[0].type, "is_module", False):
            self._analyze_creator(node)
            return
        for value in node.outputs:
            self._set_wildcard(value)

    def _analyze_forwarding(self, node: Node) -> None:
        last = len(node.inputs) - 1
        for i, value in enumerate(node.outputs):
            self._make_pointer_to(value, node.input(min(i, last)))

    def _analyze_reader(self, node: Node) -> None:
        """Reads its inputs and creates no memory."""

    def _analyze_set_attr(self, node: Node) -> None:
        obj, value = node.inputs
        self._register_write(node, self._element(obj), contained=False)
        self._store(value)

    def _analyze_if(self, node: Node) -> None:
        for block in node.blocks:
            self._analyze_block(block)
        for i, output in enumerate(node.outputs):
            if is_mutable_type(output.type):
                self._element(output)  # new memory when no branch gives it any (None in both)
            for block in node.blocks:
                self._make_pointer_to(output, block.outputs[i])

    def _analyze_loop(self, node: Node) -> None:
        body = node.blocks[0]
        carried_in = node.inputs[2:]
        for block_input, initial in zip(body.inputs[1:], carried_in):
            self._make_pointer_to(block_input, initial)
        self._analyze_block(body)
        for block_input, block_output in zip(body.inputs[1:], body.outputs[1:]):
            self._make_pointer_to(block_input, block_output)
        for output, initial, block_output in zip(node.outputs, carried_in, body.outputs[1:]):
            self._make_pointer_to(output, block_output)
            self._make_pointer_to(output, initial)  # the body may run zero times

    def _analyze_fork(self, node: Node) -> None:
        """The forked graph runs beside this one until the aten::wait on its future: its inputs are stored away,
        and the wait writes them if the forked graph writes memory it was given."""
        writes = _forked_graph_writes_inputs(node)
        for value in node.inputs:
            if is_mutable_type(value.type):
                if writes:
                    self._fork_writes.setdefault(node, []).append(self._element(value))
                self._store(value)
        for value in node.outputs:
            if is_mutable_type(value.type):
                self._give_fresh_alias(value)

    def _analyze_wait(self, node: Node) -> None:
        """aten::wait finishes a forked graph and so writes what it writes; every wildcard when the future does
        not come straight from a prim::fork of this graph."""
        fork = node.input(0).node
        if fork.kind is prim.fork:
            for element in self._fork_writes.get(fork, ()):
                self._register_write(node, element, contained=True)
        else:
            self._wildcard_writers.add(node)
        for value in node.outputs:
            self._set_wildcard(value)

    # ---- elements ------------------------------------------------------------------------------------------
    def _element(self, value: Value) -> Element:
        """The element of `value`, created on first use as fresh memory (a leaf until it points somewhere)."""
        element = self._elements.get(value)
        if element is None:
            element = self._dag.new_element(f"%{value.debug_name}")
            self._elements[value] = element
        return element

    def _give_fresh_alias(self, value: Value, with_wildcard_contents: bool = True) -> Element:
        """New memory for `value`; a fresh container may hold anything of its element types."""
        element = self._element(value)
        if with_wildcard_contents:
            for contained in value.type.contained_types():
                for wildcard in self._contents_for(contained):
                    self._dag.add_to_contained(wildcard, element)
        return element

    def _make_pointer_to(self, value: Value, target: Value) -> None:
        if is_mutable_type(value.type) and is_mutable_type(target.type):
            self._dag.make_pointer_to(self._element(value), self._element(target))

    def _set_wildcard(self, value: Value) -> None:
        """`value` may be anything of its type that is stored away or comes from outside (it was read out of a
        container or attribute, or unknown code made it)."""
        for contents in self._contents_for(value.type):
            self._dag.make_pointer_to(self._element(value), contents)

    def _store(self, value: Value) -> list[Element]:
        """`value` escapes into a container, an attribute, another thread or unknown code, so whatever is read
        back out of one may be it; returns the wildcard elements it joined (none for immutable values)."""
        wildcards = list(self._contents_for(value.type))
        for contents in wildcards:
            self._dag.make_pointer_to(contents, self._element(value))
        return wildcards

    def _mark_external(self, value: Value) -> None:
        """A graph input: memory of the caller, which may alias any other input of its type."""
        for key, type_ in sorted(_alias_types(value.type).items()):
            contents = self._contents(key, type_)
            target = contents if key == _ANY_KEY else self._externals[key]
            self._dag.make_pointer_to(self._element(value), target)

    def _contents_for(self, type_: Type) -> Iterator[Element]:
        for key, concrete in sorted(_alias_types(type_).items()):
            yield self._contents(key, concrete)

    def _contents(self, key: str, type_: Type) -> Element:
        """The wildcard element of set `key`: it points to the caller's memory of that type (a leaf) and to
        every value stored away; Any's points to every other set's."""
        wildcard = self._wildcards.get(key)
        if wildcard is not None:
            return wildcard
        wildcard = self._wildcards[key] = self._dag.new_element(f"wildcard({key})")
        external = self._externals[key] = self._dag.new_element(f"external({key})")
        self._dag.make_pointer_to(wildcard, external)
        any_wildcard = self._wildcards.get(_ANY_KEY)
        if key == _ANY_KEY:
            for other in self._wildcards.values():
                self._dag.make_pointer_to(wildcard, other)
        elif any_wildcard is not None:
            self._dag.make_pointer_to(any_wildcard, wildcard)
        for contained in type_.contained_types():
            for inner in self._contents_for(contained):
                self._dag.add_to_contained(inner, external)
        return wildcard

    def _register_write(self, node: Node, element: Element, contained: bool) -> None:
        self._writes.setdefault(node, []).append((element, contained))
        self._all_writes = None

    # ---- location sets -------------------------------------------------------------------------------------
    def _values(self, values: Value | Iterable[Value]) -> Iterator[Element]:
        elements = self._elements
        for value in (values,) if isinstance(values, Value) else values:
            element = elements.get(value)  # only mutable values have elements: most values skip the type test
            if element is not None:
                yield element
            elif is_mutable_type(value.type):
                yield self._element(value)

    def _locations(self, values: Value | Iterable[Value]) -> int:
        mask = 0
        for element in self._values(values):
            mask |= self._dag.memory_locations(element)
        return mask

    def _reachable(self, values: Value | Iterable[Value]) -> int:
        mask = 0
        for element in self._values(values):
            mask |= self._dag.reachable_locations(element)
        return mask

    def _wildcard_locations(self) -> int:
        """The memory of every wildcard set, remembered until the DAG's edges change (passes ask it per node)."""
        version, mask = self._wildcard_mask
        if version != self._dag.version:
            mask = 0
            for wildcard in self._wildcards.values():
                mask |= self._dag.memory_locations(wildcard)
            self._wildcard_mask = (self._dag.version, mask)
        return mask

    def _direct_writes(self, node: Node) -> int:
        mask = self._wildcard_locations() if node in self._wildcard_writers else 0
        for element, contained in self._writes.get(node, ()):
            dag = self._dag
            mask |= dag.reachable_locations(element) if contained else dag.memory_locations(element)
        return mask

    def _node_writes(self, node: Node) -> int:
        mask = self._direct_writes(node)
        for block in node.blocks:
            for inner in _walk(block):
                mask |= self._direct_writes(inner)
        return mask

    def _written_locations(self) -> int:
        if self._all_writes is None:
            mask = 0
            for node in (*self._writes, *self._wildcard_writers):
                mask |= self._direct_writes(node)
            self._all_writes = mask
        return self._all_writes

    def _node_reads(self, node: Node) -> int:
        mask = self._reachable(node.inputs)
        for block in node.blocks:
            for inner in _walk(block):
                mask |= self._reachable(inner.inputs)
            mask |= self._reachable(block.outputs)
        return mask


_HANDLERS = {
    prim.If: AliasDb._analyze_if,
    prim.Loop: AliasDb._analyze_loop,
    prim.fork: AliasDb._analyze_fork,
    aten.wait: AliasDb._analyze_wait,
    prim.SetAttr: AliasDb._analyze_set_attr,
    **{kind: AliasDb._analyze_creator for kind in _CREATOR_KINDS},
    **{kind: AliasDb._analyze_container_construct for kind in _CONTAINER_CONSTRUCT_KINDS},
    **{kind: AliasDb._analyze_extractor for kind in _EXTRACTOR_KINDS},
    **{kind: AliasDb._analyze_forwarding for kind in _FORWARDING_KINDS},
    **{kind: AliasDb._analyze_reader for kind in _READER_KINDS},
}
_SPECIAL_KINDS = frozenset(_HANDLERS)


# ---- moving --------------------------------------------------------------------------------------------------
class _WorkingSet:
    """The nodes moving together, with what they define, use, read and write, to test others against."""

    def __init__(self, db: AliasDb, node: Node):
        self.db = db
        self.nodes: list[Node] = []
        self.defined: set[Value] = set()
        self.used: set[Value] = set()
        self.reads = self.writes = 0
        self.side_effects = self.escaping_writes = False
        self.add(node)

    def add(self, node: Node) -> None:
        self.nodes.append(node)
        self.defined.update(node.outputs)
        self.used.update(_used_values(node))
        writes = self.db._node_writes(node)
        self.reads |= self.db._node_reads(node)
        self.writes |= writes
        self.side_effects |= _has_nested_side_effects(node)
        self.escaping_writes |= bool(writes & self._escaping())

    def depends_on(self, other: Node) -> bool:
        """Whether `other` and the working set must keep their order: data flows between them, one writes
        what the other reads or writes, or both have side effects (or one has them and the other writes
        memory visible outside the graph)."""
        if self.defined.intersection(_used_values(other)) or self.used.intersection(other.outputs):
            return True
        writes, reads = self.db._node_writes(other), self.db._node_reads(other)
        if writes & (self.reads | self.writes) or self.writes & reads:
            return True
        other_effects = _has_nested_side_effects(other)
        return (other_effects and (self.side_effects or self.escaping_writes)) or (
            self.side_effects and bool(writes & self._escaping()))

    def _escaping(self) -> int:
        db = self.db
        return db._wildcard_locations() | db._reachable(db.graph.outputs)


def _between(node: Node, move_point: Node, forward: bool) -> Iterator[Node]:
    """The nodes from `node` (exclusive) towards `move_point` (inclusive), in the direction of the move."""
    current = node.next if forward else node.prev
    while current is not None and current.kind is not prim.Return:
        yield current
        if current is move_point:
            return
        current = current.next if forward else current.prev


def _used_values(node: Node) -> set[Value]:
    used = set(node.inputs)
    for block in node.blocks:
        used.update(block.outputs)
        for inner in _walk(block):
            used.update(inner.inputs)
            for nested in inner.blocks:
                used.update(nested.outputs)
    return used


def _forked_graph(node: Node) -> Graph | None:
    return node.g("Subgraph") if node.has_attribute("Subgraph") else None


def _forked_graph_writes_inputs(node: Node) -> bool:
    forked = _forked_graph(node)
    if forked is None:
        return True
    db = AliasDb(forked)
    return any(db.writes_to_wildcard(n) for n in forked.nodes())


def _has_nested_side_effects(node: Node) -> bool:
    return has_side_effects(node) or any(has_side_effects(n) for b in node.blocks for n in _walk(b))


def _walk(block: Block) -> Iterator[Node]:
    for node in block.nodes():
        yield node
        for inner in node.blocks:
            yield from _walk(inner)
