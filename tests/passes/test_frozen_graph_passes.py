"""The small passes freezing runs, on IR text: what each rewrites and, as much, what it must leave alone."""

import pytest
import torch

import tsjit
from tsjit.ir.graph import Graph
from tsjit.passes.constant_propagation import constant_propagation
from tsjit.passes.frozen_linear_transpose import frozen_linear_transpose
from tsjit.passes.loop_unrolling import unroll_constant_loops
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.peephole_alias_sensitive import peephole_alias_sensitive
from tsjit.passes.remove_dropout import remove_dropout


def _kinds(graph: Graph) -> list[str]:
    return [str(n.kind) for n in graph.all_nodes() if str(n.kind) != "prim::Constant"]


CASES = {
    "dropout_in_eval_removed": (remove_dropout, """
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::dropout(%x, %p, %f)
  %z : Tensor = aten::feature_dropout_(%y, %p, %f)
  return (%z)""", []),
    "dropout_training_or_unknown_kept": (remove_dropout, """
graph(%x : Tensor, %train : bool):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = aten::dropout(%x, %p, %t)
  %z : Tensor = aten::dropout(%y, %p, %train)
  return (%z)""", ["aten::dropout", "aten::dropout"]),
    "conv_dim_known": (peephole_alias_sensitive, """
graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %ones : int[] = prim::Constant[value=[1]]()
  %zeros : int[] = prim::Constant[value=[0]]()
  %y : Tensor = aten::conv1d(%x, %w, %none, %ones, %zeros, %ones, %one)
  %d : int = aten::dim(%y)
  return (%d)""", []),
    "conv_dim_resized_kept": (peephole_alias_sensitive, """
graph(%x : Tensor, %w : Tensor, %s : int[]):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %ones : int[] = prim::Constant[value=[1, 1]]()
  %zeros : int[] = prim::Constant[value=[0, 0]]()
  %y : Tensor = aten::conv2d(%x, %w, %none, %ones, %zeros, %ones, %one)
  %r : Tensor = aten::resize_(%y, %s, %none)
  %d : int = aten::dim(%y)
  return (%d)""", ["aten::conv2d", "aten::resize_", "aten::dim"]),
    "add_int_zero_removed": (peephole_alias_sensitive, """
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %0, %1)
  %z : Tensor = aten::mul(%y, %1)
  %n : Tensor = aten::neg(%z)
  return (%n)""", ["aten::neg"]),
    "float_zero_or_output_alias_kept": (peephole_alias_sensitive, """
graph(%x : Tensor):
  %0 : float = prim::Constant[value=0.]()
  %1 : int = prim::Constant[value=1]()
  %i : int = prim::Constant[value=0]()
  %y : Tensor = aten::add(%x, %0, %1)
  %z : Tensor = aten::add(%x, %i, %1)
  return (%y, %z)""", ["aten::add", "aten::add"]),
    "constant_loop_unrolled_other_kept": (unroll_constant_loops, """
graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %y : Tensor = prim::Loop(%2, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::neg(%a)
      -> (%t, %b)
  %z : Tensor = prim::Loop(%n, %t, %y)
    block0(%j : int, %c : Tensor):
      %d : Tensor = aten::relu(%c)
      -> (%t, %d)
  return (%z)""", ["aten::neg", "aten::neg", "prim::Loop", "aten::relu"]),
}


@pytest.mark.parametrize("name", CASES)
def test_pass(name):
    pass_fn, text, expected = CASES[name]
    graph = tsjit.parse_ir(text)
    run_pass(pass_fn, graph)
    assert _kinds(graph) == expected


def _with_tensor_constant(text: str) -> Graph:
    graph = tsjit.parse_ir(text)
    first = next(iter(graph.nodes()))
    with graph.insert_point_guard(first):
        table = graph.insert_constant(torch.arange(4.0))
    first.output().replace_all_uses_with(table)
    first.destroy()
    return graph


def test_constant_propagation_folds_tensors_nobody_writes():
    graph = _with_tensor_constant("""
graph(%x : Tensor):
  %t : Tensor = aten::neg(%x)
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sum(%t, %none)
  %1 : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %s, %1)
  return (%y)""")
    run_pass(constant_propagation, graph)
    assert _kinds(graph) == ["aten::add"]


def test_constant_propagation_keeps_what_is_written():
    graph = _with_tensor_constant("""
graph(%x : Tensor):
  %t : Tensor = aten::neg(%x)
  %1 : int = prim::Constant[value=1]()
  %c : Tensor = aten::mul(%t, %1)
  %w : Tensor = aten::add_(%c, %x, %1)
  return (%c)""")
    run_pass(constant_propagation, graph)
    assert _kinds(graph) == ["aten::mul", "aten::add_"]


def test_linear_transpose_computes_the_same():
    graph = tsjit.parse_ir("""
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)""")
    weight, bias = torch.randn(3, 4), torch.randn(3)
    for index, value in ((1, weight), (2, bias)):
        with graph.insert_point_guard(next(iter(graph.nodes()))):
            graph.inputs[index].replace_all_uses_with(graph.insert_constant(value))
    run_pass(frozen_linear_transpose, graph)
    assert _kinds(graph) == ["aten::matmul", "aten::add"]
    x = torch.randn(2, 4)
    torch.testing.assert_close(tsjit.run_graph(graph, x, weight, bias), torch.nn.functional.linear(x, weight, bias))
