"""flatten_list_inputs (MLIR preparation): a `Tensor[]` input, or a list of numbers, becomes one input per example
element."""

from __future__ import annotations

import torch
from pass_case import assert_same, check_pass

from tsjit.ir.parser import parse_ir
from tsjit.mlir.prepare import _list_lengths_to_flatten, flatten_list_inputs
from tsjit.runtime.run import run_graph

LIST_INPUT = """
graph(%xs : Tensor[], %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %c : Tensor = aten::cat(%xs, %zero)
  %z : Tensor = aten::mul(%c, %y)
  return (%z)"""


def test_a_tensor_list_input_becomes_one_input_per_tensor():
    # the signature changes (a second run would expand other inputs), so the results are compared here
    graph = check_pass(flatten_list_inputs, LIST_INPUT, run=False, idempotent=False, lengths={0: 3},
                       present=["graph(%xs.0 : Tensor,", "prim::ListConstruct(%xs.0, %xs.1, %xs.2)"])
    assert [str(v.type) for v in graph.inputs] == ["Tensor"] * 4
    xs, y = [torch.randn(2) for _ in range(3)], torch.randn(6)
    assert_same(run_graph(graph, *xs, y, optimize=False), run_graph(parse_ir(LIST_INPUT), xs, y, optimize=False))


def test_without_lengths_nothing_changes():
    check_pass(flatten_list_inputs, LIST_INPUT, changed=False, lengths={})


NUMBER_LISTS = """
graph(%l : float[], %k : int[]?, %y : Tensor):
  %s : float = aten::sum(%l)
  %none : NoneType = prim::Constant()
  %absent : bool = aten::__is__(%k, %none)
  %n : int = prim::If(%absent)
    block0():
      %zero : int = prim::Constant[value=0]()
      -> (%zero)
    block1():
      %k.1 : int[] = prim::unchecked_cast(%k)
      %a : int, %b : int = prim::ListUnpack(%k.1)
      %c : int = aten::add(%a, %b)
      -> (%c)
  %z : Tensor = aten::mul(%y, %s)
  %w : Tensor = aten::mul(%z, %n)
  return (%w)"""


def test_lists_of_numbers_read_only_become_one_input_per_number():
    # an optional list given a list is that list (the cast and the unpack only read it)
    graph = check_pass(flatten_list_inputs, NUMBER_LISTS, run=False, idempotent=False, lengths={0: 3, 1: 2},
                       present=["prim::ListConstruct(%l.0, %l.1, %l.2)", "int[] = prim::ListConstruct(%k.0, %k.1)"])
    assert [str(v.type) for v in graph.inputs] == ["float"] * 3 + ["int"] * 2 + ["Tensor"]
    y = torch.randn(3)
    assert_same(run_graph(graph, 0.5, 1.5, -2.0, 3, 4, y, optimize=False),
                run_graph(parse_ir(NUMBER_LISTS), [0.5, 1.5, -2.0], [3, 4], y, optimize=False))


def test_only_lists_of_fitting_examples_that_the_program_reads_are_flattened():
    graph = parse_ir("""
graph(%l : int[], %m : int[], %f : float[]):
  %one : int = prim::Constant[value=1]()
  %u : int[] = aten::append(%m, %one)
  %s : int = aten::sum(%l)
  %t : int = aten::sum(%m)
  %r : float = aten::sum(%f)
  %o : (int, int, float) = prim::TupleConstruct(%s, %t, %r)
  return (%o)""")
    # %l given bools (a bool is no int here), %m written, %f given floats
    assert _list_lengths_to_flatten(graph, [[True, False], [1, 2], [0.5, 1.0]]) == {2: 2}
