"""Property test: random sequences of legal graph edits keep `lint()` true."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tsjit.ir.graph import Graph
from tsjit.ir.symbols import Symbol, prim

op = Symbol("test::op")


def visible_values(graph, before=None):
    """Values usable by a node placed before `before` (the end of the top block when None)."""
    values = list(graph.inputs)
    for node in graph.nodes():
        if node is before:
            break
        values.extend(node.outputs)
    return values


def add_node(graph, data):
    nodes = list(graph.nodes())
    anchor = data.draw(st.sampled_from([*nodes, None]))
    candidates = visible_values(graph, anchor)
    inputs = data.draw(st.lists(st.sampled_from(candidates), max_size=3))
    node = graph.create(op, inputs, data.draw(st.integers(0, 2)))
    graph.insert_node(node) if anchor is None else node.insert_before(anchor)


def add_if(graph, data):
    candidates = visible_values(graph)
    if_node = graph.insert_node(graph.create(prim.If, [data.draw(st.sampled_from(candidates))], 1))
    for _ in range(2):
        block = if_node.add_block()
        inner = block.append_node(graph.create(op, data.draw(st.lists(st.sampled_from(candidates), max_size=2))))
        block.register_output(data.draw(st.sampled_from([inner.output(), *candidates])))


def destroy_unused(graph, data):
    unused = [n for n in graph.nodes() if not n.has_uses()]
    if unused:
        data.draw(st.sampled_from(unused)).destroy()


def replace_with_input(graph, data):
    outputs = [v for n in graph.nodes() for v in n.outputs]
    if outputs:
        data.draw(st.sampled_from(outputs)).replace_all_uses_with(data.draw(st.sampled_from(graph.inputs)))


def move_node(graph, data):
    nodes = list(graph.nodes())
    if len(nodes) < 2:
        return
    node, anchor = data.draw(st.sampled_from(nodes)), data.draw(st.sampled_from(nodes))
    if node is anchor or node.blocks:  # (a node with blocks also reads the values its blocks use)
        return
    defined_before_anchor = set(visible_values(graph, anchor)) - set(node.outputs)
    users_after = all(use.user.is_after(anchor) or use.user is anchor
                      for value in node.outputs for use in value.uses)
    if set(node.inputs) <= defined_before_anchor and users_after:
        node.move_before(anchor)


def register_output(graph, data):
    graph.register_output(data.draw(st.sampled_from(visible_values(graph))))


def rename(graph, data):
    value = data.draw(st.sampled_from(visible_values(graph)))
    value.set_debug_name(data.draw(st.sampled_from(["a", "a.1", "b", "a.2", None])))


EDITS = [add_node, add_if, destroy_unused, replace_with_input, move_node, register_output, rename]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_edits_keep_lint_true(data):
    graph = Graph()
    for _ in range(data.draw(st.integers(1, 3))):
        graph.add_input()
    for _ in range(data.draw(st.integers(1, 25))):
        data.draw(st.sampled_from(EDITS))(graph, data)
        assert graph.lint()
    copied = graph.copy()
    assert copied.lint()
    assert len(list(copied.all_nodes())) == len(list(graph.all_nodes()))
