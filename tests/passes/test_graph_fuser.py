"""The graph fuser on IR text: which nodes end up in which prim::FusionGroup, and which stay out (other
dtypes, unrefined types, broadcasting, writes in between, readers in between, inputs requiring grad)."""

from __future__ import annotations

import re
import textwrap

import torch

from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import prim
from tsjit.passes.graph_fuser import fuse_graph
from tsjit.runtime.run import run_graph

F = "Float(*, device=cpu)"


def fuse(text: str):
    graph = parse_ir(re.sub(r"\bF\b", F, textwrap.dedent(text)).strip() + "\n")
    changed = fuse_graph(graph)
    graph.lint()
    return graph, changed


def kinds(block) -> list[str]:
    return [str(node.kind) for node in block.nodes() if node.kind is not prim.Constant]


def groups(graph) -> list[list[str]]:
    """The kinds in each FusionGroup's subgraph, in program order (nested blocks included)."""
    return [kinds(n.g("Subgraph")) for n in graph.all_nodes() if n.kind is prim.FusionGroup]


def test_a_chain_becomes_one_group_with_its_constants_copied_in() -> None:
    graph, changed = fuse("""
        graph(%x : F, %y : F, %a : float):
          %one : int = prim::Constant[value=1]()
          %s : F = aten::sin(%x)
          %m : F = aten::mul(%s, %y)
          %t : F = aten::add(%m, %y, %one)
          %r : F = aten::div(%t, %a)
          return (%r)""")
    assert changed and kinds(graph.block) == ["prim::FusionGroup"]
    assert groups(graph) == [["aten::sin", "aten::mul", "aten::add", "aten::div"]]
    (group,) = [n for n in graph.nodes() if n.kind is prim.FusionGroup]
    assert [v.debug_name for v in group.inputs] == ["x", "y", "a"]
    assert "with prim::FusionGroup_0 = graph(%x : Float(*, device=cpu)," in str(graph)
    subgraph_constants = [n for n in group.g("Subgraph").nodes() if n.kind is prim.Constant]
    assert len(subgraph_constants) == 1


def test_values_read_after_the_group_are_its_outputs() -> None:
    graph, _ = fuse("""
        graph(%x : F):
          %a : F = aten::relu(%x)
          %b : F = aten::neg(%a)
          %c : F = aten::exp(%b)
          %n : int = aten::dim(%a)
          return (%c, %n)""")
    (group,) = [n for n in graph.nodes() if n.kind is prim.FusionGroup]
    assert [v.debug_name for v in group.outputs] == ["a", "c"]
    x = torch.randn(4)
    torch.testing.assert_close(run_graph(graph, x, optimize=False), (torch.exp(-torch.relu(x)), 1))


def test_only_refined_float_cpu_tensors_are_fused() -> None:
    for tensor_type in ("Tensor", "Long(*, device=cpu)", "Float(*)", "Half(*, device=cpu)"):
        _, changed = fuse(f"""
            graph(%x : {tensor_type}):
              %a : {tensor_type} = aten::abs(%x)
              %b : {tensor_type} = aten::neg(%a)
              return (%b)""")
        assert not changed, tensor_type


def test_dtypes_do_not_mix_in_a_group() -> None:
    graph, _ = fuse("""
        graph(%x : F, %d : Double(*, device=cpu)):
          %a : F = aten::sin(%x)
          %b : F = aten::cos(%a)
          %c : Double(*, device=cpu) = aten::sin(%d)
          %e : Double(*, device=cpu) = aten::mul(%c, %d)
          %f : Double(*, device=cpu) = aten::mul(%b, %e)
          return (%f)""")
    assert groups(graph) == [["aten::sin", "aten::cos"], ["aten::sin", "aten::mul"]]
    assert kinds(graph.block)[-1] == "aten::mul"  # Float times Double promotes: not fusible


def test_broadcasting_is_not_fused() -> None:
    _, changed = fuse("""
        graph(%x : Float(*, *, device=cpu), %b : F):
          %one : int = prim::Constant[value=1]()
          %a : Float(*, *, device=cpu) = aten::add(%x, %b, %one)
          %r : Float(*, *, device=cpu) = aten::relu(%a)
          return (%r)""")
    assert not changed
    _, changed = fuse("""
        graph(%x : Float(3, device=cpu), %y : Float(1, device=cpu)):
          %a : Float(3, device=cpu) = aten::mul(%x, %y)
          %r : Float(3, device=cpu) = aten::relu(%a)
          return (%r)""")
    assert not changed


