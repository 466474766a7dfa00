"""remove_prints (MLIR preparation): prim::Print and aten::warn go."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.prepare import remove_prints


def test_prints_and_warnings_are_removed(capsys):
    check_pass(remove_prints, """
graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  %msg : str = prim::Constant[value="careful"]()
  %level : int = prim::Constant[value=2]()
   = prim::Print(%y)
   = aten::warn(%msg, %level)
  return (%y)""", present=["aten::neg"], absent=["prim::Print", "aten::warn"])
