"""Graph.lint(): check every invariant of the IR and name the node that breaks one.

The invariants (seed: pytorch-ir-2018.md, "the list is a valid topological ordering"; C++ Graph::lint):
- every node reached from the top block belongs to this graph, sits in its block's linked list with increasing
  positions, and every node the graph owns is reached (nothing created and forgotten);
- every input of a node is in scope: defined earlier in the same block or an enclosing one (values flow into
  sub-blocks, never out of them);
- use lists are exact: each input slot is exactly one Use, and each Use points at a live slot reading the value;
- outputs know their node and offset; debug names map to the values that carry them;
- prim::If has one input, two blocks without inputs, and each block returns as many values as the If has outputs;
  prim::Loop(max_trip_count, cond, x_1..x_r) has one block with inputs (i, a_1..a_r), returns
  (cond, b_1..b_r), and r outputs;
- graphs stored in attributes (fusion groups, subgraphs) are themselves valid.
"""

from __future__ import annotations

from tsjit.errors import IRError
from tsjit.ir.printer import print_node
from tsjit.ir.symbols import prim

_CONTEXT_LINES = 3


def lint_graph(graph) -> None:
    """Raise IRError describing the first broken invariant of `graph`."""
    _Linter(graph).run()


class _Linter:
    def __init__(self, graph):
        self.graph = graph
        self.reached: set = set()

    def run(self) -> None:
        block = self.graph.block
        if block.owning_node is not None:
            self.fail(None, "the top-level block must not have an owning node")
        self.check_block(block, [set()])
        self.check_ownership()
        self.check_uses()
        self.check_names()

    # ---- structure and scoping -----------------------------------------------------------------------------
    def check_block(self, block, scopes: list[set]) -> None:
        scope: set = set()
        scopes = [*scopes, scope]
        self.check_sentinels(block)
        self.define(block.param_node, scope)
        previous = None
        for node in block.nodes():
            self.check_placement(node, block, previous)
            self.check_inputs(node, scopes)
            for inner in node.blocks:
                if inner.owning_node is not node:
                    self.fail(node, "a block of this node does not name it as its owning node")
                self.check_block(inner, scopes)
            self.check_control_flow(node)
            self.check_attributes(node)
            self.define(node, scope)
            previous = node
        self.check_inputs(block.return_node, scopes)

    def check_sentinels(self, block) -> None:
        param, ret = block.param_node, block.return_node
        if param.kind is not prim.Param or param.inputs or param.owning_block is not block:
            self.fail(param, "a block's input node must be a prim::Param without inputs")
        if ret.kind is not prim.Return or ret.outputs or ret.owning_block is not block:
            self.fail(ret, "a block's output node must be a prim::Return without outputs")
        self.reached.update((param, ret))

    def check_placement(self, node, block, previous) -> None:
        if node.graph is not self.graph:
            self.fail(node, "node belongs to another graph")
        if node.owning_block is not block:
            self.fail(node, "node's owning block is not the block that lists it")
        if node.next.prev is not node or node.prev.next is not node:
            self.fail(node, "the block's node list is broken around this node")
        if node.kind in (prim.Param, prim.Return):
            self.fail(node, f"{node.kind} may only be a block's input or output node")
        if previous is not None and not previous._position < node._position:
            self.fail(node, "node positions do not increase along the block")
        self.reached.add(node)

    def define(self, node, scope: set) -> None:
        for offset, value in enumerate(node.outputs):
            if value.node is not node or value.offset != offset:
                self.fail(node, f"output {offset} (%{value.debug_name}) does not point back to its node and offset")
            scope.add(value)

    def check_inputs(self, node, scopes: list[set]) -> None:
        for offset, value in enumerate(node.inputs):
            if not any(value in scope for scope in scopes):
                self.fail(node, f"input {offset} (%{value.debug_name}) is not in scope here: it is defined "
                                "later, in a block that does not enclose this node, or not at all")

    def check_control_flow(self, node) -> None:
        if node.kind is prim.If:
            self.check_if(node)
        elif node.kind is prim.Loop:
            self.check_loop(node)

    def check_if(self, node) -> None:
        if len(node.inputs) != 1 or len(node.blocks) != 2:
            self.fail(node, "prim::If needs exactly one input (the condition) and two blocks")
        for block in node.blocks:
            if block.inputs:
                self.fail(node, "the blocks of prim::If take no inputs")
            if len(block.outputs) != len(node.outputs):
                self.fail(node, f"a block of prim::If returns {len(block.outputs)} values for "
                                f"{len(node.outputs)} outputs")

    def check_loop(self, node) -> None:
        if len(node.inputs) < 2 or len(node.blocks) != 1:
            self.fail(node, "prim::Loop needs (max_trip_count, initial_condition, carried...) and one block")
        carried, body = len(node.inputs) - 2, node.blocks[0]
        if len(node.outputs) != carried:
            self.fail(node, f"prim::Loop carries {carried} values but has {len(node.outputs)} outputs")
        if len(body.inputs) != carried + 1:
            self.fail(node, f"the body of prim::Loop takes {len(body.inputs)} inputs, expected {carried + 1} "
                            "(the iteration number and the carried values)")
        if len(body.outputs) != carried + 1:
            self.fail(node, f"the body of prim::Loop returns {len(body.outputs)} values, expected "
                            f"{carried + 1} (the continue condition and the carried values)")

    def check_attributes(self, node) -> None:
        for label, subgraph in node.held_graphs():
            try:
                lint_graph(subgraph)
            except IRError as error:
                self.fail(node, f"its subgraph attribute {label!r} is invalid", detail=str(error))

    # ---- whole-graph bookkeeping ---------------------------------------------------------------------------
    def check_ownership(self) -> None:
        for node in self.graph._all_nodes - self.reached:
            self.fail(node, "node is owned by the graph but is in no block (created and never inserted, "
                            "or removed without destroy())")

    def check_uses(self) -> None:
        for node in self.reached:
            for offset, value in enumerate(node.inputs):
                if value.uses.count((node, offset)) != 1:
                    self.fail(node, f"input {offset} (%{value.debug_name}) is not recorded exactly once in "
                                    "its value's use list")
            for value in node.outputs:
                self.check_value_uses(value)

    def check_value_uses(self, value) -> None:
        for user, offset in value.uses:
            if user not in self.reached:
                self.fail(value.node, f"%{value.debug_name} has a use by a {user.kind} that is not in the graph")
            if offset >= len(user.inputs) or user.inputs[offset] is not value:
                self.fail(user, f"%{value.debug_name} lists a use at input {offset} that reads something else")

    def check_names(self) -> None:
        for name, value in self.graph._names.items():
            if value.debug_name != name or value.node not in self.reached:
                self.fail(value.node, f"the name {name!r} is registered for a value that does not carry it")

    # ---- reporting -----------------------------------------------------------------------------------------
    def fail(self, node, message: str, detail: str = "") -> None:
        raise IRError(_describe(self.graph, node, message, detail))


def _describe(graph, node, message: str, detail: str) -> str:
    """The message, the offending node, the lines of IR around it, and any nested detail."""
    text = f"Graph.lint: {message}"
    if node is not None:
        line = _safe(lambda: _node_line(node), default=str(node.kind))
        context = _safe(lambda: _context(graph, line), default="")
        text += f"\n  offending node: {line}" + (f"\n{context}" if context else "")
    return f"{text}\n{detail}" if detail else text


def _node_line(node) -> str:
    return print_node(node).split("\n", 1)[0].strip()


def _context(graph, line: str) -> str:
    lines = graph.str(print_source_locations=False).splitlines()
    hits = [i for i, text in enumerate(lines) if text.strip() == line]
    if not hits:
        return ""
    at = hits[0]
    first = max(0, at - _CONTEXT_LINES)
    window = lines[first: at + _CONTEXT_LINES + 1]
    return "\n".join(f"{'>>' if first + i == at else '  '} {text}" for i, text in enumerate(window))


def _safe(produce, default: str) -> str:
    """Best-effort rendering: a graph broken enough to fail lint may also fail to print."""
    try:
        return produce()
    except Exception:  # noqa: BLE001 - the lint message must survive any printing failure
        return default
