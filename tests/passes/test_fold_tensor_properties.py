"""fold_tensor_properties (MLIR preparation): device queries of a program compiled for one device fold."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import fold_tensor_properties

DEVICE_CHECK = """
graph(%x : Tensor):
  %d : Device = prim::device(%x)
  %t : str = prim::type(%d)
  %nested : bool = prim::is_nested(%x)
  %on_gpu : bool = prim::is_cuda(%x)
  %r : (str, bool, bool) = prim::TupleConstruct(%t, %nested, %on_gpu)
  return (%r)
"""


def test_device_checks_fold_to_the_compiled_device():
    check_pass(fold_tensor_properties, DEVICE_CHECK, present=['prim::Constant[value="cpu"]', "prim::TupleConstruct"],
               absent=["prim::device", "prim::type", "prim::is_nested", "prim::is_cuda"])


def test_the_device_is_given():
    check_pass(fold_tensor_properties, DEVICE_CHECK, device=torch.device("meta"), run=False,
               present=['prim::Constant[value="meta"]'], absent=["prim::device"])


def test_every_tensor_is_strided():
    check_pass(fold_tensor_properties, """
graph(%x : Tensor):
  %layout : int = prim::layout(%x)
  %strided : int = prim::Constant[value=0]()
  %b : bool = aten::eq(%layout, %strided)
  return (%b)""", present=["prim::Constant[value=0]"], absent=["prim::layout"])
