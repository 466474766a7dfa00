"""The cleanup passes the emitter runs (DCE, constant propagation and pooling, peephole, tuple lowering,
op normalization, warn numbering, inlining), each on small IR programs.

Where PyTorch has the same pass, torch's own pass is the oracle: the same IR text goes through both and the
results must agree up to value names. The text is written in tsjit's IR syntax; nodes without outputs
(` = prim::Print(%x)`) lose their ` = ` for torch._C.parse_ir, which spells them that way.
"""

from __future__ import annotations

import re

import pytest
import torch

import tsjit
from tsjit import log
from tsjit.api import CompilationUnit
from tsjit.passes.annotate_warns import annotate_warns
from tsjit.passes.constant_pooling import constant_pooling
from tsjit.passes.constant_propagation import constant_propagation_immutable_types
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.inliner import inline_calls
from tsjit.passes.lower_tuples import lower_simple_tuples
from tsjit.passes.normalize_ops import normalize_ops
from tsjit.passes.peephole import peephole_optimize


def normalized(text: str) -> str:
    names: dict[str, str] = {}
    return re.sub(r"%[\w.]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text.strip())


def assert_same_as_torch(text: str, ours, theirs) -> None:
    graph = tsjit.parse_ir(text)
    ours(graph)
    graph.lint()
    oracle = torch._C.parse_ir(re.sub(r"^( *) = ", r"\1", text, flags=re.MULTILINE))
    theirs(oracle)
    assert normalized(str(graph)) == normalized(str(oracle))


DEAD_CODE = {
    "fresh_list_append": """graph(%x : Tensor):
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor[] = aten::append(%l, %x)
  return (%x)""",
    "returned_list_append": """graph(%x : Tensor):
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor[] = aten::append(%l, %x)
  return (%l)""",
    "input_list_append": """graph(%x : Tensor, %l : Tensor[]):
  %a : Tensor[] = aten::append(%l, %x)
  return (%x)""",
    "write_to_a_view_of_an_input": """graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %v : Tensor = aten::select(%x, %0, %0)
  %w : Tensor = aten::add_(%v, %v, %1)
  return (%0)""",
    "write_to_a_fresh_tensor": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %y : Tensor = aten::add(%x, %x, %1)
  %n : NoneType = prim::Constant()
  %w : Tensor = aten::clone(%x, %n)
  %v : Tensor = aten::mul_(%w, %2)
  return (%x)""",
    "print_and_raise": """graph(%x : Tensor, %c : bool):
   = prim::Print(%x)
  %s : str = prim::Constant[value="boom"]()
   = prim::If(%c)
    block0():
       = prim::RaiseException(%s, %s)
      -> ()
    block1():
      -> ()
  return (%x)""",
    "dead_if_output": """graph(%x : Tensor, %c : bool):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor, %b : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%x, %y)
    block1():
      %z : Tensor = aten::add(%x, %x, %1)
      -> (%z, %x)
  return (%a)""",
    "dead_loop_carried_value": """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %1 : int = prim::Constant[value=1]()
  %a : Tensor, %b : int = prim::Loop(%n, %t, %x, %n)
    block0(%i : int, %a.1 : Tensor, %b.1 : int):
      %a.2 : Tensor = aten::add(%a.1, %a.1, %1)
      %b.2 : int = aten::add(%b.1, %1)
      -> (%t, %a.2, %b.2)
  return (%a)""",
    "dead_if": """graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      -> (%x)
  return (%x)""",
}


@pytest.mark.parametrize("name", DEAD_CODE)
def test_dead_code_elimination_agrees_with_torch(name):
    assert_same_as_torch(DEAD_CODE[name], eliminate_dead_code, torch._C._jit_pass_dce_graph)


CONSTANTS = {
    "fold_numbers_and_take_the_branch": """graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %c : int = aten::mul(%a, %b)
  %p : bool = aten::gt(%c, %a)
  %r : Tensor = prim::If(%p)
    block0():
      %t : Tensor = aten::mul(%x, %c)
      -> (%t)
    block1():
      -> (%x)
  return (%r)""",
    "false_branch": """graph(%x : Tensor):
  %f : bool = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%f)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      %z : Tensor = aten::add(%x, %x, %1)
      -> (%z)
  return (%r)""",
    "loop_that_never_runs": """graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = prim::Loop(%0, %t, %x)
    block0(%i : int, %a.1 : Tensor):
      %a.2 : Tensor = aten::add(%a.1, %a.1, %1)
      -> (%t, %a.2)
  return (%a)""",
    "if_outputs_equal_in_both_branches": """graph(%x : Tensor, %c : bool):
  %r : Tensor, %k : int = prim::If(%c)
    block0():
      %2 : int = prim::Constant[value=2]()
      %y : Tensor = aten::neg(%x)
      -> (%y, %2)
    block1():
      %3 : int = prim::Constant[value=2]()
      -> (%x, %3)
  %s : Tensor = aten::mul(%r, %k)
  return (%s)""",
    "loop_carried_value_never_changed": """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %a : Tensor, %b : int = prim::Loop(%n, %t, %x, %n)
    block0(%i : int, %a.1 : Tensor, %b.1 : int):
      %a.2 : Tensor = aten::mul(%a.1, %b.1)
      -> (%t, %a.2, %b.1)
  %r : Tensor = aten::mul(%a, %b)
  return (%r)""",
    "mutable_values_stay": """graph(%x : Tensor):
  %2 : int = prim::Constant[value=2]()
  %s : str = prim::Constant[value="a"]()
  %l : int[] = prim::ListConstruct(%2, %2)
  %n : int = aten::len(%l)
  %t : Tensor = aten::mul(%x, %n)
  %u : str = aten::add(%s, %s)
  %r : (Tensor, str) = prim::TupleConstruct(%t, %u)
  return (%r)""",
    "nondeterministic_ops_stay": """graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %d : Tensor = aten::dropout(%x, %p, %t)
  return (%d)""",
}


@pytest.mark.parametrize("name", CONSTANTS)
def test_constant_propagation_agrees_with_torch(name):
    assert_same_as_torch(CONSTANTS[name], constant_propagation_immutable_types,
                         torch._C._jit_pass_constant_propagation_immutable_types)


POOLING = {
    "constants_in_branches": """graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %1 : int = prim::Constant[value=1]()
      %t : Tensor = aten::add(%x, %x, %1)
      -> (%t)
    block1():
      %2 : int = prim::Constant[value=1]()
      %u : Tensor = aten::sub(%x, %x, %2)
      -> (%u)
  return (%r)""",
    "int_and_bool_stay_apart": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %t : bool = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=1]()
  %s : str = prim::Constant[value="a"]()
  %s2 : str = prim::Constant[value="a"]()
  %r : (int, bool, int, str, str) = prim::TupleConstruct(%1, %t, %2, %s, %s2)
  return (%r)""",
}


