"""The graph-manipulation API of pytorch-ir-2018.md "Graph manipulation", method by method."""

import pytest
import torch

from tsjit.errors import IRError
from tsjit.ir.graph import Graph, Use
from tsjit.ir.symbols import Symbol, attr, prim
from tsjit.ir.types import IntType, TensorType

op = Symbol("test::op")
other = Symbol("test::other")


def chain(n=3):
    """x -> op -> op -> ... -> return, with the nodes."""
    g = Graph()
    value = g.add_input("x")
    nodes = []
    for _ in range(n):
        node = g.insert_node(g.create(op, [value]))
        nodes.append(node)
        value = node.output()
    g.register_output(value)
    return g, nodes


def kinds(block):
    return [n.kind for n in block.nodes()]


# ---- Graph ---------------------------------------------------------------------------------------------------
def test_inputs_outputs_and_nodes():
    g, nodes = chain()
    assert [v.debug_name for v in g.inputs] == ["x"]
    assert g.outputs == (nodes[-1].output(),)
    assert list(g.nodes()) == nodes
    assert g.lint()


def test_insert_and_erase_input():
    g = Graph()
    a, c = g.add_input("a"), g.add_input("c")
    b = g.insert_input(1, "b")
    assert g.inputs == (a, b, c)
    assert [v.offset for v in g.inputs] == [0, 1, 2]
    g.erase_input(1)
    assert g.inputs == (a, c) and c.offset == 1
    assert g.lint()


def test_erase_input_with_uses_fails():
    g, _ = chain(1)
    with pytest.raises(IRError, match="still has uses"):
        g.erase_input(0)


def test_register_and_erase_output():
    g, nodes = chain(2)
    assert g.register_output(nodes[0].output()) == 1
    g.erase_output(0)
    assert g.outputs == (nodes[0].output(),)
    assert nodes[1].output().uses == []
    assert g.lint()


def test_create_is_unplaced_and_lint_catches_it():
    g, _ = chain(1)
    node = g.create(op, [g.inputs[0]])
    assert node.owning_block is None and node.next is None
    with pytest.raises(IRError, match="never inserted"):
        g.lint()
    node.destroy()
    assert g.lint()


def test_insert_point_and_guard():
    g, nodes = chain(2)
    g.set_insert_point(nodes[1])
    first = g.insert_node(g.create(other, [g.inputs[0]]))
    assert list(g.nodes()) == [nodes[0], first, nodes[1]]
    with g.insert_point_guard(g.block):
        last = g.insert_node(g.create(other, [g.inputs[0]]))
    assert list(g.nodes())[-1] is last
    assert g.insert_point is nodes[1]
    with pytest.raises(RuntimeError), g.insert_point_guard(nodes[0]):
        raise RuntimeError("boom")
    assert g.insert_point is nodes[1]
    assert g.lint()


def test_insert_constant_kinds():
    g = Graph()
    cases = [(3, "i", "int"), (True, "i", "bool"), (2.5, "f", "float"), ("hi", "s", "str"),
             (torch.device("cpu"), "s", "Device"), ([1, 2], "ival", "int[]"), (None, None, "NoneType"),
             (torch.float32, "i", "int")]
    for value, kind, type_text in cases:
        out = g.insert_constant(value)
        node = out.node
        assert node.kind is prim.Constant
        assert str(out.type) == type_text
        assert (node.kind_of("value") if node.has_attribute("value") else None) == kind
    assert g.lint()


def test_constant_values_round_trip():
    from tsjit.ir.constants import constant_value

    g = Graph()
    for value in [3, True, False, 2.5, 1 + 2j, "é", torch.device("cpu"), [1, 2], (1, "x"), None]:
        assert constant_value(g.insert_constant(value).node) == value
    tensor = torch.arange(3.0)
    assert constant_value(g.insert_constant(tensor).node) is tensor
    assert constant_value(g.insert_constant(torch.int64).node) == 4


