"""eliminate_static_control_flow: constants folded, constant tuples forwarded, constant Ifs inlined, loops that
surely run peeled."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.static_control_flow import eliminate_static_control_flow

NESTED = """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%three, %true, %x)
    block0(%i : int, %acc : Tensor):
      %inner : Tensor = prim::Loop(%i, %true, %acc)
        block0(%j : int, %acc.2 : Tensor):
          %next : Tensor = aten::add(%acc.2, %j, %one)
          -> (%true, %next)
      %big : bool = aten::gt(%i, %one)
      %out : Tensor = prim::If(%big)
        block0():
          %neg : Tensor = aten::neg(%inner)
          -> (%neg)
        block1():
          -> (%inner)
      -> (%true, %out)
  return (%r)
"""


def test_static_loops_and_ifs_are_unrolled():
    check_pass(eliminate_static_control_flow, NESTED, inputs=[(torch.randn(3),)],
               present=["aten::add", "aten::add", "aten::neg"], absent=["prim::Loop", "prim::If"])


def test_without_loop_unrolling_only_constant_ifs_go():
    check_pass(eliminate_static_control_flow, NESTED, unroll_loops=False, changed=False, present=["prim::Loop"])


def test_list_literals_fold_only_when_nothing_writes_them():
    graph = check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %read : int[] = prim::ListConstruct(%one, %two)
  %written : int[] = prim::ListConstruct(%one)
  %n : int = aten::len(%read)
  %w : int[] = aten::append(%written, %two)
  %m : int = aten::len(%written)
  %r : (int, int) = prim::TupleConstruct(%n, %m)
  return (%r)""", present=["aten::append", "aten::len(%written)"])
    assert str(graph).count("aten::len") == 1


def test_identity_tests_of_a_value_with_itself_and_tuple_elements_fold():
    x = torch.randn(1)
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor, %y : Tensor):
  %same : bool = aten::__isnot__(%x, %x)
  %other : bool = aten::__is__(%x, %y)
  %zero : int = prim::Constant[value=0]()
  %t : (bool, int) = prim::TupleConstruct(%same, %zero)
  %a : bool, %b : int = prim::TupleUnpack(%t)
  %c : int = aten::add(%b, %zero)
  %r : (bool, bool, int) = prim::TupleConstruct(%a, %other, %c)
  return (%r)""", inputs=[(x, x), (x, torch.randn(1))], present=["aten::__is__"],
               absent=["aten::__isnot__", "aten::add", "prim::TupleUnpack"])
