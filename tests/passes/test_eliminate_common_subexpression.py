"""CSE on IR text, with torch.jit's _jit_pass_cse as the oracle where it exists."""

from __future__ import annotations

import glob
import os

import pytest
import torch
from pass_case import check_pass, parse_with_constants, torch_graph_after

from tsjit import log
from tsjit.ir.graph import Graph
from tsjit.ir.symbols import aten
from tsjit.passes.common_subexpression_elimination import eliminate_common_subexpression

HAS_ORACLE = hasattr(torch._C, "parse_ir") and hasattr(torch._C, "_jit_pass_cse")

CASES = {
    "pure_duplicate": """
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
  %b : Tensor = aten::add(%x, %x, %1)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""",
    "both_returned": """
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
  %b : Tensor = aten::add(%x, %x, %1)
  return (%a, %b)""",
    "views_of_an_input": """
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %a : Tensor = aten::select(%x, %0, %0)
  %b : Tensor = aten::select(%x, %0, %0)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""",
    "different_attributes_and_inputs": """
graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %1)
  %b : Tensor = aten::add(%x, %y, %2)
  %c : Tensor = aten::add(%y, %x, %1)
  %d : Tensor = aten::mul(%a, %b)
  %e : Tensor = aten::mul(%d, %c)
  %l : int[] = prim::ListConstruct(%1, %2)
  %m : int[] = prim::ListConstruct(%1, %2)
  %n : int = aten::len(%l)
  %o : int = aten::len(%m)
  %p : int = aten::add(%n, %o)
  return (%e, %p, %t)""",
    "print_does_not_write": """
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
   = prim::Print(%x)
  %b : Tensor = aten::add(%x, %x, %1)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""",
    "write_to_another_type": """
graph(%x : Tensor, %l : int[]):
  %0 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %0)
  %z : int[] = aten::append(%l, %0)
  %b : Tensor = aten::add(%x, %x, %0)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""",
    "write_to_an_input_that_may_alias": """
graph(%x : Tensor, %y : Tensor):
  %0 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %0)
  %z : Tensor = aten::add_(%y, %0, %0)
  %b : Tensor = aten::add(%x, %x, %0)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""",
    "written_fresh_value": """
graph(%x : Tensor):
  %0 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %a : Tensor = aten::add(%f, %f, %0)
  %z : Tensor = aten::add_(%f, %0, %0)
  %b : Tensor = aten::add(%f, %f, %0)
  %g : Tensor = aten::relu(%x)
  %h : Tensor = aten::relu(%x)
  %c : Tensor = aten::mul(%a, %b)
  %d : Tensor = aten::mul(%g, %h)
  return (%c, %d)""",
    "stored_in_a_list_then_written": """
graph(%x : Tensor, %y : Tensor):
  %0 : int = prim::Constant[value=1]()
  %f : Tensor = aten::add(%y, %y, %0)
  %a : Tensor = aten::add(%x, %x, %0)
  %l : Tensor[] = prim::ListConstruct(%f)
  %w : Tensor = aten::add_(%f, %0, %0)
  %b : Tensor = aten::add(%x, %x, %0)
  %c : Tensor = aten::mul(%a, %b)
  return (%c, %l)""",
    "both_in_a_returned_list": """
graph(%y : Tensor):
  %0 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%y, %y, %0)
  %b : Tensor = aten::add(%y, %y, %0)
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  return (%l)""",
    "blocks_see_their_parents_not_their_siblings": """
graph(%x : Tensor, %cond : bool):
  %0 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %0)
  %r : Tensor = prim::If(%cond)
    block0():
      %b : Tensor = aten::add(%x, %x, %0)
      %d : Tensor = aten::mul(%x, %x)
      %d2 : Tensor = aten::mul(%b, %d)
      -> (%d2)
    block1():
      %e : Tensor = aten::mul(%x, %x)
      -> (%e)
  %g : Tensor = aten::mul(%x, %x)
  %h : Tensor = aten::mul(%g, %r)
  return (%h, %a)""",
    "nested_view_of_an_input_is_kept": """
graph(%x : Tensor, %cond : bool):
  %0 : int = prim::Constant[value=0]()
  %a : Tensor = aten::select(%x, %0, %0)
  %r : Tensor = prim::If(%cond)
    block0():
      %b : Tensor = aten::select(%x, %0, %0)
      %c : Tensor = aten::mul(%b, %b)
      -> (%c)
    block1():
      -> (%x)
  %h : Tensor = aten::mul(%a, %r)
  return (%h)""",
    "nested_duplicate_of_a_fresh_value": """
graph(%y : Tensor, %cond : bool):
  %0 : int = prim::Constant[value=1]()
  %x : Tensor = aten::mul(%y, %y)
  %a : Tensor = aten::add(%x, %x, %0)
  %r : Tensor = prim::If(%cond)
    block0():
      %b : Tensor = aten::add(%x, %x, %0)
      -> (%b)
    block1():
      -> (%x)
  return (%r)""",
    "loop_body": """
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %x)
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %b : Tensor = aten::mul(%x, %x)
      %c : Tensor = aten::add(%acc, %b, %1)
      %d : Tensor = aten::add(%acc, %b, %1)
      %e : Tensor = aten::mul(%c, %d)
      -> (%true, %e)
  %s : Tensor = aten::mul(%r, %a)
  return (%s)""",
    "random_and_dropout": """
graph(%x : Tensor):
  %n : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[2, 3]]()
  %a : Tensor = aten::rand(%s, %n, %n, %n, %n)
  %b : Tensor = aten::rand(%s, %n, %n, %n, %n)
  %p : float = prim::Constant[value=0.5]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %c : Tensor = aten::dropout(%x, %p, %f)
  %d : Tensor = aten::dropout(%x, %p, %f)
  %e : Tensor = aten::dropout(%x, %p, %t)
  %g : Tensor = aten::dropout(%x, %p, %t)
  %h : Tensor = aten::mul(%c, %d)
  %k : Tensor = aten::mul(%e, %g)
  %m : Tensor = aten::mul(%a, %b)
  return (%h, %k, %m)""",
    "duplicate_constants": """
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=1]()
  %3 : bool = prim::Constant[value=1]()
  %4 : str = prim::Constant[value="a"]()
  %5 : str = prim::Constant[value="a"]()
  %6 : float = prim::Constant[value=1.5]()
  %7 : float = prim::Constant[value=1.5]()
  %a : Tensor = aten::add(%x, %x, %1)
  %b : Tensor = aten::add(%x, %x, %2)
  %c : Tensor = aten::mul(%a, %b)
  return (%c, %3, %4, %5, %6, %7)""",
}


