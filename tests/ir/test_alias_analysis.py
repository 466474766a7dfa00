"""AliasDb on small graphs: aliasing from schemas, writers, wildcards, containers, control flow, node moves."""

from __future__ import annotations

import pytest

from tsjit.ir.alias_analysis import AliasDb, graph_may_write, has_side_effects, is_mutable_type, may_write
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import aten, prim
from tsjit.ir.types import FutureType, IntType, ListType, OptionalType, TensorType, TupleType
from tsjit.ops.registry import register_operator


def analyze(text: str) -> tuple[Graph, AliasDb, dict[str, Value]]:
    graph = parse_ir(text)
    values = {v.debug_name: v for v in graph.inputs}
    for node in graph.all_nodes():
        values.update({v.debug_name: v for v in node.outputs})
        for block in node.blocks:
            values.update({v.debug_name: v for v in block.inputs})
    return graph, AliasDb(graph), values


def producer(values: dict[str, Value], name: str) -> Node:
    return values[name].node


def order(graph: Graph) -> list[str]:
    return [n.outputs[0].debug_name if n.outputs else str(n.kind) for n in graph.nodes()
            if n.kind is not prim.Constant]


VIEWS = """
graph(%x : Tensor, %y : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %size : int[] = prim::Constant[value=[-1]]()
  %a : Tensor = aten::add(%x, %y, %1)
  %b : Tensor = aten::mul(%x, %y)
  %v : Tensor = aten::select(%a, %0, %0)
  %vv : Tensor = aten::view(%v, %size)
  %w : Tensor = aten::add_(%vv, %1, %1)
  return (%w, %b)
"""


def test_fresh_results_alias_nothing_and_views_alias_their_input():
    _, db, v = analyze(VIEWS)
    assert not db.may_alias(v["a"], v["b"])
    assert not db.may_alias(v["a"], v["x"])
    assert db.may_alias(v["v"], v["a"]) and db.may_alias(v["vv"], v["a"]) and db.may_alias(v["vv"], v["v"])
    assert db.may_alias(v["w"], v["a"])  # add_ returns its self
    assert not db.may_alias(v["vv"], v["b"])
    assert db.may_alias([v["b"], v["w"]], [v["a"]])  # some value of each side


def test_graph_inputs_may_alias_each_other_by_type():
    _, db, v = analyze("""
    graph(%x : Tensor, %y : Float(2, 3), %l : int[], %m : int[], %n : int, %o : Tensor?, %t : (Tensor, int)):
      return (%x)
    """)
    assert db.may_alias(v["x"], v["y"])  # refinements share the Tensor wildcard
    assert db.may_alias(v["l"], v["m"])
    assert not db.may_alias(v["x"], v["l"])
    assert not db.may_alias(v["x"], v["n"]) and not db.may_alias(v["n"], v["n"])  # ints have no memory
    assert db.may_alias(v["o"], v["x"])
    assert db.may_alias(v["t"], v["x"])  # a tuple is as mutable as what it holds


def test_in_place_writes():
    graph, db, v = analyze(VIEWS)
    add_ = producer(v, "w")
    assert db.has_writers(v["a"]) and db.has_writers(v["v"]) and db.has_writers(v["w"])
    assert not db.has_writers(v["b"]) and not db.has_writers(v["x"])
    assert db.writes_to_alias(add_, [v["a"]]) and not db.writes_to_alias(add_, [v["b"], v["x"]])
    assert db.is_mutable(add_) and not db.is_mutable(producer(v, "a"))
    assert db.has_writers(add_) and not db.has_writers(producer(v, "b"))  # a node: its inputs and outputs
    assert not db.writes_to_wildcard(add_)


def test_writing_a_graph_input_writes_every_input_of_its_type():
    _, db, v = analyze("""
    graph(%x : Tensor, %y : Tensor, %l : int[]):
      %1 : int = prim::Constant[value=1]()
      %w : Tensor = aten::mul_(%x, %1)
      %f : Tensor = aten::add(%y, %y, %1)
      return (%w, %f)
    """)
    assert db.has_writers(v["y"])  # y may be x
    assert not db.has_writers(v["l"]) and not db.has_writers(v["f"])
    assert db.writes_to_wildcard(producer(v, "w"))


