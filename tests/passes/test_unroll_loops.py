"""unroll_loops: small counted loops are repeated (completely when the trip count is a small constant, else by
UNROLL_FACTOR with an epilogue), and the graph computes what it did for every trip count."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.passes.loop_unrolling import UNROLL_FACTOR, unroll_loops

LOOPS = """
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::add(%a, %i, %three)
      -> (%true, %b)
  %z : Tensor = prim::Loop(%three, %true, %y)
    block0(%j : int, %c : Tensor):
      %d : Tensor = aten::mul(%c, %j)
      -> (%true, %d)
  return (%z)
"""


def loops(graph) -> list:
    return [node for node in graph.all_nodes() if str(node.kind) == "prim::Loop"]


@pytest.mark.parametrize("n", [-2, 0, 1, UNROLL_FACTOR - 1, UNROLL_FACTOR, 2 * UNROLL_FACTOR + 3])
def test_unrolled_loops_compute_the_same_for_every_trip_count(n: int) -> None:
    check_pass(unroll_loops, LOOPS, inputs=[(torch.arange(3.0), n)], idempotent=False)


def test_constant_trip_counts_unroll_completely_and_others_get_an_epilogue() -> None:
    graph = check_pass(unroll_loops, LOOPS, idempotent=False)
    unrolled, epilogue = loops(graph)  # the constant loop is gone

    def tensor_adds(loop) -> int:
        return sum(str(n.kind) == "aten::add" and str(n.output().type) == "Tensor" for n in loop.blocks[0].nodes())

    assert tensor_adds(unrolled) == UNROLL_FACTOR and tensor_adds(epilogue) == 1


def test_while_loops_and_big_bodies_stay() -> None:
    check_pass(unroll_loops, """
        graph(%x : Tensor, %n : int, %cond : bool):
          %y : Tensor = prim::Loop(%n, %cond, %x)
            block0(%i : int, %a : Tensor):
              %b : Tensor = aten::neg(%a)
              %go2 : bool = aten::is_nonzero(%b)
              -> (%go2, %b)
          return (%y)""", changed=False, inputs=[(torch.tensor([v]), 3, c) for v in (0.0, 2.0) for c in (True, False)])
    body = "\n".join(f"      %b{i} : Tensor = aten::neg(%a)" for i in range(40))
    check_pass(unroll_loops, f"""
        graph(%x : Tensor, %n : int):
          %true : bool = prim::Constant[value=1]()
          %y : Tensor = prim::Loop(%n, %true, %x)
            block0(%i : int, %a : Tensor):
        {body}
              -> (%true, %b39)
          return (%y)""", changed=False)


def test_in_the_pass_test_shape():
    """Both loops unrolled: the short constant one completely, the other by UNROLL_FACTOR with an epilogue. As
    TorchScript's UnrollLoops, a second run unrolls a body that is still small again (not idempotent)."""
    graph = check_pass(unroll_loops, LOOPS, inputs=[(torch.arange(3.0), n) for n in (0, 5, 19)], idempotent=False,
                       present=["aten::__round_to_zero_floordiv", "prim::Loop", "prim::Loop", "aten::mul"])
    assert str(graph).count("Tensor = aten::mul") == 3  # the constant loop's three iterations
