"""Graph.lint(): each invariant is broken once, and the message names the offending node."""

import pytest

from tsjit.errors import IRError
from tsjit.ir.graph import Graph, Use
from tsjit.ir.symbols import Symbol, prim
from tsjit.ir.types import IntType

op = Symbol("test::op")
culprit = Symbol("test::culprit")


def base():
    g = Graph()
    x = g.add_input("x")
    a = g.insert_node(g.create(op, [x]))
    return g, x, a


def expect(g, pattern, kind=culprit):
    with pytest.raises(IRError) as info:
        g.lint()
    message = str(info.value)
    assert pattern in message, message
    assert "offending node:" in message and str(kind) in message.split("offending node:")[1], message
    return message


def make_if(g, condition, outputs=0, blocks=2):
    node = g.insert_node(g.create(prim.If, [condition], outputs))
    for _ in range(blocks):
        node.add_block()
    return node


def make_loop(g, carried):
    trip, cond = g.insert_constant(3), g.insert_constant(True)
    loop = g.insert_node(g.create(prim.Loop, [trip, cond, *carried], len(carried)))
    body = loop.add_block()
    body.add_input("i", IntType.get())
    for _ in carried:
        body.add_input()
    return loop, body, cond


def test_valid_graph_passes():
    g, _, a = base()
    g.register_output(a.output())
    assert g.lint() is True


def test_topological_order():
    g, x, a = base()
    b = g.insert_node(g.create(culprit, [a.output()]))
    b.move_before(a)
    expect(g, "not in scope")


def test_value_escaping_its_block():
    g, x, a = base()
    if_node = make_if(g, x)
    inner = if_node.blocks[0].append_node(g.create(op, [x]))
    g.insert_node(g.create(culprit, [inner.output()]))
    expect(g, "not in scope")


def test_dangling_node():
    g, x, _ = base()
    g.create(culprit, [x])
    expect(g, "never inserted")


def test_missing_use():
    g, x, _ = base()
    node = g.insert_node(g.create(culprit, [x]))
    x.uses.remove(Use(node, 0))
    expect(g, "not recorded exactly once")


def test_duplicate_use():
    """A use list cannot hold a use twice (UseList refuses), so lint never meets one."""
    g, x, _ = base()
    node = g.insert_node(g.create(culprit, [x]))
    with pytest.raises(IRError, match="recorded twice"):
        x.uses.append(Use(node, 0))
    assert x.uses.count(Use(node, 0)) == 1


def test_stale_use():
    g, x, a = base()
    node = g.insert_node(g.create(culprit, [a.output()]))
    a.output().uses.append(Use(node, 3))
    expect(g, "reads something else")


def test_use_by_node_outside_graph():
    g, x, a = base()
    a.kind = culprit
    stray = Graph().create(op, [])
    a.output().uses.append(Use(stray, 0))
    expect(g, "not in the graph")


def test_output_offset():
    g, x, a = base()
    a.kind = culprit
    a.output().offset = 4
    expect(g, "does not point back")


def test_registered_name_not_carried():
    g, x, a = base()
    a.kind = culprit
    g._names["ghost"] = a.output()
    expect(g, "'ghost'")


def test_broken_node_list():
    g, x, a = base()
    b = g.insert_node(g.create(culprit, [x]))
    b.prev = g.return_node
    expect(g, "list is broken")


def test_positions_must_increase():
    g, x, a = base()
    b = g.insert_node(g.create(culprit, [x]))
    b._position = a._position - 1
    expect(g, "positions do not increase")


def test_owning_block_mismatch():
    g, x, a = base()
    if_node = make_if(g, x)
    b = g.insert_node(g.create(culprit, [x]))
    b.owning_block = if_node.blocks[0]
    expect(g, "owning block")


def test_node_of_another_graph():
    g, x, a = base()
    b = g.insert_node(g.create(culprit, [x]))
    b.graph = Graph()
    expect(g, "another graph")


def test_param_node_in_list():
    g, x, a = base()
    g.insert_node(g.create(prim.Param, [], 0))
    expect(g, "may only be a block's", kind=prim.Param)


def test_return_sentinel_kind():
    g, x, a = base()
    g.return_node.kind = culprit
    expect(g, "must be a prim::Return")


def test_block_owning_node():
    g, x, a = base()
    if_node = make_if(g, x)
    if_node.kind = culprit
    if_node.blocks[1].owning_node = a
    expect(g, "owning node")


def test_if_needs_two_blocks():
    g, x, a = base()
    make_if(g, x, blocks=1)
    expect(g, "two blocks", kind=prim.If)


def test_if_blocks_take_no_inputs():
    g, x, a = base()
    if_node = make_if(g, x)
    if_node.blocks[0].add_input()
    expect(g, "take no inputs", kind=prim.If)


def test_if_block_outputs_match():
    g, x, a = base()
    if_node = make_if(g, x, outputs=1)
    if_node.blocks[0].register_output(x)
    expect(g, "returns 0 values for 1 outputs", kind=prim.If)


def test_loop_outputs_match_carried():
    g, x, a = base()
    loop, body, cond = make_loop(g, [x])
    body.register_output(cond)
    body.register_output(x)
    loop.erase_output(0)
    expect(g, "carries 1 values but has 0 outputs", kind=prim.Loop)


def test_loop_body_inputs():
    g, x, a = base()
    loop, body, cond = make_loop(g, [x])
    body.register_output(cond)
    body.register_output(x)
    body.erase_input(0)
    expect(g, "takes 1 inputs, expected 2", kind=prim.Loop)


def test_loop_body_outputs():
    g, x, a = base()
    loop, body, cond = make_loop(g, [x])
    body.register_output(x)
    expect(g, "returns 1 values, expected 2", kind=prim.Loop)


def test_subgraph_attribute_is_linted():
    g, x, a = base()
    sub = Graph()
    sub.create(op, [])
    a.kind = culprit
    a.g_("Subgraph", sub)
    expect(g, "subgraph attribute 'Subgraph' is invalid")


def test_message_shows_the_ir_around_the_node():
    g, x, a = base()
    b = g.insert_node(g.create(culprit, [a.output()]))
    b.move_before(a)
    message = expect(g, "not in scope")
    assert ">>" in message and "test::culprit" in message.split(">>")[1]
