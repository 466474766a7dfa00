"""lower_not (MLIR preparation): `not b` becomes `b != True`."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.prepare import lower_not


def test_not_becomes_not_equal_true():
    check_pass(lower_not, """
graph(%a : int, %b : int):
  %c : bool = aten::lt(%a, %b)
  %d : bool = aten::__not__(%c)
  return (%d)""", inputs=[(1, 2), (2, 1)], present=["aten::lt", "aten::ne(%c, %"], absent=["aten::__not__"])