def test_copy_is_deep_and_independent():
    g, nodes = chain(2)
    with g.insert_point_guard(g.block):
        if_node = g.insert_node(g.create(prim.If, [g.inputs[0]], 1))
    for block in (if_node.add_block(), if_node.add_block()):
        block.register_output(nodes[0].output())
    nodes[0].i_("n", 3)
    copied = g.copy()
    assert copied.lint()
    assert [n.kind for n in copied.all_nodes()] == [n.kind for n in g.all_nodes()]
    assert all(a is not b for a, b in zip(copied.all_nodes(), g.all_nodes()))
    assert next(copied.nodes()).i("n") == 3
    assert [v.debug_name for v in copied.inputs] == ["x"]
    inner_out = list(copied.nodes())[-1].blocks[0].outputs[0]
    assert inner_out is next(copied.nodes()).output()


def test_copy_deep_copies_subgraph_attributes():
    g, nodes = chain(1)
    sub, _ = chain(1)
    nodes[0].g_("Subgraph", sub)
    copied = g.copy()
    assert next(copied.nodes()).g("Subgraph") is not sub
    assert copied.lint()


# ---- Value ---------------------------------------------------------------------------------------------------
def test_value_node_offset_and_owning_graph():
    g = Graph()
    node = g.insert_node(g.create(op, [], 3))
    assert [v.offset for v in node.outputs] == [0, 1, 2]
    assert all(v.node is node and v.owning_graph is g for v in node.outputs)
    assert isinstance(node.outputs[0].type, TensorType)


def test_uses_are_exact():
    g = Graph()
    x = g.add_input()
    node = g.insert_node(g.create(op, [x, x]))
    assert x.uses == [Use(node, 0), Use(node, 1)]
    node.remove_input(0)
    assert x.uses == [Use(node, 0)]
    assert g.lint()


def test_replace_all_uses_with():
    g, nodes = chain(3)
    a, b = nodes[0].output(), nodes[1].output()
    b.replace_all_uses_with(a)
    assert b.uses == []
    assert nodes[2].inputs == (a,)
    nodes[1].destroy()
    assert g.lint()


def test_replace_all_uses_with_does_not_rewrite_the_new_value_itself():
    # torch.fx #118626: replacing x's uses with y = f(x) must not make y read itself
    g, nodes = chain(2)
    x = g.inputs[0]
    y = nodes[0].output()
    x.replace_uses_with_if(y, lambda use: use.user is not y.node)
    assert nodes[0].inputs == (x,)
    assert nodes[1].inputs == (y,)
    assert g.lint()


def test_replace_uses_with_if_and_after_node():
    g = Graph()
    x, y = g.add_input("x"), g.add_input("y")
    users = [g.insert_node(g.create(op, [x])) for _ in range(3)]
    x.replace_all_uses_after_node_with(users[0], y)
    assert [u.inputs[0] for u in users] == [x, y, y]
    y.replace_uses_with_if(x, lambda use: use.user is users[2])
    assert [u.inputs[0] for u in users] == [x, y, x]
    assert g.lint()


def test_debug_name_uniquing_matches_torchscript():
    g = Graph()
    vs = [g.add_input() for _ in range(6)]
    vs[0].set_debug_name("x")
    vs[1].set_debug_name("x")
    assert [v.debug_name for v in vs[:2]] == ["x.1", "x"]
    vs[2].set_debug_name("x")
    vs[3].set_debug_name("x.5")
    vs[4].set_debug_name("x.5")
    vs[5].set_debug_name("x")
    assert [v.debug_name for v in vs] == ["x.1", "x.3", "x.8", "x.6", "x.5", "x"]
    with pytest.raises(IRError, match="Invalid name"):
        vs[0].set_debug_name("12")
    vs[0].set_debug_name(None)
    assert not vs[0].has_debug_name() and vs[0].debug_name == str(vs[0].unique)
    assert g.lint()


def test_debug_name_uniquing_against_torch():
    torch_graph = torch._C.Graph()
    ours = Graph()
    names = ["x", "x", "y.2", "x.1", "y", "y.2", "x", "y"]
    pairs = [(torch_graph.addInput(), ours.add_input()) for _ in names]
    for (theirs, mine), name in zip(pairs, names):
        theirs.setDebugName(name)
        mine.set_debug_name(name)
    assert [m.debug_name for _, m in pairs] == [t.debugName() for t, _ in pairs]


