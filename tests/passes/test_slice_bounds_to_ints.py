"""slice_bounds_to_ints (MLIR preparation): a tensor slice's None start and end become 0 and the dimension's size
(TOSA lowers aten::slice.Tensor only with constant int bounds: `x[::2, 1:]` of e2e's tensor_indexing)."""

from __future__ import annotations

from pass_case import check_pass

from tsjit.mlir.prepare import slice_bounds_to_ints


def test_none_bounds_become_ints():
    check_pass(slice_bounds_to_ints, """
graph(%x : Float(4, 4)):
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %a : Tensor = aten::slice(%x, %0, %none, %none, %2)
  %b : Tensor = aten::slice(%a, %1, %1, %none, %1)
  return (%b)""", present=["aten::size(%x, %0)", "aten::slice(%x, %0, %7, %8, %2)",
                                                           "aten::size(%a, %1)", "aten::slice(%a, %1, %1, %9, %1)"])


def test_list_slices_and_int_bounds_are_left():
    check_pass(slice_bounds_to_ints, """
graph(%x : Float(4, 4), %l : int[]):
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::slice(%x, %0, %0, %1, %1)
  %m : int[] = aten::slice(%l, %none, %none, %1)
  %t : (Tensor, int[]) = prim::TupleConstruct(%a, %m)
  return (%t)""", changed=False, inputs=[])


def test_slice_scatter_bounds_become_ints():
    """`y[1:] += 1` becomes a slice_scatter to None (remove_mutation), which TOSA and StableHLO lower only with
    int bounds (StableHLO's lowering to INT64_MAX, the FX route's end, runs out of memory)."""
    check_pass(slice_bounds_to_ints, """
graph(%x : Float(3, 4), %y : Float(2, 4)):
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %z : Tensor = aten::slice_scatter(%x, %y, %0, %1, %none, %1)
  return (%z)""", present=["aten::size(%x, %0)", "aten::slice_scatter(%x, %y, %0, %1, %6, %1)"])
