"""The exit transform: remove prim::LoopContinuation and prim::ReturnStmt, setting block outputs instead.

(jit-overview.md "Exit Transform".) After an exit no further instruction of its block may run, so an exit
that *might* have happened (one branch of an if returned) conditionalizes the rest of the block on a
`has_exited` boolean:

    while i < 5:                        continue_loop = i < 5
        if i == 3:                      while continue_loop:
            i += 1                          if i == 3:
            continue           ->               i = i + 1; continue_loop = i < 5; did_exit = True
        i += 2                              else:
                                                did_exit = False
                                            if did_exit: pass
                                            else: i = i + 2; continue_loop = i < 5

Nodes after an exit that surely happened are deleted, and blocks that always raise are known, so

    if x < 0:
        raise Exception("negative")     becomes one prim::If whose raising branch outputs a
    else:                               prim::Uninitialized stand-in and whose other branch returns:
        return sqrt(x)                  nothing after it is conditionalized
    print(x)

prim::Uninitialized values (one per type, at the top of the graph) stand for values that are never read.
With-statements take the temporary prim::With block form during the transform, so an exit inside a `with`
still runs its prim::Exit.
"""

from __future__ import annotations

from tsjit.ir import types as T
from tsjit.ir.constants import NOT_CONSTANT, constant_of
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import Symbol, prim

WILL, MIGHT, WONT, THROWS = "will", "might", "wont", "throws"


def transform_exits(graph: Graph) -> None:
    convert_enter_exit_nodes_to_with_blocks(graph)
    ExitTransformer(graph).transform(prim.LoopContinuation)
    ExitTransformer(graph).transform(prim.ReturnStmt)
    inline_consecutive_ifs(graph.block)
    convert_with_blocks_to_enter_exit_nodes(graph)


class ExitPair:
    """Whether the exit has been hit (a bool Value, or one of the transformer's markers) and the values the
    exit carries to its target block."""

    def __init__(self, has_exited: Value, exit_values: list[Value]):
        self.has_exited = has_exited
        self.exit_values = list(exit_values)


