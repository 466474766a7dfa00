"""normalize_ops: aliased operators renamed to their normal form."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.passes.normalize_ops import normalize_ops


def test_aliases_of_tensor_ops_are_renamed_and_scalar_ones_stay():
    check_pass(normalize_ops, """
graph(%x : Tensor, %f : float):
  %a : Tensor = aten::absolute(%x)
  %g : Tensor = aten::greater_equal(%a, %f)
  %d : float = aten::degrees(%f)
  %r : (Tensor, float) = prim::TupleConstruct(%g, %d)
  return (%r)""", present=["aten::abs(%x)", "aten::ge(%a, %f)", "aten::degrees(%f)"],
               absent=["aten::absolute", "aten::greater_equal"])