@pytest.mark.parametrize("name", POOLING)
def test_constant_pooling_agrees_with_torch(name):
    assert_same_as_torch(POOLING[name], constant_pooling, torch._C._jit_pass_constant_pooling)


PEEPHOLE = {
    "int_identities": """graph(%a : int):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
  %b : int = aten::add(%a, %0)
  %c : int = aten::mul(%1, %b)
  %d : int = aten::floordiv(%c, %1)
  %e : int = aten::add(%d, %2)
  %f : int = aten::sub(%e, %3)
  return (%f)""",
    "none_checks": """graph(%x : Tensor, %o : int?):
  %n : NoneType = prim::Constant()
  %a : bool = aten::__is__(%x, %n)
  %b : bool = aten::__isnot__(%x, %n)
  %c : bool = aten::__is__(%o, %n)
  %r : (bool, bool, bool) = prim::TupleConstruct(%a, %b, %c)
  return (%r)""",
    "if_returning_its_condition": """graph(%c : bool, %x : int):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %r : bool = prim::If(%c)
    block0():
      -> (%t)
    block1():
      -> (%f)
  return (%r)""",
    "equal_to_itself": """graph(%a : int, %l : int[], %x : Tensor, %s : str):
  %e : bool = aten::eq(%a, %a)
  %n : bool = aten::ne(%a, %a)
  %le : bool = aten::eq(%l, %l)
  %t : Tensor = aten::eq(%x, %x)
  %se : bool = aten::eq(%s, %s)
  %r : (bool, bool, bool, Tensor, bool) = prim::TupleConstruct(%e, %n, %le, %t, %se)
  return (%r)""",
    "casts_of_what_already_has_the_type": """graph(%a : int, %o : int?):
  %i : int = aten::Int(%a)
  %u : int = prim::unchecked_cast(%a)
  %w : int = aten::_unwrap_optional(%a)
  %k : int = aten::ceil(%a)
  %r : (int, int, int, int) = prim::TupleConstruct(%i, %u, %w, %k)
  return (%r)""",
    "optional_if_output_both_branches_fill": """graph(%c : bool, %a : int):
  %r : int? = prim::If(%c)
    block0():
      -> (%a)
    block1():
      -> (%a)
  return (%r)""",
}


@pytest.mark.parametrize("name", PEEPHOLE)
def test_peephole_agrees_with_torch(name):
    assert_same_as_torch(PEEPHOLE[name], peephole_optimize,
                         lambda graph: torch._C._jit_pass_peephole(graph, True))