def test_a_single_operator_is_left_alone() -> None:
    graph, changed = fuse("""
        graph(%x : F):
          %none : NoneType = prim::Constant()
          %a : F = aten::sigmoid(%x)
          %s : Float(device=cpu) = aten::sum(%a, %none)
          %b : Float(device=cpu) = aten::tanh(%s)
          return (%b)""")
    assert not changed and kinds(graph.block) == ["aten::sigmoid", "aten::sum", "aten::tanh"]


def test_producers_move_down_past_unrelated_nodes() -> None:
    graph, _ = fuse("""
        graph(%x : F, %p : Float(*, *, device=cpu)):
          %a : F = aten::sin(%x)
          %m : Float(*, *, device=cpu) = aten::mm(%p, %p)
          %b : F = aten::cos(%a)
          return (%b, %m)""")
    assert kinds(graph.block) == ["aten::mm", "prim::FusionGroup"]
    assert groups(graph) == [["aten::sin", "aten::cos"]]


def test_a_producer_read_by_a_node_in_between_stays_out() -> None:
    graph, _ = fuse("""
        graph(%x : F):
          %none : NoneType = prim::Constant()
          %a : F = aten::sin(%x)
          %s : Float(device=cpu) = aten::sum(%a, %none)
          %b : F = aten::cos(%a)
          %c : F = aten::exp(%b)
          return (%c, %s)""")
    assert kinds(graph.block) == ["aten::sin", "aten::sum", "prim::FusionGroup"]
    assert groups(graph) == [["aten::cos", "aten::exp"]]


def test_a_producer_is_not_moved_past_a_write_to_its_input() -> None:
    graph, _ = fuse("""
        graph(%x : F, %y : F):
          %one : int = prim::Constant[value=1]()
          %a : F = aten::sin(%x)
          %w : F = aten::add_(%x, %y, %one)
          %b : F = aten::cos(%a)
          %c : F = aten::exp(%b)
          return (%c)""")
    assert kinds(graph.block) == ["aten::sin", "aten::add_", "prim::FusionGroup"]
    x, y = torch.randn(3), torch.randn(3)
    expected = torch.exp(torch.cos(torch.sin(x)))
    torch.testing.assert_close(run_graph(graph, x, y, optimize=False), expected)


def test_in_place_operators_are_never_fused() -> None:
    graph, _ = fuse("""
        graph(%x : F):
          %a : F = aten::sin(%x)
          %b : F = aten::relu_(%a)
          %c : F = aten::cos(%b)
          return (%c)""")
    assert "aten::relu_" in kinds(graph.block) and not groups(graph)


def test_an_input_requiring_grad_turns_fusion_off() -> None:
    _, changed = fuse("""
        graph(%x : Float(*, requires_grad=1, device=cpu)):
          %a : Float(*, device=cpu) = aten::sin(%x)
          %b : Float(*, device=cpu) = aten::cos(%a)
          return (%b)""")
    assert not changed


def test_groups_form_inside_nested_blocks() -> None:
    graph, _ = fuse("""
        graph(%x : F, %flag : bool):
          %r : F = prim::If(%flag)
            block0():
              %a : F = aten::sin(%x)
              %b : F = aten::cos(%a)
              -> (%b)
            block1():
              -> (%x)
          return (%r)""")
    assert groups(graph) == [["aten::sin", "aten::cos"]]
    (if_node,) = graph.nodes()
    assert kinds(if_node.blocks[0]) == ["prim::FusionGroup"]


def test_independent_chains_become_separate_groups() -> None:
    graph, _ = fuse("""
        graph(%x : F, %y : F):
          %a : F = aten::sin(%x)
          %b : F = aten::sin(%y)
          %c : F = aten::cos(%a)
          %d : F = aten::cos(%b)
          return (%c, %d)""")
    assert groups(graph) == [["aten::sin", "aten::cos"], ["aten::sin", "aten::cos"]]
