"""Conversion to SSA: from the emitter's prim::Store/prim::Load form to values and block outputs.

(jit-overview.md "Conversion To SSA".) The emitter leaves variables as loads and stores and control flow
without outputs:

    %a.1 : int = prim::Constant[value=1]()        %a.1 : int = prim::Constant[value=1]()
     = prim::Store[name="a"](%a.1)                %a : int = prim::If(%c)
     = prim::If(%c)                                 block0():
      block0():                          ->           %a.2 : int = aten::add(%a.1, %a.1)
        %a.2 = ...                                    -> (%a.2)
         = prim::Store[name="a"](%a.2)              block1():
      block1():                                       -> (%a.1)
    %a : int = prim::Load[name="a"]()             prim::Print(%a)
     = prim::Print(%a)

in these steps:
1. control_flow_load_stores: each If gets an output per variable both branches define, each Loop a
   loop-carried value per variable its body assigns that exists before it (loads/stores around them);
2. loop_continuations: `break` becomes prim::LoopContinuation(false, loop-carried values), `continue`
   prim::LoopContinuation(<the loop condition, re-evaluated>, loop-carried values);
3. inline_loop_condition: the loop's condition block is evaluated before the loop and at the end of the body;
4. erase_load_stores: every load is replaced by the value last stored to its name in scope;
5. transform_exits (exit_transform.py) removes prim::LoopContinuation and prim::ReturnStmt.
"""

from __future__ import annotations

from tsjit.frontend.environment import meaningful_name
from tsjit.frontend.exit_transform import transform_exits
from tsjit.ir import types as T
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import prim


def convert_to_ssa(graph: Graph) -> None:
    ControlFlowLoadStores().run(graph.block)
    LoopContinuations().run(graph.block)
    inline_loop_condition(graph.block)
    erase_load_stores(graph.block, MiniEnvironment(None))
    transform_exits(graph)


class MiniEnvironment:
    """A chain of frames mapping variable names to types (or values)."""

    def __init__(self, next: MiniEnvironment | None):
        self.next = next
        self.table: dict = {}

    def find_in_this_frame(self, name: str):
        return self.table.get(name)

    def find_in_any_frame(self, name: str):
        frame: MiniEnvironment | None = self
        while frame is not None:
            if name in frame.table:
                return frame.table[name]
            frame = frame.next
        return None

    def defined_variables(self) -> list[str]:
        return sorted(self.table)


def _create_load(graph: Graph, name: str, type_: T.Type) -> Node:
    node = graph.create(prim.Load, [], 1)
    node.output().set_type(type_)
    return node.s_("name", name)


def _create_store(graph: Graph, name: str, value: Value) -> Node:
    return graph.create(prim.Store, [value], 0).s_("name", name)


