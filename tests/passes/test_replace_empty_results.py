"""replace_empty_results (MLIR preparation): an aten op whose results are tensors without elements becomes zeros of
their types (torch-mlir died of a floating point exception reshaping a zero-element tensor: F.unfold of a batch
of 0)."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.ir.parser import parse_ir
from tsjit.mlir.prepare import replace_empty_results
from tsjit.passes.dead_code_elimination import eliminate_dead_code

EMPTY_RESHAPE = """
graph(%x : Float(0, 4, 4)):
  %sizes : int[] = prim::Constant[value=[0, 16]]()
  %y : Float(0, 16) = aten::reshape(%x, %sizes)
  %z : Float(0, 16) = aten::relu(%y)
  return (%z)"""


def test_a_reshape_of_an_empty_tensor_becomes_zeros_of_its_type():
    check_pass(replace_empty_results, EMPTY_RESHAPE, present=["aten::zeros"], inputs=[(torch.randn(0, 4, 4),)])
    graph = parse_ir(EMPTY_RESHAPE)
    assert replace_empty_results(graph) and eliminate_dead_code(graph)
    assert "aten::reshape" not in str(graph) and "aten::relu" not in str(graph)


def test_ops_with_elements_writes_and_unknown_sizes_stay():
    check_pass(replace_empty_results, """
graph(%x : Float(0, 4), %w : Float(2, 4), %u : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Float(0, 4) = aten::add_(%x, %x, %one)
  %b : Float(2, 4) = aten::relu(%w)
  %c : Tensor = aten::relu(%u)
  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c)
  return (%r)""", changed=False, present=["aten::add_", "aten::relu(%w)", "aten::relu(%u)"],
               inputs=[(torch.randn(0, 4), torch.randn(2, 4), torch.randn(3))])


def test_a_matrix_product_over_an_empty_dimension_becomes_zeros():
    """`a @ b.mT` of 3x0 matrices (op_db's linalg.pinv.singular, which IREE's compiler crashed on) is 3x3 zeros; a
    product over a dimension of another size stays."""
    check_pass(replace_empty_results, """
graph(%a : Float(3, 0), %b : Float(0, 3), %c : Float(3, 2), %d : Float(2, 3)):
  %p : Float(3, 3) = aten::matmul(%a, %b)
  %q : Float(3, 3) = aten::mm(%c, %d)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%p, %q)
  return (%r)""", present=["aten::zeros", "aten::mm(%c, %d)"],
               inputs=[(torch.randn(3, 0), torch.randn(0, 3), torch.randn(3, 2), torch.randn(2, 3))])