@pytest.mark.skipif(not HAS_ORACLE, reason="torch._C.parse_ir / _jit_pass_cse not available")
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_result_as_torch_jit(name):
    check_pass(eliminate_common_subexpression, CASES[name], changed=None, oracle="_jit_pass_cse")


CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "ir", "corpus", "graphs", "*.ir")))


@pytest.mark.skipif(not HAS_ORACLE, reason="torch._C.parse_ir / _jit_pass_cse not available")
@pytest.mark.parametrize("path", CORPUS, ids=os.path.basename)
def test_corpus_graphs_same_as_torch_jit(path):
    """Every graph of the IR corpus that torch.jit can read back and run CSE on (10 of them change); not run (their
    inputs are modules and other values random inputs cannot make)."""
    with open(path) as file:
        text = file.read()
    try:
        torch_graph_after(text, "_jit_pass_cse")
    except RuntimeError as error:
        pytest.skip(f"torch.jit cannot read this graph or run CSE on it: {str(error).splitlines()[0]}")
    check_pass(eliminate_common_subexpression, text, changed=None, oracle="_jit_pass_cse", run=False)


def count(graph: Graph, kind) -> int:
    return sum(1 for n in graph.all_nodes() if n.kind == kind)


def test_reports_changes():
    graph = check_pass(eliminate_common_subexpression, CASES["pure_duplicate"])
    assert count(graph, aten.add) == 1
    mul = next(n for n in graph.nodes() if n.kind is aten.mul)
    assert mul.inputs[0] is mul.inputs[1]
    check_pass(eliminate_common_subexpression, CASES["both_returned"], changed=False)


def test_nested_and_sibling_blocks():
    graph = check_pass(eliminate_common_subexpression, CASES["blocks_see_their_parents_not_their_siblings"])
    if_node = next(n for n in graph.nodes() if n.kind.name == "If")
    then, other = if_node.blocks
    assert [str(n.kind) for n in then.nodes()] == ["aten::mul", "aten::mul"]  # the add is the outer one
    assert [str(n.kind) for n in other.nodes()] == ["aten::mul"]
    assert count(graph, aten.mul) == 5  # the mul after the If sees neither block's