class ExitTransformer:
    def __init__(self, graph: Graph):
        self.graph = graph
        # keyed by the type object, as C++ keys them by TypePtr: equal types made in different places get
        # their own stand-ins, which decides how many prim::Uninitialized nodes the graph shows
        self.unit_values: dict[int, tuple[T.Type, Value]] = {}
        front = next(iter(graph.nodes()), graph.return_node)
        with graph.insert_point_guard(front):
            self.true_value = graph.insert_constant(True)
            self.false_value = graph.insert_constant(False)
        # never read: a block that throws exits before anyone could look at it
        self.throws_value = self.unit_value(T.BoolType.get())
        self.exit_kind: Symbol | None = None
        self.target_block: Block | None = None

    def transform(self, exit_kind: Symbol) -> None:
        self.exit_kind = exit_kind
        self.transform_block(self.graph.block)

    # ---- exit pairs --------------------------------------------------------------------------------------------
    def throws(self) -> ExitPair:
        return ExitPair(self.throws_value, [])

    def wont(self) -> ExitPair:
        return ExitPair(self.false_value, [])

    def will(self, values: list[Value]) -> ExitPair:
        return ExitPair(self.true_value, values)

    def status(self, pair: ExitPair) -> str:
        if pair.has_exited is self.true_value:
            return WILL
        if pair.has_exited is self.false_value:
            return WONT
        if pair.has_exited is self.throws_value:
            return THROWS
        return MIGHT

    def unit_value(self, type_: T.Type) -> Value:
        """One prim::Uninitialized per type, first in the graph."""
        if id(type_) not in self.unit_values:
            node = self.graph.create(prim.Uninitialized, [], 1)
            node.output().set_type(type_)
            node.insert_before(next(iter(self.graph.nodes()), self.graph.return_node))
            self.unit_values[id(type_)] = (type_, node.output())
        return self.unit_values[id(type_)][1]

    def uninitialized_like(self, values: list[Value]) -> list[Value]:
        return [self.unit_value(v.type) for v in values]

    # ---- blocks ------------------------------------------------------------------------------------------------
    def transform_block(self, block: Block) -> ExitPair:
        previous_target = self.target_block
        if self._is_target(block):
            self.target_block = block
        pair = self.wont()
        node = block.return_node.next
        while node is not block.return_node:
            following = node.next
            pair = self.transform_node(node, pair)
            status = self.status(pair)
            if status in (WILL, THROWS):
                self.delete_after_exit_nodes(block, following)
                break
            if status == MIGHT:
                if following is not block.return_node:
                    pair = self.guard_block_nodes(block, pair, following)
                break
            node = following
        if self.target_block is block:
            self._set_target_outputs(block, pair)
            pair = self.wont()  # an exit stops at its target block
        self.target_block = previous_target
        return pair

    def _is_target(self, block: Block) -> bool:
        owner = block.owning_node
        if self.exit_kind is prim.LoopContinuation:
            return owner is not None and owner.kind is prim.Loop
        return owner is None or owner.kind is prim.Closure

    def transform_node(self, node: Node, pair: ExitPair) -> ExitPair:
        kind = node.kind
        if kind is prim.RaiseException:
            return self.throws()
        if kind in (prim.ReturnStmt, prim.LoopContinuation):
            if kind is not self.exit_kind:
                return pair
            values = list(node.inputs)
            node.destroy()
            return self.will(values)
        if kind is prim.If:
            return self.transform_if(node)
        if kind is prim.With:
            return self.transform_block(node.blocks[0])
        if kind is prim.Closure:
            self.transform_block(node.blocks[0])
            return pair
        if kind is prim.Loop:
            return self.transform_loop(node)
        return pair

    def _set_target_outputs(self, block: Block, pair: ExitPair) -> None:
        status = self.status(pair)
        if status == MIGHT:
            node = self.graph.create(prim.If, [pair.has_exited], 0).insert_before(block.return_node)
            node.add_block()
            node.add_block()
            add_if_outputs(node, pair.exit_values, list(block.outputs))
            _replace_block_outputs(block, list(node.outputs))
        elif status == WILL:
            _replace_block_outputs(block, pair.exit_values)

    # ---- control flow ------------------------------------------------------------------------------------------
    def transform_if(self, node: Node) -> ExitPair:
        then_pair = self.transform_block(node.blocks[0])
        else_pair = self.transform_block(node.blocks[1])
        then_status, else_status = self.status(then_pair), self.status(else_pair)
        status = _if_exit_status(then_status, else_status)
        if status == THROWS:
            return self.throws()
        if status == WONT:
            return self.wont()
        # the values of a block that does not exit are never read: stand-ins of the other block's types
        if then_status in (WONT, THROWS):
            then_pair = ExitPair(then_pair.has_exited, self.uninitialized_like(else_pair.exit_values))
        elif else_status in (WONT, THROWS):
            else_pair = ExitPair(else_pair.has_exited, self.uninitialized_like(then_pair.exit_values))
        if status == WILL:
            has_exited = self.true_value
        else:
            add_if_outputs(node, [then_pair.has_exited], [else_pair.has_exited])
            has_exited = node.outputs[-1]
        add_if_outputs(node, then_pair.exit_values, else_pair.exit_values)
        count = len(then_pair.exit_values)
        return ExitPair(has_exited, list(node.outputs[len(node.outputs) - count:]))

    def transform_loop(self, node: Node) -> ExitPair:
        """An exit to outside the loop stops the loop and carries has_exited and the exit values out:

            while cond: ... maybe return v      ->  loop also carries (has_exited, v);
                                                    next condition = False if has_exited else cond
        """
        body = node.blocks[0]
        pair = self.transform_block(body)
        if self.status(pair) in (WONT, THROWS):
            return self.wont()  # the loop may not run at all, so a throwing body does not make it throw
        graph = self.graph
        with graph.insert_point_guard(body):
            new_if = graph.insert_node(graph.create(prim.If, [pair.has_exited], 0))
        new_if.add_block().register_output(self.false_value)
        new_if.add_block().register_output(body.outputs[0])
        new_condition = new_if.add_output(T.BoolType.get())
        body.erase_output(0)
        body.insert_output(0, new_condition)
        node.add_input(self.false_value)
        body.add_input().set_type(T.BoolType.get())
        body.register_output(pair.has_exited)
        new_has_exited = node.add_output(T.BoolType.get())
        for value in pair.exit_values:
            node.add_input(self.unit_value(value.type))
            node.add_output(value.type)
            body.add_input().set_type(value.type)
            body.register_output(value)
        count = len(pair.exit_values)
        return ExitPair(new_has_exited, list(node.outputs[len(node.outputs) - count:]))

    def guard_block_nodes(self, block: Block, pair: ExitPair, first: Node) -> ExitPair:
        """Move the nodes from `first` on into an If that runs them only if the exit was not hit."""
        graph = self.graph
        new_if = graph.create(prim.If, [pair.has_exited], 0).insert_before(first)
        exit_block, guard_block = new_if.add_block(), new_if.add_block()
        node = first
        while node is not block.return_node:
            following = node.next
            node.move_before(guard_block.return_node)
            node = following
        for output, stand_in in zip(block.outputs, self.uninitialized_like(list(block.outputs))):
            exit_block.register_output(stand_in)
            guard_block.register_output(output)
            new_if.add_output(output.type)
        _replace_block_outputs(block, list(new_if.outputs))
        graph.create(self.exit_kind, pair.exit_values, 0).insert_before(exit_block.return_node)
        return self.transform_if(new_if)

    def delete_after_exit_nodes(self, block: Block, first: Node) -> None:
        """Nodes after a sure exit never run; their values may still be block outputs, so they become
        Uninitialized (deleting in reverse so that nodes have no uses left when destroyed)."""
        if first is block.return_node:
            return
        node = block.return_node.prev
        while True:
            previous = node.prev
            self._destroy_after_exit(node)
            if node is first:
                break
            node = previous

    def _destroy_after_exit(self, node: Node) -> None:
        for output in node.outputs:
            if output.uses:
                output.replace_all_uses_with(self.unit_value(output.type))
        node.destroy()


