"""expand_broadcast_tensors (MLIR preparation): broadcast_tensors of known sizes as broadcast_to each."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import expand_broadcast_tensors


def test_known_sizes_become_broadcast_to():
    check_pass(expand_broadcast_tensors, """
graph(%a : Float(4, 1, strides=[1, 1], requires_grad=0, device=cpu),
      %b : Float(5, strides=[1], requires_grad=0, device=cpu)):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %r : Tensor[] = aten::broadcast_tensors(%l)
  %x : Tensor, %y : Tensor = prim::ListUnpack(%r)
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%x, %y, %one)
  return (%s)""",
               inputs=[(torch.randn(4, 1), torch.randn(5))], present=["value=[4, 5]", "aten::broadcast_to"],
               absent=["aten::broadcast_tensors"])


def test_unknown_sizes_stay():
    check_pass(expand_broadcast_tensors, """
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %r : Tensor[] = aten::broadcast_tensors(%l)
  return (%r)""", changed=False, inputs=[(torch.randn(2, 1), torch.randn(3))])