def test_list_of_tensors():
    _, db, v = analyze("""
    graph(%x : Tensor):
      %0 : int = prim::Constant[value=0]()
      %1 : int = prim::Constant[value=1]()
      %a : Tensor = aten::add(%x, %x, %1)
      %b : Tensor = aten::mul(%x, %x)
      %c : Tensor = aten::sub(%x, %x, %1)
      %l : Tensor[] = prim::ListConstruct(%a)
      %l2 : Tensor[] = aten::append(%l, %b)
      %e : Tensor = aten::__getitem__(%l, %0)
      return (%l2, %e, %c)
    """)
    assert db.may_contain_alias(v["l"], v["a"]) and db.may_contain_alias(v["l"], v["b"])
    assert not db.may_alias(v["l"], v["a"])  # the list is not its elements
    assert db.may_alias(v["e"], v["a"]) and db.may_alias(v["e"], v["b"])  # what comes out may be what went in
    assert db.may_alias(v["e"], v["x"])  # a list may also hold what the caller had
    assert not db.may_alias(v["a"], v["x"])  # a value stored away is still not an input
    assert db.may_alias_wildcard(v["a"]) and not db.may_alias_wildcard(v["c"])
    assert not db.may_alias(v["c"], v["e"]) and not db.may_contain_alias(v["l"], v["c"])
    assert db.may_alias(v["l2"], v["l"])
    assert db.has_writers(v["l"]) and not db.has_writers(v["a"])  # append writes the list, not its elements


def test_fresh_lists_may_hold_any_tensor_and_list_inputs_hold_tensor_inputs():
    _, db, v = analyze("""
    graph(%x : Tensor, %ts : Tensor[]):
      %c : Tensor[] = aten::list(%ts)
      %f : Tensor = aten::neg(%x)
      return (%c, %f)
    """)
    assert db.may_contain_alias(v["ts"], v["x"]) and not db.may_alias(v["ts"], v["x"])
    assert db.may_contain_alias(v["c"], v["x"])
    assert not db.may_alias(v["c"], v["ts"])
    assert not db.may_contain_alias(v["c"], v["f"])


def test_chunk_results_hold_views_of_self():
    _, db, v = analyze("""
    graph(%x : Tensor):
      %2 : int = prim::Constant[value=2]()
      %0 : int = prim::Constant[value=0]()
      %a : Tensor = aten::neg(%x)
      %parts : Tensor[] = aten::chunk(%a, %2, %0)
      return (%parts)
    """)
    assert db.may_contain_alias(v["parts"], v["a"])


def test_tuples_and_dicts():
    _, db, v = analyze("""
    graph(%x : Tensor, %k : str):
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::relu(%x)
      %t : (Tensor, int) = prim::TupleConstruct(%a, %k)
      %u : Tensor, %n : str = prim::TupleUnpack(%t)
      %d : Dict(str, Tensor) = prim::DictConstruct(%k, %b)
      %e : Tensor = aten::__getitem__(%d, %k)
      return (%u, %e)
    """)
    assert db.may_alias(v["u"], v["a"]) and db.may_contain_alias(v["t"], v["a"])
    assert db.may_alias(v["e"], v["b"]) and db.may_contain_alias(v["d"], v["b"])


def test_if_outputs_may_be_either_branch():
    _, db, v = analyze("""
    graph(%x : Tensor, %c : bool):
      %0 : int = prim::Constant[value=0]()
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::relu(%x)
      %r : Tensor = prim::If(%c)
        block0():
          %s : Tensor = aten::select(%a, %0, %0)
          -> (%s)
        block1():
          %f : Tensor = aten::tanh(%x)
          -> (%f)
      return (%r, %b)
    """)
    assert db.may_alias(v["r"], v["a"]) and db.may_alias(v["r"], v["f"]) and db.may_alias(v["r"], v["s"])
    assert not db.may_alias(v["r"], v["b"]) and not db.may_alias(v["r"], v["x"])


