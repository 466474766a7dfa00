"""unroll_constant_loops: small loops with a constant trip count become copies of their body (freezing)."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.passes.loop_unrolling import unroll_constant_loops


def test_a_constant_loop_is_unrolled_and_others_stay():
    graph = check_pass(unroll_constant_loops, """
graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %y : Tensor = prim::Loop(%2, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%t, %b)
  %z : Tensor = prim::Loop(%n, %t, %y)
    block0(%j : int, %c : Tensor):
      %d : Tensor = aten::relu(%c)
      -> (%t, %d)
  return (%z)""", present=["aten::neg", "aten::neg", "prim::Loop(%n", "aten::relu"])
    assert str(graph).count("prim::Loop") == 1
