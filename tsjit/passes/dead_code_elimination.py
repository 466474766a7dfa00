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

`keep_assertions=True` keeps assertions whose results nobody reads (`aten::_assert_scalar(%i, "n > 0")`), which
have no other effect that AliasDb sees: MLIR preparation (tsjit/mlir/prepare.py) inserts them for the checks the
compiled program keeps.

What may share memory, and what a node writes, comes from AliasDb (tsjit.ir.alias_analysis): "observable"
is memory of the wildcard sets (the caller's, or stored where tsjit cannot follow it) and memory a live value
can reach, containers included. The pipelines run this pass dozens of times per function, and building the
AliasDb is most of its cost, so a first marking goes without one: a node that may write (`may_write`) is live
when a value it writes is itself live (`%l` above `aten::append(%l, %x)` that a later node reads) or, for
operators tsjit cannot see into, when it has a mutable input at all; AliasDb would mark such writes live too.
When that marks every such node, nothing AliasDb adds could mark more, and the result is the one with AliasDb;
otherwise (a write to a list nobody reads again) the marking starts over with an AliasDb.
"""

from __future__ import annotations

from collections.abc import Iterable

from tsjit import log
from tsjit.ir.alias_analysis import (
    SIDE_EFFECT_KINDS,
    AliasDb,
    has_side_effects,
    is_conservative,
    may_write,
    written_inputs,
)
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import aten, prim

ASSERTION_KINDS = frozenset({aten._assert_scalar, aten._assert_async})


def eliminate_dead_code(graph: Graph, keep_assertions: bool = False) -> bool:
    """Remove dead nodes and dead control-flow outputs; returns whether anything changed."""
    eliminator = _DeadCodeEliminator(graph, keep_assertions, None)
    eliminator.mark_block(graph.block)
    if eliminator.unmarked_writers():
        eliminator = _DeadCodeEliminator(graph, keep_assertions, AliasDb(graph))
        eliminator.mark_block(graph.block)
    eliminator.sweep(graph.block)
    return eliminator.changed


class _DeadCodeEliminator:
    def __init__(self, graph: Graph, keep_assertions: bool, aliases: AliasDb | None):
        self.graph = graph
        self.keep_assertions = keep_assertions
        self.aliases = aliases
        self.may_write: dict[Node, bool] = {}  # without an AliasDb: whether each node may write
        self.live_values: set[Value] = set()
        self.live_memory = 0
        self.marked: set[Node] = set()
        self.side_effects: dict[Node, bool] = {}
        self.writes: dict[Node, int] = {}  # memory each node writes, with the nodes in its blocks
        self.wildcard_memory = self.aliases.wildcard_memory() if self.aliases is not None else 0
        self.changed = False

    def unmarked_writers(self) -> bool:
        """Whether a node that may write was left unmarked (only AliasDb can tell whether it is dead). Marking
        asked every node without side effects whether it writes (writes_to_wildcard); those with them are marked."""
        return any(writes and node not in self.marked for node, writes in self.may_write.items())

    def writer(self, node: Node) -> bool:
        found = self.may_write.get(node)
        if found is None:
            found = self.may_write[node] = may_write(node)
        return found

    # ---- mark --------------------------------------------------------------------------------------------------
    # One walk from the end of each block to its start: a value's uses, and the reads a write must precede, come
    # after it, so they are marked before it is visited. Only a loop body runs again after its end (a read early in
    # the body sees a write late in it), so a loop body alone is walked until nothing new is marked.
    def mark_block(self, block: Block) -> None:
        has_side_effects, mark = self.has_side_effects, self.mark
        for node in block.nodes():
            if has_side_effects(node):
                mark(node)
        self.mark_return(block)
        live_values, marked = self.live_values, self.marked
        for node in block.reverse_nodes():
            if node.blocks:
                if node.kind is prim.Loop:
                    self.mark_loop(node)
                else:
                    for inner in node.blocks:
                        self.mark_block(inner)
            if node in marked:
                continue
            for value in node.outputs:
                if value in live_values:
                    mark(node)
                    break
            else:
                if self.writes_to_live(node):
                    mark(node)

    def mark_loop(self, loop: Node) -> None:
        size = -1
        while size != len(self.live_values) + len(self.marked):
            size = len(self.live_values) + len(self.marked)
            self.mark_block(loop.blocks[0])

    def mark_return(self, block: Block) -> None:
        owner = block.owning_node
        if owner is None:
            self.make_live(block.outputs)
            return
        if owner.kind is prim.Loop:
            self._mark_loop_return(owner, block)
            return
        self.make_live(inner for inner, outer in zip(block.outputs, owner.outputs) if outer in self.live_values)

    def _mark_loop_return(self, loop: Node, body: Block) -> None:
        self.make_live([body.outputs[0]])  # the next condition
        self.make_live(body.outputs[i + 1] for i, outer in enumerate(loop.outputs)
                       if outer in self.live_values or body.inputs[i + 1].uses)

    def make_live(self, values: Iterable[Value]) -> None:
        for value in values:
            if value not in self.live_values:
                self.live_values.add(value)
                if self.aliases is not None:
                    self.live_memory |= self.aliases.reachable_memory(value)

    def mark(self, node: Node) -> None:
        current: Node | None = node
        while current is not None and current not in self.marked:
            self.marked.add(current)
            self.make_live(current.inputs)
            block = current.owning_block
            current = block.owning_node if block is not None else None

    # Both answers are remembered per node and combine those of the nodes in its blocks, so that nested blocks are
    # walked once, not once per enclosing node. The AliasDb and the graph do not change while marking.
    def has_side_effects(self, node: Node) -> bool:
        found = self.side_effects.get(node)
        if found is None:
            found = self.side_effects[node] = (
                has_side_effects(node)
                or (self.keep_assertions and node.kind in ASSERTION_KINDS)
                or self.writes_to_wildcard(node)
                or (bool(node.blocks) and any(self.has_side_effects(n) for b in node.blocks for n in b.nodes())))
        return found

    def writes_to_wildcard(self, node: Node) -> bool:
        if self.aliases is not None:
            return bool(self.node_writes(node) & self.wildcard_memory)
        # without an AliasDb, the writes it would surely find: to the caller's memory (a graph input), or (an
        # operator it cannot see into stores every mutable input away and writes it) to a mutable input at all
        return self.writer(node) and any(value.node is self.graph.param_node or is_conservative(node)
                                         for value in written_inputs(node))

    def writes_to_live(self, node: Node) -> bool:
        if self.aliases is None:  # without an AliasDb: a write AliasDb would surely find, to a live value
            return self.may_write.get(node, False) and any(value in self.live_values for value in written_inputs(node))
        return bool(self.node_writes(node) & self.live_memory)

    def node_writes(self, node: Node) -> int:
        found = self.writes.get(node)
        if found is None:
            assert self.aliases is not None
            found = self.aliases.direct_writes(node)
            for block in node.blocks:
                for inner in block.nodes():
                    found |= self.node_writes(inner)
            self.writes[node] = found
        return found

    # ---- sweep -------------------------------------------------------------------------------------------------
    def sweep(self, block: Block) -> None:
        for node in list(block.reverse_nodes()):
            inner_blocks = node.blocks
            if inner_blocks:
                self._remove_dead_if_outputs(node)
                self._remove_dead_loop_outputs(node)
                for inner in inner_blocks:
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
                erase_loop_carried(node, i)
                self.changed = True


def erase_loop_carried(loop: Node, i: int) -> None:
    """Remove loop-carried value `i` of a prim::Loop: its initial value, body input and result, and output."""
    body = loop.blocks[0]
    loop.erase_output(i)
    loop.remove_input(i + 2)
    body.erase_input(i + 1)
    body.erase_output(i + 1)


def node_has_side_effects(node: Node) -> bool:
    """Whether the node kind always has side effects (see tsjit.ir.alias_analysis.has_side_effects)."""
    return node.kind in SIDE_EFFECT_KINDS