def test_writes_inside_blocks_belong_to_the_control_flow_node():
    graph, db, v = analyze("""
    graph(%x : Tensor, %c : bool):
      %1 : int = prim::Constant[value=1]()
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::relu(%x)
       = prim::If(%c)
        block0():
          %w : Tensor = aten::add_(%a, %1, %1)
          -> ()
        block1():
          -> ()
      return (%a, %b)
    """)
    if_node = next(n for n in graph.nodes() if n.kind is prim.If)
    assert db.writes_to_alias(if_node, v["a"]) and not db.writes_to_alias(if_node, v["b"])
    assert db.is_mutable(if_node)


def test_loop_carried_values_alias_initial_values_and_the_body():
    _, db, v = analyze("""
    graph(%x : Tensor, %n : int):
      %true : bool = prim::Constant[value=1]()
      %0 : int = prim::Constant[value=0]()
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::relu(%x)
      %r : Tensor = prim::Loop(%n, %true, %a)
        block0(%i : int, %acc : Tensor):
          %s : Tensor = aten::select(%acc, %0, %0)
          -> (%true, %s)
      return (%r, %b)
    """)
    assert db.may_alias(v["acc"], v["a"]) and db.may_alias(v["s"], v["a"])
    assert db.may_alias(v["r"], v["a"])  # zero iterations return the initial value
    assert not db.may_alias(v["r"], v["b"])


def test_loop_result_may_be_the_initial_value_even_when_the_body_makes_new_memory():
    _, db, v = analyze("""
    graph(%x : Tensor, %n : int):
      %true : bool = prim::Constant[value=1]()
      %a : Tensor = aten::neg(%x)
      %r : Tensor = prim::Loop(%n, %true, %a)
        block0(%i : int, %acc : Tensor):
          %f : Tensor = aten::neg(%acc)
          -> (%true, %f)
      return (%r)
    """)
    assert db.may_alias(v["r"], v["a"]) and db.may_alias(v["r"], v["f"])


def test_any_may_alias_every_wildcard():
    _, db, v = analyze("""
    graph(%x : Tensor, %l : int[], %o : Any):
      return (%x)
    """)
    assert db.may_alias(v["o"], v["x"]) and db.may_alias(v["o"], v["l"])
    assert not db.may_alias(v["x"], v["l"])


def test_side_effects():
    graph, db, v = analyze("""
    graph(%x : Tensor, %s : str):
      %1 : int = prim::Constant[value=1]()
       = prim::Print(%x)
      %a : Tensor = aten::add(%x, %x, %1)
       = aten::warn(%s, %1)
       = prim::RaiseException(%s)
      %u : Tensor = tsjit_unknown::op(%a)
      return (%a)
    """)
    kinds = {str(n.kind): has_side_effects(n) for n in graph.nodes()}
    assert kinds == {"prim::Constant": False, "prim::Print": True, "aten::add": False, "aten::warn": True,
                     "prim::RaiseException": True, "tsjit_unknown::op": True}
    unknown = producer(v, "u")
    assert db.writes_to_alias(unknown, v["a"]) and db.may_alias(v["u"], v["x"])  # conservative
    assert not db.has_writers(v["s"])


@register_operator("tsjit_test_alias::noisy(Tensor a) -> Tensor", conservative=True)
def _noisy(a):
    return a


def test_conservative_operators_write_their_inputs_and_have_side_effects():
    _, db, v = analyze("""
    graph(%x : Tensor):
      %a : Tensor = aten::neg(%x)
      %b : Tensor = tsjit_test_alias::noisy(%a)
      return (%b)
    """)
    noisy = producer(v, "b")
    assert has_side_effects(noisy) and db.writes_to_alias(noisy, v["a"])
    assert not has_side_effects(producer(v, "a"))


def test_set_attr_writes_the_object_and_the_value_escapes():
    graph = Graph()
    obj = graph.add_input("self", ListType(TensorType.get()))  # any mutable object will do
    x = graph.add_input("x")
    fresh = graph.insert(aten.neg, (x,))
    set_attr = graph.insert_node(graph.create(prim.SetAttr, [obj, fresh], 0))
    set_attr.s_("name", "weight")
    graph.register_output(x)
    db = AliasDb(graph)
    assert db.writes_to_alias(set_attr, obj) and not db.writes_to_alias(set_attr, x)
    assert db.escapes_scope([fresh]) and has_side_effects(set_attr)


