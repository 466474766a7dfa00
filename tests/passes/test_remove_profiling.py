"""remove_profiling (MLIR preparation): prim::profile forwards its input."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import remove_profiling


def test_profile_nodes_forward_their_input():
    check_pass(remove_profiling, """
graph(%x : Tensor):
  %p : Tensor = prim::profile[profiled_type=Float(2)](%x)
  %y : Tensor = aten::neg(%p)
  return (%y)""", present=["aten::neg(%x)"], absent=["prim::profile"], inputs=[(torch.randn(2),)])