def _if_exit_status(then_status: str, else_status: str) -> str:
    if then_status == THROWS:
        return else_status
    if else_status == THROWS:
        return then_status
    if then_status == else_status and then_status in (WONT, WILL):
        return then_status
    return MIGHT


def add_if_outputs(node: Node, true_values: list[Value], false_values: list[Value]) -> None:
    then_block, else_block = node.blocks
    for true_value, false_value in zip(true_values, false_values):
        then_block.register_output(true_value)
        else_block.register_output(false_value)
        node.add_output(T.unify_types(true_value.type, false_value.type, default_to_union=True))


def _replace_block_outputs(block: Block, values: list[Value]) -> None:
    while block.outputs:
        block.erase_output(0)
    for value in values:
        block.register_output(value)


# ---- early returns: fold the second if into the first ---------------------------------------------------------
def inline_consecutive_ifs(block: Block) -> None:
    """After `if x: return 1` the rest is guarded by a second if on has_exited; merge it into the first:

        if x: return 1          if x:             (instead of: has_exited = x; ...; if has_exited)
        return 2          ->        return 1
                                else:
                                    return 2
    """
    node = block.return_node.next
    while node is not block.return_node:
        for inner in node.blocks:
            inline_consecutive_ifs(inner)
        if not _inline_consecutive_if(node):
            node = node.next


def _inline_consecutive_if(node: Node) -> bool:
    following = node.next
    if node.kind is not prim.If or following.kind is not prim.If:
        return False
    condition = following.inputs[0]
    if condition.node is not node:
        return False
    offset = condition.offset
    then_value = constant_of(node.blocks[0].outputs[offset])
    else_value = constant_of(node.blocks[1].outputs[offset])
    if NOT_CONSTANT in (then_value, else_value) or bool(then_value) == bool(else_value):
        return False
    # breaks a real cycle: convert_to_ssa imports this module
    from tsjit.frontend.convert_to_ssa import clone_block_into

    for first_block, value in zip(node.blocks, (then_value, else_value)):
        second_block = following.blocks[0 if value else 1]
        clone_block_into(first_block, second_block, lambda v, b=first_block: b.outputs[v.offset]
                         if v.node is node else v)
    for output in list(following.outputs):
        new_output = node.add_output(output.type)
        new_output.copy_metadata(output)
        output.replace_all_uses_with(new_output)
    following.destroy()
    return True


# ---- with-statements ---------------------------------------------------------------------------------------------
def convert_enter_exit_nodes_to_with_blocks(graph: Graph) -> None:
    """%a = prim::Enter(%b); <code>; prim::Exit(%b)  ->  prim::Enter; prim::With { <code> } { prim::Exit }"""
    pairs, stack = [], []
    for node in graph.all_nodes():
        if node.kind is prim.Enter:
            stack.append(node)
        elif node.kind is prim.Exit:
            pairs.append((stack.pop(), node))
    for enter, exit_node in pairs:  # innermost pairs first
        with_node = graph.create(prim.With, [], 0)
        body, exit_block = with_node.add_block(), with_node.add_block()
        node = enter.next
        while node is not exit_node:
            following = node.next
            node.move_before(body.return_node)
            node = following
        exit_node.move_before(exit_block.return_node)
        with_node.insert_after(enter)


def convert_with_blocks_to_enter_exit_nodes(graph: Graph) -> None:
    """The inverse: a prim::With's body and then its prim::Exit follow the prim::Enter again."""
    for with_node in [n for n in graph.all_nodes() if n.kind is prim.With]:
        anchor = with_node.prev
        for inner in [*with_node.blocks[0].nodes(), *with_node.blocks[1].nodes()]:
            inner.move_after(anchor)
            anchor = inner
        with_node.destroy()