def forked(writes: bool) -> Graph:
    return parse_ir(f"""
    graph(%a : Tensor):
      %1 : int = prim::Constant[value=1]()
      %r : Tensor = aten::{"add_" if writes else "add"}(%a, %1, %1)
      return (%r)
    """)


@pytest.mark.parametrize("writes", [True, False])
def test_fork_and_wait(writes):
    graph = Graph()
    x = graph.add_input("x")
    y = graph.add_input("y")
    fresh = graph.insert(aten.neg, (x,))
    fork = graph.insert_node(graph.create(prim.fork, [fresh]))
    fork.output().set_type(FutureType(TensorType.get()))
    fork.g_("Subgraph", forked(writes))
    wait = graph.insert_node(graph.create(aten.wait, [fork.output()]))
    graph.register_output(wait.output())
    graph.register_output(y)
    db = AliasDb(graph)
    assert not db.is_mutable(fork) and not has_side_effects(fork)  # the effects belong to the wait
    assert db.writes_to_alias(wait, fresh) is writes and not db.writes_to_alias(wait, x)
    assert db.may_alias(wait.output(), fresh) and db.may_alias(wait.output(), y)
    assert not db.may_alias(fresh, x)


def test_wait_on_an_unknown_future_writes_every_wildcard():
    _, db, v = analyze("""
    graph(%f : Future[Tensor], %x : Tensor):
      %r : Tensor = aten::wait(%f)
      return (%r)
    """)
    assert db.writes_to_alias(v["r"].node, v["x"])


def test_escapes_scope_and_changing_aliasing():
    _, db, v = analyze("""
    graph(%x : Tensor):
      %0 : int = prim::Constant[value=0]()
      %a : Tensor = aten::neg(%x)
      %b : Tensor = aten::neg(%x)
      %c : Tensor = aten::neg(%x)
      %s : Tensor = aten::select(%x, %0, %0)
      return (%a, %b)
    """)
    assert db.escapes_scope([v["a"]]) and db.escapes_scope([v["s"]]) and not db.escapes_scope([v["c"]])
    assert not db.safe_to_change_aliasing_relationship([v["a"]], [v["b"]])
    assert db.safe_to_change_aliasing_relationship([v["a"]], [v["c"]])


def test_mutable_types():
    assert is_mutable_type(TensorType.get()) and is_mutable_type(ListType(IntType.get()))
    assert is_mutable_type(OptionalType(TensorType.get()))
    assert not is_mutable_type(IntType.get()) and not is_mutable_type(TupleType([IntType.get()]))
    assert not is_mutable_type(FutureType(IntType.get()))


# ---- moving nodes --------------------------------------------------------------------------------------------
MOVES = """
graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::relu(%a)
  %c : Tensor = aten::tanh(%y)
  %d : Tensor = aten::sigmoid(%y)
  return (%b, %c, %d)
"""


def test_move_independent_nodes_both_ways():
    graph, db, v = analyze(MOVES)
    assert db.move_after_topologically_valid(producer(v, "c"), producer(v, "d"))
    assert order(graph) == ["a", "b", "d", "c"]
    assert db.move_before_topologically_valid(producer(v, "c"), producer(v, "a"))
    assert order(graph) == ["c", "a", "b", "d"]
    graph.lint()


def test_a_node_cannot_move_past_its_user_that_is_the_move_point():
    graph, db, v = analyze(MOVES)
    assert not db.move_after_topologically_valid(producer(v, "a"), producer(v, "b"))
    assert not db.move_before_topologically_valid(producer(v, "b"), producer(v, "a"))
    assert order(graph) == ["a", "b", "c", "d"]


def test_dependent_nodes_move_along():
    graph, db, v = analyze(MOVES)
    assert db.move_after_topologically_valid(producer(v, "a"), producer(v, "d"))
    assert order(graph) == ["c", "d", "a", "b"]
    assert db.move_before_topologically_valid(producer(v, "b"), producer(v, "c"))  # brings a back first
    assert order(graph) == ["a", "b", "c", "d"]
    graph.lint()


