"""fold_tensor_identity_tests (MLIR preparation): `is` / `is not` of two different tensor values fold; a value
against itself and optionals stay (static_control_flow and the None checks have them)."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import fold_tensor_identity_tests


def test_identity_of_different_tensors_folds():
    check_pass(fold_tensor_identity_tests, """
graph(%q : Tensor, %k : Tensor, %maybe : Tensor?):
  %different : bool = aten::__isnot__(%q, %k)
  %same : bool = aten::__is__(%q, %k)
  %itself : bool = aten::__is__(%q, %q)
  %none : bool = aten::__isnot__(%q, %maybe)
  %r : (bool, bool, bool, bool) = prim::TupleConstruct(%different, %same, %itself, %none)
  return (%r)""", inputs=[(torch.randn(2), torch.randn(2), None)],
               present=["prim::Constant[value=1]", "prim::Constant[value=0]", "aten::__is__(%q, %q)",
                        "aten::__isnot__(%q, %maybe)"])
