"""flip_float_comparisons (MLIR preparation): float `<`, `<=` and `!=` as the comparisons linalg lowers."""

from __future__ import annotations

import math

from pass_case import check_pass

from tsjit.mlir.prepare import flip_float_comparisons

PAIRS = [(1.0, 2.0), (2.0, 1.0), (1.5, 1.5), (math.nan, 1.0)]


def test_less_than_becomes_greater_than_swapped():
    check_pass(flip_float_comparisons, """
graph(%a : float, %b : float):
  %c : bool = aten::lt(%a, %b)
  %d : bool = aten::le(%a, %b)
  %t : (bool, bool) = prim::TupleConstruct(%c, %d)
  return (%t)""", inputs=PAIRS, present=["aten::gt(%b, %a)", "aten::ge(%b, %a)"], absent=["aten::lt", "aten::le"])


def test_not_equal_becomes_negated_equal():
    check_pass(flip_float_comparisons, """
graph(%a : float, %b : float):
  %c : bool = aten::ne(%a, %b)
  return (%c)""", inputs=PAIRS, present=["aten::eq(%a, %b)", "aten::ne(%"], absent=["aten::ne(%a, %b)"])


def test_int_comparisons_stay():
    check_pass(flip_float_comparisons, """
graph(%a : int, %b : int):
  %c : bool = aten::lt(%a, %b)
  return (%c)""", inputs=[(1, 2)], changed=False)