def test_could_move_does_not_move():
    graph, db, v = analyze(MOVES)
    assert db.could_move_after_topologically(producer(v, "c"), producer(v, "d"))
    assert db.could_move_before_topologically(producer(v, "d"), producer(v, "a"))
    assert not db.could_move_after_topologically(producer(v, "a"), producer(v, "b"))
    assert order(graph) == ["a", "b", "c", "d"]


WRITES = """
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %f : Tensor = aten::relu(%x)
  %r : Tensor = aten::mul(%a, %a)
  %w : Tensor = aten::add_(%a, %1, %1)
  %g : Tensor = aten::tanh(%f)
  return (%r, %w, %g)
"""


def test_reads_do_not_cross_writes_of_the_same_memory():
    graph, db, v = analyze(WRITES)
    assert not db.could_move_after_topologically(producer(v, "r"), producer(v, "w"))  # read after write
    assert not db.could_move_before_topologically(producer(v, "w"), producer(v, "r"))
    assert db.move_before_topologically_valid(producer(v, "g"), producer(v, "r"))  # f is another tensor
    assert db.move_after_topologically_valid(producer(v, "f"), producer(v, "w"))  # g moves along with f
    assert order(graph) == ["a", "r", "w", "f", "g"]
    graph.lint()


def test_nodes_with_side_effects_keep_their_order():
    graph, db, v = analyze("""
    graph(%x : Tensor, %s : str):
      %1 : int = prim::Constant[value=1]()
       = prim::Print(%s)
       = aten::warn(%s, %1)
      %a : Tensor = aten::neg(%x)
      return (%a)
    """)
    printed, warned = [n for n in graph.nodes() if n.kind in (prim.Print, aten.warn)]
    assert not db.could_move_after_topologically(printed, warned)
    assert db.could_move_before_topologically(producer(v, "a"), printed)


def test_moves_between_blocks_are_refused():
    graph, db, v = analyze("""
    graph(%x : Tensor, %c : bool):
      %a : Tensor = aten::neg(%x)
      %r : Tensor = prim::If(%c)
        block0():
          %s : Tensor = aten::relu(%x)
          -> (%s)
        block1():
          -> (%x)
      return (%r, %a)
    """)
    assert not db.move_after_topologically_valid(producer(v, "a"), producer(v, "s"))


@pytest.mark.parametrize("moved, point, after, expected", [
    ("a", "a", True, True),
    ("d", "c", True, True),  # already there
])
def test_trivial_moves(moved, point, after, expected):
    graph, db, v = analyze(MOVES)
    move = db.move_after_topologically_valid if after else db.move_before_topologically_valid
    assert move(producer(v, moved), producer(v, point)) is expected
    assert order(graph) == ["a", "b", "c", "d"]


def test_blocks_of_other_nodes_are_analyzed():
    graph = Graph()
    x = graph.add_input("x")
    closure = graph.insert_node(graph.create(prim.Closure, [], 1))
    body = closure.add_block()
    argument = body.add_input("a")
    with graph.insert_point_guard(body):
        written = graph.insert(aten.add_, (argument, 1))
    body.register_output(written)
    graph.register_output(x)
    db = AliasDb(graph)
    assert db.may_alias(argument, x) and db.writes_to_alias(closure, x)


def test_may_write_without_building_an_alias_db():
    graph = parse_ir("""graph(%x : Tensor, %c : bool):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
  %l : Tensor[] = prim::ListConstruct(%a)
  %r : Tensor = prim::If(%c)
    block0():
      %w : Tensor = aten::add_(%x, %1, %1)
      -> (%a)
    block1():
      -> (%a)
  %n : Tensor[] = aten::append(%l, %x)
  return (%r)""")
    writes = {str(n.kind): may_write(n) for n in graph.all_nodes()}
    assert writes == {"prim::Constant": False, "aten::add": False, "prim::ListConstruct": False, "prim::If": False,
                      "aten::add_": True, "aten::append": True}
    db = AliasDb(graph)
    for node in graph.all_nodes():
        if not node.blocks:  # may_write over-approximates AliasDb's own record of writes
            assert may_write(node) or not db.is_mutable(node)
    assert graph_may_write(graph)
    assert not graph_may_write(parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)"))
