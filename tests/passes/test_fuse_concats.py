"""fuse_concats: a cat of one FusionGroup's outputs moves into the group as a prim::VarConcat (run by fuse_graph
last, so the tests fuse the graph and check what became of the cat)."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.ir.symbols import prim
from tsjit.passes.concat_fusion import fuse_concats
from tsjit.passes.graph_fuser import fuse_graph

F2 = "Float(*, *, device=cpu)"

# as in the LSTM cell's backward: four gradients that one kernel computes, concatenated
GATE_GRADIENTS = f"""
graph(%g : {F2}, %i : {F2}, %f : {F2}, %c : {F2}, %o : {F2}):
  %one : int = prim::Constant[value=1]()
  %gi : {F2} = aten::mul(%g, %i)
  %gf : {F2} = aten::mul(%gi, %f)
  %gc : {F2} = aten::mul(%gf, %c)
  %go : {F2} = aten::sigmoid(%gc)
  %l : Tensor[] = prim::ListConstruct(%gi, %gf, %gc, %go)
  %r : {F2} = aten::cat(%l, %one)
  return (%r)"""


def subgraph_kinds(graph) -> list[list[str]]:
    return [[str(n.kind) for n in group.g("Subgraph").nodes() if n.kind is not prim.Constant]
            for group in graph.nodes() if group.kind is prim.FusionGroup]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_a_cat_of_a_groups_outputs_is_written_by_the_group(dim) -> None:
    text = GATE_GRADIENTS.replace("%one)\n  return", "%d)\n  return").replace(
        "%one : int = prim::Constant[value=1]()", f"%one : int = prim::Constant[value=1]()\n  %d : int = "
        f"prim::Constant[value={dim}]()")
    inputs = [tuple(torch.randn(shape) for _ in range(5)) for shape in [(1, 64), (3, 5), (2, 1)]]
    graph = check_pass(fuse_graph, text, absent=["aten::cat", "prim::ListConstruct"], inputs=inputs)
    assert [str(n.kind) for n in graph.nodes() if n.kind is not prim.Constant] == ["prim::FusionGroup"]
    assert subgraph_kinds(graph) == [["aten::mul", "aten::mul", "aten::mul", "aten::sigmoid", "prim::VarConcat"]]


def test_pieces_read_elsewhere_or_from_two_places_stay_a_cat() -> None:
    read_elsewhere = GATE_GRADIENTS.replace("return (%r)", "return (%r, %gi)")
    mixed = GATE_GRADIENTS.replace("prim::ListConstruct(%gi, %gf, %gc, %go)", "prim::ListConstruct(%gi, %gf, %g)")
    for text in (read_elsewhere, mixed):
        graph = check_pass(fuse_graph, text, present=["prim::FusionGroup", "aten::cat"])
        assert all("prim::VarConcat" not in kinds for kinds in subgraph_kinds(graph))


def test_only_fusion_groups_outputs_are_moved() -> None:
    check_pass(fuse_concats, GATE_GRADIENTS, changed=False)

