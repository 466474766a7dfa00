"""loop_invariant_code_motion: a weight's transpose leaves the loop that reads it (also from a loop nested in
another, and chains of such nodes); nodes reading the loop's values, nodes that could fail when the loop runs zero
times, and nodes reading memory something writes stay. Every case runs before and after for several trip counts."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.passes.loop_invariant_code_motion import loop_invariant_code_motion

RECURRENCE = """
graph(%h0 : Float(2, 3), %w : Float(3, 3), %n : int):
  %true : bool = prim::Constant[value=1]()
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %h1 : Tensor):
      %wt : Float(3, 3) = aten::t(%w)
      %h2 : Tensor = aten::mm(%h1, %wt)
      -> (%true, %h2)
  return (%h)
"""


def inputs(*trip_counts: int) -> list[tuple]:
    return [(torch.randn(2, 3), torch.randn(3, 3), n) for n in trip_counts]


def test_a_weights_transpose_moves_before_the_loop() -> None:
    check_pass(loop_invariant_code_motion, RECURRENCE, inputs=inputs(0, 1, 4),
               present=["aten::t(%w)", "prim::Loop", "aten::mm(%h1, %wt)"])


def test_chains_move_and_nested_loops_give_up_what_reads_neither_loop() -> None:
    check_pass(loop_invariant_code_motion, """
graph(%h0 : Float(2, 3), %w : Float(3, 3), %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %h1 : Tensor):
      %g : Tensor = prim::Loop(%n, %true, %h1)
        block0(%j : int, %g1 : Tensor):
          %wt : Float(3, 3) = aten::transpose(%w, %zero, %one)
          %wd : Float(3, 3) = aten::detach(%wt)
          %g2 : Tensor = aten::mm(%g1, %wd)
          -> (%true, %g2)
      -> (%true, %g)
  return (%h)
""", inputs=inputs(0, 2, 3), present=["aten::transpose(%w, %zero, %one)", "aten::detach(%wt)", "prim::Loop",
                                      "prim::Loop", "aten::mm(%g1, %wd)"])


@pytest.mark.parametrize("case", ["reads the loop", "might fail", "unknown rank", "written", "not in the table"])
def test_what_stays(case: str) -> None:
    body = {
        "reads the loop": "%wt : Tensor = aten::t(%h1)",
        "might fail": "%wt : Tensor = aten::t(%w3)",  # a 3-d tensor: t() fails, but only if the loop runs
        "unknown rank": "%wt : Tensor = aten::t(%u)",
        "written": "%wt : Tensor = aten::t(%w)\n      %hw : Tensor = aten::mul_(%w, %w)",
        "not in the table": "%wt : Tensor = aten::neg(%w)",
    }[case]
    graph = f"""
graph(%h0 : Float(3, 3), %w : Float(3, 3), %w3 : Float(3, 3, 3), %u : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %h : Tensor = prim::Loop(%n, %true, %h0)
    block0(%i : int, %h1 : Tensor):
      {body}
      %h2 : Tensor = aten::add(%h1, %wt, %true)
      -> (%true, %h2)
  return (%h)
"""
    check_pass(loop_invariant_code_motion, graph, changed=False, inputs=[
        (torch.randn(3, 3), torch.randn(3, 3), torch.randn(3, 3, 3), torch.randn(3, 3), n) for n in (0, 2)])


UNROLLED = """
graph(%h0 : Float(2, 3), %w : Float(3, 3), %n : int):
  %true : bool = prim::Constant[value=1]()
  %h : Tensor, %c : Tensor = prim::Loop(%n, %true, %h0, %h0)
    block0(%i : int, %h1 : Tensor, %c1 : Tensor):
      %wt1 : Float(3, 3) = aten::t(%w)
      %h2 : Tensor = aten::mm(%h1, %wt1)
      %wt2 : Float(3, 3) = aten::t(%w)
      %h3 : Tensor = aten::mm(%h2, %wt2)
      -> (%true, %h3, CARRIED)
  return (%h, %c)
"""


def test_copies_made_by_unrolling_become_one() -> None:
    graph = check_pass(loop_invariant_code_motion, UNROLLED.replace("CARRIED", "%c1"), inputs=inputs(0, 3),
                       present=["aten::t(%w)", "prim::Loop", "aten::mm(%h1, %wt1)", "aten::mm(%h2, %wt1)"])
    assert str(graph).count("aten::t(") == 1


def test_copies_stay_apart_when_one_leaves_the_loop() -> None:
    graph = check_pass(loop_invariant_code_motion, UNROLLED.replace("CARRIED", "%wt2"), inputs=inputs(0, 3),
                       present=["aten::t(%w)", "aten::t(%w)", "prim::Loop"])
    assert str(graph).count("aten::t(") == 2
