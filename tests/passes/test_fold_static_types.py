"""fold_static_types: sizes, ranks and dtypes that refined tensor types state become constants."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.passes.fold_static_types import fold_static_types


def test_sizes_and_ranks_the_types_state_become_constants():
    x = torch.randn(2, 3)
    check_pass(fold_static_types, """
graph(%x : Float(2, 3)):
  %zero : int = prim::Constant[value=0]()
  %sizes : int[] = aten::size(%x)
  %n : int = aten::size(%x, %zero)
  %d : int = aten::dim(%x)
  %r : (int[], int, int) = prim::TupleConstruct(%sizes, %n, %d)
  return (%r)""", inputs=[(x,)], present=["prim::Constant[value=[2, 3]]", "prim::Constant[value=2]"],
               absent=["aten::size", "aten::dim"])


def test_dtype_of_a_refined_tensor_becomes_a_constant():
    check_pass(fold_static_types, """
graph(%x : Double(2)):
  %d : int = prim::dtype(%x)
  return (%d)""", present=["prim::Constant[value=7]"], absent=["prim::dtype"])


def test_dtype_queries_of_a_refined_tensor_become_constants():
    """F._canonical_mask asks `mask.is_floating_point()` (nn.MultiheadAttention's key_padding_mask)."""
    check_pass(fold_static_types, """
graph(%x : Bool(2), %y : Tensor):
  %f : bool = aten::is_floating_point(%x)
  %c : bool = aten::is_complex(%x)
  %u : bool = aten::is_floating_point(%y)
  %r : (bool, bool, bool) = prim::TupleConstruct(%f, %c, %u)
  return (%r)""", present=["prim::Constant[value=0]", "aten::is_floating_point(%y)"], absent=["aten::is_complex"])


def test_unknown_sizes_stay():
    check_pass(fold_static_types, """
graph(%x : Float(*, 3)):
  %sizes : int[] = aten::size(%x)
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::size(%x, %zero)
  %r : (int[], int) = prim::TupleConstruct(%sizes, %n)
  return (%r)""", changed=False, present=["aten::size", "aten::size"])


def test_the_length_of_a_tensor_becomes_its_first_size():
    """`for a, b in zip(x, y)` runs min(len(x), len(y)) times: folded, the loop's trip count is a constant. The
    length of a tensor whose first size is unknown, and of a list, stay."""
    check_pass(fold_static_types, """
graph(%x : Float(2, 3), %y : Float(*, 3), %l : int[]):
  %n : int = aten::len(%x)
  %m : int = aten::len(%y)
  %k : int = aten::len(%l)
  %r : (int, int, int) = prim::TupleConstruct(%n, %m, %k)
  return (%r)""", inputs=[(torch.randn(2, 3), torch.randn(4, 3), [1, 2, 3])],
               present=["prim::Constant[value=2]", "aten::len(%y)", "aten::len(%l)"])
