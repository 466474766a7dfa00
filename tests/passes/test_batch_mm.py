"""batch_mm: sums of matrix products become one prim::MMTreeReduce, which concatenates their operands when they
allow it and adds the products otherwise."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.ops.builtins.tensor_ops import mm_tree_reduce
from tsjit.passes.batch_mm import batch_mm

# a weight's gradient over three steps of a recurrence, as a backward graph sums it: a chain of adds
THREE_STEPS = """
graph(%h0 : Tensor, %h1 : Tensor, %h2 : Tensor, %g0 : Tensor, %g1 : Tensor, %g2 : Tensor):
  %one : int = prim::Constant[value=1]()
  %t0 : Tensor = aten::t(%h0)
  %a : Tensor = aten::mm(%t0, %g0)
  %t1 : Tensor = aten::t(%h1)
  %b : Tensor = aten::mm(%t1, %g1)
  %s : Tensor = aten::add(%a, %b, %one)
  %t2 : Tensor = aten::t(%h2)
  %c : Tensor = aten::mm(%t2, %g2)
  %r : Tensor = aten::add(%s, %c, %one)
  return (%r)"""


def _steps(rows: list[int], columns: int = 5) -> tuple:
    """h_i of (rows_i, 3) and g_i of (rows_i, columns): mm(t(h_i), g_i) is (3, columns)."""
    return (*[torch.randn(r, 3) for r in rows], *[torch.randn(r, columns) for r in rows])


def test_a_sum_of_three_products_is_one_tree_reduce():
    graph = check_pass(batch_mm, THREE_STEPS, present=["prim::MMTreeReduce(%t0, %t1, %t2, %g0, %g1, %g2)"],
                       absent=["aten::mm", "aten::add"], inputs=[_steps([1, 1, 1]), _steps([2, 1, 4])])
    assert len(list(graph.nodes())) == 5  # the constant, three transposes and the reduce


def test_products_that_broadcast_or_mismatch_are_added_one_by_one():
    """The adds broadcast a (1, 5) product against (3, 5) ones; inner sizes that do not agree raise mm's error
    even where the concatenated operands would multiply."""
    check_pass(batch_mm, THREE_STEPS, present=["prim::MMTreeReduce"],
               inputs=[(torch.randn(2, 1), torch.randn(2, 3), torch.randn(2, 3), *_steps([2, 2, 2])[3:]),
                       (torch.randn(2, 3), torch.randn(1, 3), torch.randn(3, 3), *_steps([1, 2, 3])[3:])])


def test_the_concatenated_product_equals_the_sum():
    lhs, rhs = [torch.randn(4, k) for k in (1, 2, 3)], [torch.randn(k, 6) for k in (1, 2, 3)]
    expected = sum(torch.mm(a, b) for a, b in zip(lhs, rhs))
    torch.testing.assert_close(mm_tree_reduce(*lhs, *rhs), expected)
    with pytest.raises(RuntimeError):
        mm_tree_reduce(*lhs, *reversed(rhs))  # (4, 1) @ (3, 6): mm's own error, not a silent product


@pytest.mark.parametrize("text", [
    # two products only
    """
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):
  %one : int = prim::Constant[value=1]()
  %x : Tensor = aten::mm(%a, %b)
  %y : Tensor = aten::mm(%c, %d)
  %r : Tensor = aten::add(%x, %y, %one)
  return (%r)""",
    # alpha 2, and a product read elsewhere too
    """
graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %x : Tensor = aten::mm(%a, %b)
  %y : Tensor = aten::mm(%b, %a)
  %z : Tensor = aten::mm(%a, %a)
  %s : Tensor = aten::add(%x, %y, %two)
  %r : Tensor = aten::add(%s, %z, %one)
  %w : Tensor = aten::add(%x, %y, %one)
  %v : Tensor = aten::add(%w, %x, %one)
  return (%r, %v)""",
    # an operand written between its product and the sum (not run: the graph writes its input)
    """
graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %x : Tensor = aten::mm(%a, %b)
  %y : Tensor = aten::mm(%b, %a)
  %s : Tensor = aten::add(%x, %y, %one)
  %m : Tensor = aten::mul_(%a, %b)
  %z : Tensor = aten::mm(%a, %a)
  %r : Tensor = aten::add(%s, %z, %one)
  return (%r)""",
])
def test_sums_that_are_not_trees_of_enough_products_stay(text):
    square = (torch.randn(3, 3), torch.randn(3, 3))
    check_pass(batch_mm, text, changed=False, absent=["prim::MMTreeReduce"], run="mul_" not in text,
               inputs=[square + square if text.count("%c : Tensor") else square])


def test_graphs_with_an_input_that_requires_grad_are_left_alone():
    check_pass(batch_mm, THREE_STEPS.replace("%h0 : Tensor", "%h0 : Float(*, *, requires_grad=1, device=cpu)"),
               changed=False, run=False)
