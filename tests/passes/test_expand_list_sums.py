"""expand_list_sums (MLIR preparation): the sum of an int or float list literal becomes scalar adds."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.prepare import expand_list_sums


def test_sums_of_list_literals_become_adds_in_pythons_order():
    check_pass(expand_list_sums, """
graph(%a : float, %b : float, %i : int, %j : int):
  %floats : float[] = prim::ListConstruct(%a, %b)
  %ints : int[] = prim::ListConstruct(%i, %j, %i)
  %s : float = aten::sum(%floats)
  %t : int = aten::sum(%ints)
  %r : (float, int) = prim::TupleConstruct(%s, %t)
  return (%r)""", inputs=[(0.5, -1.25, 3, -7), (-0.0, 2.0, 0, 1)], present=["aten::add", "aten::add"],
               absent=["aten::sum"])


def test_a_written_list_keeps_its_sum():
    check_pass(expand_list_sums, """
graph(%a : float, %b : float):
  %floats : float[] = prim::ListConstruct(%a)
  %u : float[] = aten::append(%floats, %b)
  %s : float = aten::sum(%floats)
  return (%s)""", inputs=[(0.5, 2.0)], changed=False, present=["aten::sum"])