# ---- step 1: loads and stores around control flow ---------------------------------------------------------------
class ControlFlowLoadStores:
    """Adds the outputs of Ifs and the loop-carried values of Loops, as loads and stores around them."""

    def __init__(self):
        self.environment: MiniEnvironment | None = None

    def run(self, block: Block) -> MiniEnvironment:
        self.environment = MiniEnvironment(self.environment)
        # walk the live list: the stores added after an If or Loop must be visited too
        node = block.return_node.next
        while node is not block.return_node:
            self.visit(node)
            node = node.next
        frame = self.environment
        self.environment = frame.next
        return frame

    def visit(self, node: Node) -> None:
        if node.kind is prim.If:
            self.add_if_load_stores(node)
        elif node.kind is prim.Loop:
            self.add_loop_load_stores(node)
        elif node.kind in (prim.Closure, prim.ComprehensionScope):
            for block in node.blocks:
                self.run(block)
        elif node.kind is prim.Store:
            self.environment.table[node.s("name")] = node.input().type

    def add_if_load_stores(self, node: Node) -> None:
        true_block, false_block = node.blocks
        true_vars, false_vars = self.run(true_block), self.run(false_block)
        mutated = {v for v in true_vars.defined_variables() if false_vars.find_in_any_frame(v) is not None}
        mutated |= {v for v in false_vars.defined_variables() if true_vars.find_in_any_frame(v) is not None}
        for name in sorted(mutated):
            true_type, false_type = true_vars.find_in_any_frame(name), false_vars.find_in_any_frame(name)
            # stores keep their values' own types, which may differ where the variable is declared with a
            # wider one (`a: I = A()` then `a = B()` for an interface I): a Union then, as TorchScript does
            unified = T.unify_types(true_type, false_type, default_to_union=True)
            if unified is None:
                continue  # the emitter allows this when the variable is not used afterwards
            _add_block_output(true_block, true_type, name)
            _add_block_output(false_block, false_type, name)
            _add_node_output(node, unified, name)

    def add_loop_load_stores(self, node: Node) -> None:
        """loop_carried_outputs = Loop(trip_count, cond, loop_carried_inputs)
                                    block0(i, loop_carried_in): <body> -> (cond, loop_carried_out)"""
        body = node.blocks[0]
        loop_vars = self.run(body)
        for name in loop_vars.defined_variables():
            parent_type = self.environment.find_in_any_frame(name)
            if parent_type is None:
                continue  # local to the loop body
            block_type = loop_vars.find_in_this_frame(name)
            unified = T.unify_types(parent_type, block_type)
            _add_node_input(node, parent_type, name)
            _add_block_input(body, unified, name)
            _add_block_output(body, block_type, name)
            _add_node_output(node, unified, name)


def _add_block_input(block: Block, type_: T.Type, name: str) -> None:
    value = block.add_input(name)
    value.set_type(type_)
    insert_at_front(_create_store(block.owning_graph, name, value), block)


def _add_block_output(block: Block, type_: T.Type, name: str) -> None:
    graph = block.owning_graph
    with graph.insert_point_guard(block):
        block.register_output(graph.insert_node(_create_load(graph, name, type_)).output())


def _add_node_output(node: Node, type_: T.Type, name: str) -> None:
    output = node.add_output(type_)
    if meaningful_name(name):
        output.set_debug_name(name)
    _create_store(node.owning_graph, name, output).insert_after(node)


def _add_node_input(node: Node, type_: T.Type, name: str) -> None:
    load = _create_load(node.owning_graph, name, type_).insert_before(node)
    node.add_input(load.output())


def insert_at_front(node: Node, block: Block) -> Node:
    """Place `node` first in `block` (C++ `insertAfter(block->param_node())`)."""
    return node.insert_before(next(iter(block.nodes()), block.return_node))


def clone_block_into(target: Block, source: Block, value_map) -> None:
    """`target.clone_from(source, value_map)`, naming the copies as C++ Block::cloneFrom does: it copies each
    output's metadata twice, so the copy ends up with the source's name and the source with a fresh `.N`
    suffix. The names torch prints after cloning (`%x.13`) depend on it."""
    before = set(target.nodes())
    target.clone_from(source, value_map)
    _copy_names_again(list(source.nodes()), [n for n in target.nodes() if n not in before])


def _copy_names_again(originals: list[Node], copies: list[Node]) -> None:
    for original, copy in zip(originals, copies):
        for old, new in zip(original.outputs, copy.outputs):
            new.copy_metadata(old)
        for old_block, new_block in zip(original.blocks, copy.blocks):
            _copy_names_again(list(old_block.nodes()), list(new_block.nodes()))


