"""Dead code elimination: remove nodes whose results are never used and that change nothing anyone sees.

    graph(%x : Tensor):                       graph(%x : Tensor):
      %y : Tensor = aten::zeros(...)            %2 : int = prim::Constant[value=2]()
      %z : Tensor = aten::add_(%y, ...)   ->    %v : Tensor = aten::mul_(%x, %2)
      %v : Tensor = aten::mul_(%x, %2)          return (%x)
      return (%x)

A node is live if the graph (or its block, for live control flow) outputs one of its values, if it has side
effects (print, raise, calls, with-statements), or if it writes to memory that is observable: memory reachable
from a graph input, or memory some live node reads. `%y` above is fresh and read by no live node, so the
in-place add on it is dead along with it; `%x` is an input, so writing to it stays. Unused outputs of
prim::If and loop-carried values nobody reads are removed from the control flow nodes too.

What may share memory comes from the schemas' alias annotations (`Tensor(a) self -> Tensor(a)`) and from
the container nodes; until tsjit has an AliasDb this is the conservative union of those facts.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, cuda, prim
from tsjit.ir.types import ClassType, DictType, FutureType, ListType, OptionalType, TensorType, TupleType, Type

# node kinds that always have side effects (C++ Node::hasSideEffects)
SIDE_EFFECT_KINDS = frozenset({
    prim.PythonOp, prim.IgnoredPythonOp, prim.Print, prim.RaiseException, prim.SetAttr, aten.warn, aten.save,
    aten.manual_seed, prim.AddStatValue, prim.TimePoint, prim.CallFunction, prim.CallMethod,
    prim.BailoutTemplate, prim.BailOut, prim.rpc_async, prim.rpc_sync, prim.rpc_remote, aten.wait,
    cuda.set_stream, cuda._set_device, cuda._current_device, cuda.synchronize, prim.Enter, prim.Exit,
})
# kinds whose outputs may alias (contain, or be contained in) any of their inputs
CONTAINER_KINDS = frozenset({
    prim.TupleConstruct, prim.ListConstruct, prim.DictConstruct, prim.TupleUnpack, prim.ListUnpack,
    prim.TupleIndex, prim.TupleSlice, prim.unchecked_cast, prim.DictIndex, prim.ListIndex,
})
# kinds whose outputs are values nobody else holds
FRESH_KINDS = frozenset({prim.Constant, prim.Uninitialized, prim.EmptyListLiteral, prim.CreateObject})


def eliminate_dead_code(graph: Graph) -> bool:
    """Remove dead nodes and dead control-flow outputs; returns whether anything changed."""
    return _DeadCodeEliminator(graph).run()


class _DeadCodeEliminator:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.aliases = _AliasSets(graph)
        self.live_values: set[Value] = set()
        self.marked: set[Node] = set()
        self.side_effects: dict[Node, bool] = {}
        self.changed = False

    def run(self) -> bool:
        block = self.graph.block
        self.live_values.update(block.outputs)
        size = -1
        while size != len(self.live_values) + len(self.marked):
            size = len(self.live_values) + len(self.marked)
            self.mark_block(block)
        self.sweep(block)
        return self.changed

    # ---- mark --------------------------------------------------------------------------------------------------
    def mark_block(self, block: Block) -> None:
        for node in block.nodes():
            if self.has_side_effects(node):
                self.mark(node)
        self.mark_return(block)
        for node in list(block.reverse_nodes()):
            for inner in node.blocks:
                self.mark_block(inner)
            if any(v in self.live_values for v in node.outputs) or self.writes_to_live(node):
                self.mark(node)

    def mark_return(self, block: Block) -> None:
        owner = block.owning_node
        if owner is None:
            self.live_values.update(block.outputs)
            return
        if owner.kind is prim.Loop:
            self._mark_loop_return(owner, block)
            return
        for inner, outer in zip(block.outputs, owner.outputs):
            if outer in self.live_values:
                self.live_values.add(inner)

    def _mark_loop_return(self, loop: Node, body: Block) -> None:
        self.live_values.add(body.outputs[0])  # the next condition
        for i, outer in enumerate(loop.outputs):
            if outer in self.live_values or body.inputs[i + 1].uses:
                self.live_values.add(body.outputs[i + 1])

    def mark(self, node: Node) -> None:
        current: Node | None = node
        while current is not None and current not in self.marked:
            self.marked.add(current)
            self.live_values.update(current.inputs)
            block = current.owning_block
            current = block.owning_node if block is not None else None

    def has_side_effects(self, node: Node) -> bool:
        if node not in self.side_effects:
            self.side_effects[node] = (
                node_has_side_effects(node)
                or any(self.has_side_effects(n) for b in node.blocks for n in b.nodes())
                or self.aliases.writes_to_escaped(node))
        return self.side_effects[node]

    def writes_to_live(self, node: Node) -> bool:
        written = self.aliases.written_values(node)
        return bool(written) and any(self.aliases.may_alias_any(v, self.live_values) for v in written)

    # ---- sweep -------------------------------------------------------------------------------------------------
    def sweep(self, block: Block) -> None:
        for node in list(block.reverse_nodes()):
            self._remove_dead_if_outputs(node)
            self._remove_dead_loop_outputs(node)
            for inner in node.blocks:
                self.sweep(inner)
            if node not in self.marked and not node.has_uses() and log.opt_allowed():
                log.graph_update(f"removing dead {node.kind} node")
                node.destroy()
                self.changed = True

    def _remove_dead_if_outputs(self, node: Node) -> None:
        if node.kind is not prim.If:
            return
        for i in reversed(range(len(node.outputs))):
            if not node.outputs[i].uses and log.opt_allowed():
                log.graph_update(f"removing unused output {i} of prim::If")
                node.erase_output(i)
                for block in node.blocks:
                    block.erase_output(i)
                self.changed = True

    def _remove_dead_loop_outputs(self, node: Node) -> None:
        if node.kind is not prim.Loop:
            return
        body = node.blocks[0]
        for i in reversed(range(len(node.outputs))):
            if not node.outputs[i].uses and not body.inputs[i + 1].uses and log.opt_allowed():
                log.graph_update(f"removing unused loop-carried value {i} of prim::Loop")
                node.erase_output(i)
                node.remove_input(i + 2)
                body.erase_input(i + 1)
                body.erase_output(i + 1)
                self.changed = True


def node_has_side_effects(node: Node) -> bool:
    return node.kind in SIDE_EFFECT_KINDS


# ---- which values may share memory -------------------------------------------------------------------------------
def is_mutable_type(type_: Type) -> bool:
    """Types whose values can be written to: tensors, lists, dicts, objects, and containers holding them."""
    if isinstance(type_, TensorType | ListType | DictType | ClassType):
        return True
    if isinstance(type_, OptionalType | FutureType | TupleType):
        return any(is_mutable_type(t) for t in type_.contained_types())
    return type_.__class__.__name__ in ("AnyType", "UnionType", "InterfaceType")


class _AliasSets:
    """Values partitioned into sets that may share memory (a union-find), and which sets escape the graph."""

    def __init__(self, graph: Graph):
        self.parent: dict[Value, Value] = {}
        self.escaped: set[Value] = set()
        for value in graph.inputs:
            self.escaped.add(value)
        for node in graph.all_nodes():
            self._visit(node)
        self.escaped = {self.find(v) for v in self.escaped}

    def find(self, value: Value) -> Value:
        root = value
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        self.parent[value] = root
        return root

    def union(self, a: Value, b: Value) -> None:
        if is_mutable_type(a.type) and is_mutable_type(b.type):
            self.parent[self.find(a)] = self.find(b)

    def _visit(self, node: Node) -> None:
        if node.kind in CONTAINER_KINDS:
            for output in node.outputs:
                for value in node.inputs:
                    self.union(output, value)
        elif node.kind is prim.If:
            for i, output in enumerate(node.outputs):
                for block in node.blocks:
                    self.union(output, block.outputs[i])
        elif node.kind is prim.Loop:
            self._visit_loop(node)
        elif node.kind not in FRESH_KINDS:
            self._visit_operator(node)

    def _visit_loop(self, node: Node) -> None:
        body = node.blocks[0]
        for i, output in enumerate(node.outputs):
            for value in (node.inputs[i + 2], body.inputs[i + 1], body.outputs[i + 1]):
                self.union(output, value)

    def _visit_operator(self, node: Node) -> None:
        schema = node.maybe_schema()
        if schema is None:
            # unknown semantics (calls, Python, attributes of objects): its values escape
            self.escaped.update(v for v in node.outputs if is_mutable_type(v.type))
            return
        for output, returned in zip(node.outputs, schema.returns):
            for value, argument in zip(node.inputs, schema.arguments):
                if _may_share(returned.alias_info, argument.alias_info):
                    self.union(output, value)

    def written_values(self, node: Node) -> list[Value]:
        schema = node.maybe_schema() if node.kind not in CONTAINER_KINDS else None
        if schema is None:
            return []
        return [v for v, a in zip(node.inputs, schema.arguments) if a.alias_info is not None and
                (a.alias_info.is_write or any(c.is_write for c in a.alias_info.contained_types))]

    def writes_to_escaped(self, node: Node) -> bool:
        return any(self.find(v) in self.escaped for v in self.written_values(node))

    def may_alias_any(self, value: Value, values: set[Value]) -> bool:
        root = self.find(value)
        return any(self.find(v) is root for v in values if is_mutable_type(v.type))


def _may_share(returned, argument) -> bool:
    """Whether a return may alias an argument per their annotations (`(a)` and `(a)`, or a wildcard)."""
    if returned is None or argument is None:
        return False
    returned_sets = _alias_sets(returned)
    argument_sets = _alias_sets(argument)
    return bool(returned_sets & argument_sets) or "*" in returned_sets


def _alias_sets(info) -> set[str]:
    sets = set(info.before_set) | set(info.after_set)
    for contained in info.contained_types:
        sets |= _alias_sets(contained)
    return sets