def test_set_type():
    g = Graph()
    x = g.add_input()
    assert x.set_type(IntType.get()) is x and x.type == IntType.get()


# ---- Node ----------------------------------------------------------------------------------------------------
def test_node_inputs_editing():
    g = Graph()
    a, b, c = (g.add_input(n) for n in "abc")
    node = g.insert_node(g.create(op, [a, c]))
    node.insert_input(1, b)
    assert node.inputs == (a, b, c)
    assert c.uses == [Use(node, 2)]
    assert node.replace_input(0, c) is a
    assert a.uses == [] and c.uses == [Use(node, 2), Use(node, 0)]
    node.replace_input_with(c, a)
    assert node.inputs == (a, b, a)
    node.remove_all_inputs()
    assert node.inputs == () and a.uses == [] and b.uses == []
    assert g.lint()


def test_node_outputs_editing():
    g = Graph()
    node = g.insert_node(g.create(op, [], 1))
    first = node.outputs[0]
    zero = node.insert_output(0)
    node.add_output(IntType.get())
    assert node.outputs[0] is zero and node.outputs[1] is first
    assert [v.offset for v in node.outputs] == [0, 1, 2]
    node.erase_output(0)
    assert [v.offset for v in node.outputs] == [0, 1] and node.outputs[0] is first
    g.register_output(first)
    with pytest.raises(IRError, match="still has uses"):
        node.erase_output(0)
    assert g.lint()


def test_output_requires_single():
    g = Graph()
    node = g.insert_node(g.create(op, [], 2))
    with pytest.raises(IRError, match="exactly one"):
        node.output()


def test_blocks_add_and_erase():
    g = Graph()
    x = g.add_input("x")
    loop = g.insert_node(g.create(prim.Loop, [g.insert_constant(3), g.insert_constant(True), x], 1))
    body = loop.add_block()
    body.add_input("i", IntType.get())
    carried = body.add_input("a")
    inner = body.append_node(g.create(op, [carried, x]))
    with g.insert_point_guard(body):
        body.register_output(g.insert_constant(True))
    body.register_output(inner.output())
    assert body.owning_node is loop and inner.owning_block is body
    assert g.lint()
    extra = loop.add_block()
    extra.append_node(g.create(op, [x]))
    loop.erase_block(1)
    assert len(loop.blocks) == 1 and len(x.uses) == 2
    assert g.lint()


def test_destroy():
    g, nodes = chain(3)
    with pytest.raises(IRError, match="still used by test::op"):
        nodes[1].destroy()
    nodes[2].output().replace_all_uses_with(nodes[1].output())
    nodes[2].destroy()
    assert list(g.nodes()) == nodes[:2]
    assert nodes[2] not in g._all_nodes
    assert g.lint()


def test_destroy_while_iterating():
    g, nodes = chain(4)
    g.register_output(g.inputs[0])
    g.erase_output(0)
    for node in g.block.reverse_nodes():
        node.destroy()
    assert g.block.is_empty() and g.lint()


def test_insert_before_after_and_move():
    g, nodes = chain(3)
    a = g.create(other)
    a.insert_before(nodes[0])
    b = g.create(other)
    b.insert_after(nodes[2])
    assert list(g.nodes()) == [a, *nodes, b]
    b.move_before(a)
    a.move_after(nodes[2])
    assert list(g.nodes()) == [b, *nodes, a]
    with pytest.raises(IRError, match="already in a block"):
        a.insert_before(b)
    stray = g.create(other)
    with pytest.raises(IRError, match="after a block's prim::Return"):
        stray.insert_after(g.return_node)
    stray.destroy()
    assert g.lint()


def test_moving_before_a_definition_breaks_lint():
    g, nodes = chain(2)
    nodes[1].move_before(nodes[0])
    with pytest.raises(IRError, match="not in scope"):
        g.lint()


def test_is_before_and_is_after_across_blocks():
    g = Graph()
    x = g.add_input("x")
    first = g.insert_node(g.create(op, [x]))
    if_node = g.insert_node(g.create(prim.If, [x], 0))
    then_block, else_block = if_node.add_block(), if_node.add_block()
    inner_then = then_block.append_node(g.create(op, [x]))
    inner_else = else_block.append_node(g.create(op, [x]))
    last = g.insert_node(g.create(op, [x]))
    assert first.is_before(inner_then) and inner_then.is_after(first)
    assert inner_then.is_before(last) and last.is_after(inner_else)
    assert not first.is_before(first)
    assert not if_node.is_before(inner_then) and not inner_then.is_before(if_node)


