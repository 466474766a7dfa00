"""replace_uninitialized (MLIR preparation): prim::Uninitialized becomes a zero of its refined type."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.mlir.prepare import replace_uninitialized


def test_uninitialized_becomes_a_zero_of_its_refined_type():
    check_pass(replace_uninitialized, """
graph(%c : bool, %x : Float(2, 3), %n : int):
  %u : Float(2, 3) = prim::Uninitialized()
  %k : int = prim::Uninitialized()
  %y : Float(2, 3), %m : int = prim::If(%c)
    block0():
      -> (%x, %n)
    block1():
      -> (%u, %k)
  %r : (Tensor, int) = prim::TupleConstruct(%y, %m)
  return (%r)""", present=["aten::zeros", "prim::If"], absent=["prim::Uninitialized"],
               inputs=[(True, torch.randn(2, 3), 4)])


def test_a_tensor_of_unknown_sizes_stays_uninitialized():
    check_pass(replace_uninitialized, """
graph(%x : Tensor):
  %u : Tensor = prim::Uninitialized()
  %r : (Tensor, Tensor) = prim::TupleConstruct(%x, %u)
  return (%r)""", changed=False, run=False, present=["prim::Uninitialized"])