# ---- step 2: break and continue -----------------------------------------------------------------------------------
class LoopContinuations:
    """`break`/`continue` become prim::LoopContinuation(continue_condition, loop-carried values...)."""

    def __init__(self):
        self.false_value: Value | None = None
        self.current_loop: Node | None = None

    def run(self, block: Block) -> None:
        graph = block.owning_graph
        front = next(iter(block.nodes()), block.return_node)
        with graph.insert_point_guard(front):
            self.false_value = graph.insert_constant(False)
        self.assign_exit_continuations(block)

    def assign_exit_continuations(self, block: Block) -> None:
        for node in list(block.nodes()):
            if node.kind is prim.If:
                for inner in node.blocks:
                    self.assign_exit_continuations(inner)
            elif node.kind is prim.Closure:
                LoopContinuations().run(node.blocks[0])
            elif node.kind is prim.Loop:
                previous, self.current_loop = self.current_loop, node
                self.assign_exit_continuations(node.blocks[0])
                self.current_loop = previous
            elif node.kind is prim.ContinueStmt:
                self.replace_continue(node)
            elif node.kind is prim.BreakStmt:
                self.replace_break(node)

    def replace_continue(self, node: Node) -> None:
        graph = node.owning_graph
        continuation = graph.create(prim.LoopContinuation, [], 0).insert_after(node)
        header = continuation.add_block()
        clone_block_into(header, self.current_loop.blocks[1], lambda v: v)
        inline_block_before_node(node, header)
        continuation.add_input(header.outputs[0])
        continuation.erase_block(0)
        self.add_loop_carried_outputs(continuation)
        node.destroy()

    def replace_break(self, node: Node) -> None:
        exit_node = node.owning_graph.create(prim.LoopContinuation, [self.false_value], 0).insert_after(node)
        self.add_loop_carried_outputs(exit_node)
        node.destroy()

    def add_loop_carried_outputs(self, node: Node) -> None:
        """The values the loop body would output here: fresh loads of its loop-carried variables."""
        graph = node.owning_graph
        body_return = self.current_loop.blocks[0].return_node
        with graph.insert_point_guard(node):
            for output in body_return.inputs:
                load = output.node
                assert load.kind is prim.Load, "loop-carried outputs are loads at this point"
                node.add_input(graph.insert_node(graph.create_clone(load, lambda v: v)).output())


# ---- step 3: the loop condition -------------------------------------------------------------------------------
def inline_block_before_node(before: Node, block: Block) -> None:
    for node in list(block.nodes()):
        node.move_before(before)


def inline_loop_condition(block: Block) -> None:
    """Loop(trip_count) block0(i): body  block1(): cond  ->  cond; Loop(trip_count, cond) block0(i): body; cond"""
    for node in list(block.nodes()):
        for inner in node.blocks:
            inline_loop_condition(inner)
        if node.kind is prim.Loop:
            _inline_condition(node)


def _inline_condition(node: Node) -> None:
    body, header = node.blocks[0], node.blocks[1]
    first = node.add_block()
    clone_block_into(first, header, lambda v: v)
    inline_block_before_node(node, first)
    node.insert_input(1, first.outputs[0])
    node.erase_block(2)
    inline_block_before_node(body.return_node, header)
    body.return_node.insert_input(0, header.outputs[0])
    node.erase_block(1)


# ---- step 4: loads and stores become values ---------------------------------------------------------------------
def erase_load_stores(block: Block, parent: MiniEnvironment) -> None:
    environment = MiniEnvironment(parent)
    for node in list(block.nodes()):
        if node.kind is prim.Store:
            environment.table[node.s("name")] = node.input()
            node.destroy()
        elif node.kind is prim.Load:
            value = environment.find_in_any_frame(node.s("name"))
            assert value is not None, "type checking ensures every loaded name was stored"
            node.output().replace_all_uses_with(value)
            node.destroy()
        elif node.kind is prim.ComprehensionScope:
            # writes in a comprehension stay local to it; its nodes then join the enclosing block
            scope = node.blocks[0]
            erase_load_stores(scope, environment)
            inline_block_before_node(node, scope)
            node.destroy()
        else:
            for inner in node.blocks:
                erase_load_stores(inner, environment)
