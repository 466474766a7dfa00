"""Type refinement on meta tensors (tsjit/mlir/shapes.py): what becomes known, and what must stay unknown."""

from __future__ import annotations

import torch

from tsjit.ir import types as ts
from tsjit.ir.parser import parse_ir
from tsjit.mlir import shapes


def refine(text: str, *arguments: shapes.Abstract):
    graph = parse_ir(text.strip())
    shapes.refine_types(graph, list(arguments))
    return {value.debug_name: str(value.type) for node in graph.all_nodes() for value in node.outputs}


def tensor(*sizes: int | None, dtype=torch.float32) -> shapes.Abstract:
    return shapes.meta_tensor(list(sizes), dtype)


def test_straight_line_code_gets_exact_types():
    types = refine("""
graph(%x : Tensor, %w : Tensor):
  %y : Tensor = aten::matmul(%x, %w)
  %b : Tensor = aten::gt(%y, %x)
  return (%b)""", tensor(2, 3), tensor(3, 3))
    assert types == {"y": "Float(2, 3)", "b": "Bool(2, 3)"}


IF = """
graph(%c : bool, %x : Tensor, %other : Tensor):
  %y : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%other)
  return (%y)
"""


def test_unknown_condition_joins_both_branches():
    assert refine(IF, shapes.stand_in(ts.BoolType.get()), tensor(2, 3), tensor(2, 3))["y"] == "Float(2, 3)"
    assert refine(IF, shapes.stand_in(ts.BoolType.get()), tensor(2, 3), tensor(4, 3))["y"] == "Float(*, *)"
    assert refine(IF, shapes.stand_in(ts.BoolType.get()), tensor(2, 3), tensor(3))["y"] == "Tensor"


def test_known_condition_takes_one_branch():
    assert refine(IF, shapes.Abstract(False, True), tensor(2, 3), tensor(3))["y"] == "Float(3)"


LOOP = """
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = OP
      -> (%true, %next)
  return (%r)
"""


def test_loop_keeping_the_shape_stays_exact_even_with_an_unknown_trip_count():
    text = LOOP.replace("OP", "aten::mul(%acc, %i)")
    assert refine(text, tensor(2, 3), shapes.stand_in(ts.IntType.get()))["r"] == "Float(2, 3)"


def test_loop_growing_a_tensor_keeps_only_its_rank():
    text = LOOP.replace("OP", "aten::cat(%list, %zero)").replace(
        "      %next", "      %list : Tensor[] = prim::ListConstruct(%acc, %x)\n      %next")
    assert refine(text, tensor(2, 3), shapes.stand_in(ts.IntType.get()))["r"] == "Float(*, *)"
    assert refine(text, tensor(2, 3), shapes.Abstract(2, True))["r"] == "Float(6, 3)"


def test_sizes_computed_from_stand_ins_are_unknown():
    """A dynamic size runs as a stand-in, so whatever depends on it keeps only rank and dtype."""
    types = refine("""
graph(%x : Tensor, %n : int):
  %minus_one : int = prim::Constant[value=-1]()
  %two : int = prim::Constant[value=2]()
  %sizes : int[] = prim::ListConstruct(%n, %minus_one)
  %v : Tensor = aten::view(%x, %sizes)
  %d : Tensor = aten::mul(%x, %two)
  return (%v)""", tensor(None, 4), shapes.stand_in(ts.IntType.get()))
    assert types["v"] == "Float(*, *)" and types["d"] == "Float(*, *)"


def test_uninitialized_takes_the_type_it_stands_for():
    types = refine("""
graph(%c : bool, %x : Tensor):
  %u : Tensor = prim::Uninitialized()
  %y : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%u)
  return (%y)""", shapes.stand_in(ts.BoolType.get()), tensor(5))
    assert types["u"] == "Float(5)" and types["y"] == "Float(5)"
