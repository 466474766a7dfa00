"""decompose_range_ops (MLIR preparation): range length and index with a constant step become int arithmetic."""

from __future__ import annotations

import pytest
from pass_case import check_pass

from tsjit.mlir.prepare import decompose_range_ops

RANGE = """
graph(%lo : int, %hi : int):
  %step : int = prim::Constant[value=STEP]()
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::__range_length(%lo, %hi, %step)
  %total : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %v : int = aten::__derive_index(%i, %lo, %step)
      %next : int = aten::add(%acc, %v)
      -> (%true, %next)
  return (%total)
"""


@pytest.mark.parametrize("step", [1, 3, -2])
def test_range_ops_become_int_arithmetic(step):
    bounds = [(lo, hi) for lo in (-3, 0, 4) for hi in (-5, 0, 2, 9)]
    check_pass(decompose_range_ops, RANGE.replace("STEP", str(step)), inputs=bounds,
               present=["aten::floordiv", "prim::max", "prim::Loop", "aten::mul"],
               absent=["aten::__range_length", "aten::__derive_index"])


def test_a_step_known_only_at_run_time_stays():
    check_pass(decompose_range_ops, """
graph(%lo : int, %hi : int, %step : int):
  %n : int = aten::__range_length(%lo, %hi, %step)
  return (%n)""", changed=False, inputs=[(0, 9, 2), (9, 0, -3)], present=["aten::__range_length"])