def test_peephole_keeps_true_division_by_one():
    """Intentional difference: torch's peephole turns int `a / 1` into `a`, so torch.jit returns 3 where
    Python returns 3.0; tsjit keeps the aten::div (a float)."""
    graph = tsjit.parse_ir("""\
graph(%a : int):
  %1 : int = prim::Constant[value=1]()
  %d : float = aten::div(%a, %1)
  return (%d)""")
    assert not peephole_optimize(graph)
    assert [str(node.kind) for node in graph.nodes()] == ["prim::Constant", "aten::div"]


def test_lower_simple_tuples_forwards_elements():
    graph = tsjit.parse_ir("""\
graph(%a : Tensor, %b : int):
  %1 : int = prim::Constant[value=1]()
  %t : (Tensor, int) = prim::TupleConstruct(%a, %b)
  %x : Tensor, %y : int = prim::TupleUnpack(%t)
  %z : int = prim::TupleIndex(%t, %1)
  %s : (int) = prim::TupleSlice[beg=1, end=2](%t)
  %r : (int, Tensor, int, (int)) = prim::TupleConstruct(%y, %x, %z, %s)
  return (%r)""")
    assert lower_simple_tuples(graph)
    graph.lint()
    assert normalized(str(graph)) == normalized("""\
graph(%a : Tensor,
      %b : int):
  %2 : (int) = prim::TupleConstruct(%b)
  %r : (int, Tensor, int, (int)) = prim::TupleConstruct(%b, %a, %b, %2)
  return (%r)""")


def test_lower_simple_tuples_leaves_tuples_it_cannot_see_built():
    graph = tsjit.parse_ir("""\
graph(%t : (Tensor, int)):
  %x : Tensor, %y : int = prim::TupleUnpack(%t)
  return (%x)""")
    assert not lower_simple_tuples(graph)


def test_normalize_ops_renames_aliases_of_tensor_ops_only():
    graph = tsjit.parse_ir("""\
graph(%x : Tensor, %f : float):
  %a : Tensor = aten::absolute(%x)
  %g : Tensor = aten::greater_equal(%a, %f)
  %d : float = aten::degrees(%f)
  %r : (Tensor, float) = prim::TupleConstruct(%g, %d)
  return (%r)""")
    assert normalize_ops(graph)
    graph.lint()
    assert [str(node.kind) for node in graph.nodes()] == [
        "aten::abs", "aten::ge", "aten::degrees", "prim::TupleConstruct"]


def test_annotate_warns_numbers_each_warning_once():
    graph = tsjit.parse_ir("""\
graph(%s : str):
  %2 : int = prim::Constant[value=2]()
   = aten::warn(%s, %2)
   = aten::warn(%s, %2)
  return (%s)""")
    assert annotate_warns(graph)
    first, second = (node.i("warn_id") for node in graph.nodes() if str(node.kind) == "aten::warn")
    assert first != second
    assert not annotate_warns(graph)


def test_inline_calls_inlines_callees_transitively():
    cu = CompilationUnit("""
def inner(x):
    return x * 2
def middle(x):
    return inner(x) + 1
def outer(x):
    return middle(x).relu()
""")
    graph = cu.outer.graph.copy()
    assert inline_calls(graph)
    assert [str(node.kind) for node in graph.nodes() if str(node.kind) != "prim::Constant"] == [
        "aten::mul", "aten::add", "aten::relu"]
    assert not inline_calls(graph)


def test_optimization_limit_stops_rewrites(monkeypatch):
    """TSJIT_OPT_LIMIT lets the first N rewrites of a pass through, to bisect a miscompilation."""
    text = """\
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::relu(%x)
  %c : Tensor = aten::sigmoid(%x)
  return (%1)"""
    monkeypatch.setenv("TSJIT_OPT_LIMIT", "dead_code_elimination=2")
    log.reset()
    try:
        graph = tsjit.parse_ir(text)
        assert eliminate_dead_code(graph)
        assert len(list(graph.nodes())) == 2
    finally:
        monkeypatch.delenv("TSJIT_OPT_LIMIT")
        log.reset()


def test_rewrites_are_logged(monkeypatch, capsys):
    monkeypatch.setenv("TSJIT_LOG_LEVEL", ">dead_code_elimination")
    log.reset()
    try:
        graph = tsjit.parse_ir("""\
graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
  return (%x)""")
        eliminate_dead_code(graph)
    finally:
        monkeypatch.delenv("TSJIT_LOG_LEVEL")
        log.reset()
    assert "[UPDATE dead_code_elimination] removing dead aten::neg node" in capsys.readouterr().err
