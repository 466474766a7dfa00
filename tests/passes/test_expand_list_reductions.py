"""expand_list_reductions (MLIR preparation): the sum, max and min of an int or float list literal become scalar
adds and choices."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.prepare import expand_list_reductions


def test_sums_of_list_literals_become_adds_in_pythons_order():
    check_pass(expand_list_reductions, """
graph(%a : float, %b : float, %i : int, %j : int):
  %floats : float[] = prim::ListConstruct(%a, %b)
  %ints : int[] = prim::ListConstruct(%i, %j, %i)
  %s : float = aten::sum(%floats)
  %t : int = aten::sum(%ints)
  %r : (float, int) = prim::TupleConstruct(%s, %t)
  return (%r)""", inputs=[(0.5, -1.25, 3, -7), (-0.0, 2.0, 0, 1)], present=["aten::add", "aten::add"],
               absent=["aten::sum"])


def test_a_written_list_keeps_its_sum():
    check_pass(expand_list_reductions, """
graph(%a : float, %b : float):
  %floats : float[] = prim::ListConstruct(%a)
  %u : float[] = aten::append(%floats, %b)
  %s : float = aten::sum(%floats)
  return (%s)""", inputs=[(0.5, 2.0)], changed=False, present=["aten::sum"])


def test_max_and_min_of_list_literals_keep_the_first_of_equal_elements():
    # (-0.0 and 0.0 compare equal: Python's max and min return the first, and so must the choices)
    check_pass(expand_list_reductions, """
graph(%a : float, %b : float, %c : float, %i : int, %j : int):
  %floats : float[] = prim::ListConstruct(%a, %b, %c)
  %ints : int[] = prim::ListConstruct(%i, %j)
  %m : float = prim::max(%floats)
  %n : float = prim::min(%floats)
  %k : int = prim::max(%ints)
  %l : int = prim::min(%ints)
  %r : (float, float, int, int) = prim::TupleConstruct(%m, %n, %k, %l)
  return (%r)""", inputs=[(0.5, -1.25, 3.0, 3, -7), (-0.0, 0.0, -0.0, 1, 1), (2.0, 2.0, -5.0, -2, 4)],
               present=["aten::gt", "prim::If"], absent=["prim::max(%floats)", "prim::min(%floats)",
                                                         "prim::max(%ints)", "prim::min(%ints)"])


def test_the_max_of_an_empty_literal_stays_an_error_at_run_time():
    check_pass(expand_list_reductions, """
graph():
  %floats : float[] = prim::ListConstruct()
  %m : float = prim::max(%floats)
  return (%m)""", changed=False, present=["prim::max"])
