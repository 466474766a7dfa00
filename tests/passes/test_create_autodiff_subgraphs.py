"""create_autodiff_subgraphs: runs of nodes with gradient formulas become prim::DifferentiableGraph nodes."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.ir.parser import parse_ir
from tsjit.passes.create_autodiff_subgraphs import create_autodiff_subgraphs
from tsjit.runtime.run import run_graph

GRAD = "Float(*, *, requires_grad=1, device=cpu)"


def test_a_run_of_formula_ops_becomes_one_differentiable_graph() -> None:
    graph = check_pass(create_autodiff_subgraphs, f"""
graph(%x : {GRAD}, %y : {GRAD}):
  %t : Tensor = aten::mul(%x, %y)
  %z : Tensor = aten::tanh(%t)
  %s : Tensor = aten::sigmoid(%z)
  return (%s)""", present=["prim::DifferentiableGraph_0(%x, %y)", "with prim::DifferentiableGraph_0 = graph(",
                           "aten::mul", "aten::tanh", "aten::sigmoid"])
    assert [str(n.kind) for n in graph.nodes()] == ["prim::DifferentiableGraph"]


def test_nodes_without_formulas_stay_outside_and_values_read_after_are_outputs() -> None:
    # aten::size has no formula: its result is an input of the group; %t is read after the group: an output
    check_pass(create_autodiff_subgraphs, f"""
graph(%x : {GRAD}, %y : {GRAD}):
  %t : Tensor = aten::mul(%x, %y)
  %z : Tensor = aten::tanh(%t)
  %n : int[] = aten::size(%z)
  %v : Tensor = aten::view(%t, %n)
  %r : Tensor = aten::exp(%v)
  %u : (Tensor, Tensor) = prim::TupleConstruct(%r, %z)
  return (%u)""", present=["prim::DifferentiableGraph_0(%x, %y)", "aten::size", "prim::DifferentiableGraph_1("],
                   inputs=[(torch.randn(2, 3), torch.randn(2, 3))])


def test_groups_smaller_than_min_graph_size_are_left_alone() -> None:
    text = f"""
graph(%x : {GRAD}):
  %t : Tensor = aten::tanh(%x)
  %n : int[] = aten::size(%x)
  %r : Tensor = aten::reshape(%t, %n)
  return (%r)"""
    check_pass(create_autodiff_subgraphs, text, changed=False, absent=["prim::DifferentiableGraph"], min_graph_size=3)
    check_pass(create_autodiff_subgraphs, text, present=["prim::DifferentiableGraph"])


def test_nothing_requiring_grad_makes_no_group() -> None:
    check_pass(create_autodiff_subgraphs, """
graph(%x : Float(*, *, requires_grad=0, device=cpu)):
  %t : Tensor = aten::tanh(%x)
  %s : Tensor = aten::sigmoid(%t)
  return (%s)""", changed=False, absent=["prim::DifferentiableGraph"])


def test_the_group_runs_with_gradients_through_autograd() -> None:
    graph = parse_ir(f"""
graph(%x : {GRAD}, %y : {GRAD}):
  %t : Tensor = aten::mul(%x, %y)
  %z : Tensor = aten::tanh(%t)
  return (%z)""")
    assert create_autodiff_subgraphs(graph)
    x, y = torch.randn(2, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True)
    result = run_graph(graph, x, y, optimize=False)
    result.sum().backward()
    expected_x, expected_y = torch.autograd.grad(torch.tanh(x * y).sum(), [x, y])
    torch.testing.assert_close(x.grad, expected_x)
    torch.testing.assert_close(y.grad, expected_y)


def test_random_draws_keep_their_order() -> None:
    """%a's dropout may not move past %b's to join the group: each draws from the generator in program order."""
    graph = check_pass(create_autodiff_subgraphs, f"""
graph(%x : {GRAD}):
  %p : float = prim::Constant[value=0.5]()
  %train : bool = prim::Constant[value=1]()
  %a : Tensor = aten::dropout(%x, %p, %train)
  %b : Tensor = aten::dropout(%x, %p, %train)
  %m : Tensor = aten::mul(%a, %a)
  %u : (Tensor, Tensor) = prim::TupleConstruct(%m, %b)
  return (%u)""", changed=False, absent=["prim::DifferentiableGraph"])
    dropouts = [n.output().debug_name for n in graph.nodes() if str(n.kind) == "aten::dropout"]
    assert dropouts == ["a", "b"]
