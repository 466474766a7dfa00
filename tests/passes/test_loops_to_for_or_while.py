"""loops_to_for_or_while (tsjit/mlir/loops.py): loops reshaped into the two forms torch-mlir lowers right."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.loops import loops_to_for_or_while

BREAK = """
graph(%x : Tensor, %n : int, %limit : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %i, %one)
      %go : bool = aten::lt(%i, %limit)
      -> (%go, %next)
  return (%r)
"""

EARLY_RETURN = """
graph(%x : Tensor, %stop : int):
  %true : bool = prim::Constant[value=1]()
  %max : int = prim::Constant[value=9223372036854775807]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor, %k : int = prim::Loop(%max, %true, %x, %zero)
    block0(%i : int, %acc : Tensor, %j : int):
      %next : Tensor = aten::mul(%acc, %x)
      %j.1 : int = aten::add(%j, %one)
      %go : bool = aten::lt(%j.1, %stop)
      -> (%go, %next, %j.1)
  return (%r)
"""


def test_counted_loop_with_a_condition_is_guarded():
    args = [(torch.randn(2), n, limit) for n in (0, 3, 6) for limit in (-1, 0, 2, 10)]
    graph = check_pass(loops_to_for_or_while, BREAK, inputs=args, present=["prim::Loop(%n, %", "prim::If(%active"])
    (loop,) = [n for n in graph.all_nodes() if n.kind.name == "Loop"]
    assert loop.input(1).node.kind.name == "Constant"


def test_while_loop_starting_true_runs_its_first_iteration_before_the_loop():
    graph = check_pass(loops_to_for_or_while, EARLY_RETURN, inputs=[(torch.randn(2), stop) for stop in (-1, 1, 2, 5)],
                       present=["aten::mul", "aten::lt", "prim::Loop"])
    (loop,) = [n for n in graph.all_nodes() if n.kind.name == "Loop"]
    assert loop.input(1).node.kind.name != "Constant"


def test_a_plain_for_loop_stays():
    check_pass(loops_to_for_or_while, """
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::neg(%acc)
      -> (%true, %next)
  return (%r)""", changed=False)