def test_zero_and_negative_zero_stay_apart():
    """torch.jit merges these (it compares floats with ==); adding -0.0 and 0.0 differ for -0.0 inputs."""
    graph = check_pass(eliminate_common_subexpression, """
    graph(%x : Tensor):
      %0 : float = prim::Constant[value=0.]()
      %1 : float = prim::Constant[value=-0.]()
      %2 : int = prim::Constant[value=1]()
      %a : Tensor = aten::add(%x, %0, %2)
      %b : Tensor = aten::add(%x, %1, %2)
      %c : Tensor = aten::mul(%a, %b)
      return (%c)
    """, changed=False, inputs=[(torch.tensor([-0.0, 0.0, 1.5]),)])
    assert count(graph, aten.add) == 2


def test_int_and_bool_constants_stay_apart():
    graph = check_pass(eliminate_common_subexpression, CASES["duplicate_constants"])
    constants = [n for n in graph.nodes() if n.kind.name == "Constant"]
    assert len(constants) == 4  # 1, True, "a", 1.5


def test_tensor_constants_compare_by_contents():
    """Equal contents and dtype merge (the later into the earlier); another dtype or other values do not."""
    constants = {"first": torch.tensor([1.0, 2.0]), "same": torch.tensor([1.0, 2.0]),
                 "other_dtype": torch.tensor([1, 2]), "other_values": torch.tensor([1.0, 3.0])}
    text = """
graph(%x : Tensor, %first : Tensor, %same : Tensor, %other_dtype : Tensor, %other_values : Tensor):
  %1 : int = prim::Constant[value=1]()
  %t0 : Tensor = aten::add(%x, %first, %1)
  %t1 : Tensor = aten::add(%t0, %same, %1)
  %t2 : Tensor = aten::add(%t1, %other_dtype, %1)
  %t3 : Tensor = aten::add(%t2, %other_values, %1)
  return (%t3)"""
    graph = check_pass(eliminate_common_subexpression, text, constants=constants, inputs=[(torch.randn(2),)])
    tensors = [n for n in graph.nodes() if n.kind.name == "Constant" and n.kind_of("value") == "t"]
    adds = [n for n in graph.nodes() if n.kind is aten.add]
    assert len(tensors) == 3 and adds[0].inputs[1] is adds[1].inputs[1]
    before = [n for n in parse_with_constants(text, constants).nodes() if n.kind.name == "Constant"]
    equal = [n.output().debug_name for n in before if n.kind_of("value") == "t"
             and n.t("value").is_floating_point() and torch.equal(n.t("value"), constants["first"])]
    assert adds[0].inputs[1].debug_name == equal[0]  # of the two equal constants, the one defined first stays


def test_nondeterministic_ops_are_kept():
    graph = check_pass(eliminate_common_subexpression, CASES["random_and_dropout"])
    assert count(graph, aten.rand) == 2
    assert count(graph, aten.dropout) == 3  # the two with train=False are one


def test_opt_limit(monkeypatch):
    monkeypatch.setenv("TSJIT_OPT_LIMIT", "common_subexpression_elimination=1")
    log.reset()
    try:
        graph = check_pass(eliminate_common_subexpression, """
        graph(%x : Tensor):
          %a : Tensor = aten::neg(%x)
          %b : Tensor = aten::neg(%x)
          %c : Tensor = aten::relu(%x)
          %d : Tensor = aten::relu(%x)
          %e : Tensor = aten::mul(%a, %b)
          %f : Tensor = aten::mul(%c, %d)
          return (%e, %f)
        """)  # the limit spent, the second run changes nothing either
    finally:
        monkeypatch.delenv("TSJIT_OPT_LIMIT")
        log.reset()
    assert count(graph, aten.neg) == 1 and count(graph, aten.relu) == 2


def test_logs_each_replacement(monkeypatch, capsys):
    monkeypatch.setenv("TSJIT_LOG_LEVEL", ">common_subexpression_elimination")
    log.reset()
    try:
        check_pass(eliminate_common_subexpression, CASES["pure_duplicate"])
    finally:
        monkeypatch.delenv("TSJIT_LOG_LEVEL")
        log.reset()
    err = capsys.readouterr().err
    assert "[UPDATE common_subexpression_elimination] replacing aten::add defining %b" in err


def test_in_the_pass_test_shape():
    check_pass(eliminate_common_subexpression, """
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1)
  %b : Tensor = aten::add(%x, %x, %1)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)""", present=["aten::add", "aten::mul(%a, %a)"], oracle="_jit_pass_cse")