def test_positions_renumber_when_gaps_close():
    g, nodes = chain(2)
    anchor = nodes[1]
    created = []
    for _ in range(100):  # always squeeze in right before the same node: halves the gap each time
        created.append(g.create(other).insert_before(anchor))
    order = list(g.nodes())
    assert order[0] is nodes[0] and order[-1] is anchor
    assert all(a.is_before(b) for a, b in zip(order, order[1:]))
    assert g.lint()


def test_attributes():
    g = Graph()
    node = g.insert_node(g.create(op, [], 0))
    sub, _ = chain(1)
    node.i_("a", 3).f_("b", 1.5).s_("c", "x").is__("d", [1, 2]).g_("e", sub).ival_(attr.f, (1, 2))
    assert node.i("a") == 3 and node.f(attr.b) == 1.5 and node.s("c") == "x"
    assert node.is_("d") == [1, 2] and node.g("e") is sub and node.ival("f") == (1, 2)
    assert node.kind_of("d") == "is" and node.has_attribute("e")
    assert [s.name for s in node.attribute_names()] == ["a", "b", "c", "d", "e", "f"]
    with pytest.raises(IRError, match="kind i, not f"):
        node.f("a")
    with pytest.raises(IRError, match="no attribute"):
        node.i("zzz")
    node.remove_attribute("a")
    assert not node.has_attribute("a")
    clone = g.create(op, [], 0).copy_attributes(node)
    assert clone.g("e") is not sub and clone.is_("d") == [1, 2]
    clone.destroy()


def test_inputs_must_come_from_the_same_graph():
    g1, g2 = Graph(), Graph()
    x = g1.add_input()
    with pytest.raises(IRError, match="another graph"):
        g2.create(op, [x])
    node = g2.insert_node(g2.create(op, []))
    with pytest.raises(IRError, match="another graph"):
        node.add_input(x)
    with pytest.raises(IRError, match="must be a Value"):
        node.add_input(3)


def test_block_clone_from_and_create_clone():
    g = Graph()
    x = g.add_input("x")
    if_node = g.insert_node(g.create(prim.If, [x], 1))
    for _ in range(2):
        block = if_node.add_block()
        block.register_output(block.append_node(g.create(op, [x])).output())
    g.register_output(if_node.output())
    h = Graph()
    y = h.add_input("y")
    clone = h.insert_node(h.create_clone(if_node, lambda v: {x: y}[v]))
    h.register_output(clone.output())
    assert h.lint()
    assert [n.inputs for n in clone.blocks[0].nodes()] == [(y,)]


def test_all_nodes_is_preorder():
    g = Graph()
    x = g.add_input()
    a = g.insert_node(g.create(op, [x]))
    if_node = g.insert_node(g.create(prim.If, [x], 0))
    inner = if_node.add_block().append_node(g.create(other, [x]))
    if_node.add_block()
    b = g.insert_node(g.create(op, [x]))
    assert list(g.all_nodes()) == [a, if_node, inner, b]


def test_a_clone_keeps_the_schema_only_for_the_same_input_types():
    from tsjit.ir.parser import parse_ir
    from tsjit.ir.types import FloatType

    source = parse_ir("graph(%a : int, %b : int):\n  %c : int = aten::add(%a, %b)\n  return (%c)")
    node = next(iter(source.nodes()))
    assert node.schema.overload_name == "int"
    same = Graph()
    ints = [same.add_input().set_type(IntType.get()) for _ in range(2)]
    clone = same.create_clone(node, dict(zip(node.inputs, ints)).__getitem__)
    assert clone.maybe_schema() is node.schema
    other = Graph()
    floats = [other.add_input().set_type(FloatType.get()) for _ in range(2)]
    clone = other.create_clone(node, dict(zip(node.inputs, floats)).__getitem__)
    assert clone.schema.overload_name == "float"  # found again for the new input types
