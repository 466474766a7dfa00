"""A pass's diff picture: the nodes a pass removed red on the left, those it added green on the right, the rest
grey on both sides; nodes matched by identity across the pass (tsjit/passes/pass_diff.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ir"))
from svg_picture import ir_node_titles, needs_dot, read_svg  # noqa: E402  (tests/ir on sys.path)

from tsjit.ir.graphviz import STYLES  # noqa: E402
from tsjit.ir.parser import parse_ir  # noqa: E402
from tsjit.passes.common_subexpression_elimination import eliminate_common_subexpression  # noqa: E402
from tsjit.passes.pass_diff import diff_pass  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs"
REPEATED_PRODUCT = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::mul(%x, %y)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)
"""
F = "Float(*, device=cpu)"
CHAIN = f"""graph(%x : {F}, %y : {F}):
  %s : {F} = aten::sin(%x)
  %m : {F} = aten::mul(%s, %y)
  %r : {F} = aten::relu(%m)
  return (%r)
"""


def classes(picture, prefix: str) -> dict[str, list[str]]:
    """Node class -> the kinds of the IR boxes on one side of the picture, in program order."""
    found: dict[str, list[str]] = {}
    for title in ir_node_titles(picture, prefix):
        box = picture.nodes[title]
        (style,) = [c for c in box.classes if c != "node"]
        assert box.fill == STYLES[style]["fillcolor"]
        found.setdefault(style, []).append(box.texts[0])
    return found


def test_cse_removes_the_repeated_product() -> None:
    graph = parse_ir(REPEATED_PRODUCT)
    diff = diff_pass("cse", graph)
    assert diff.changed and diff.name == "eliminate_common_subexpression" and diff.after is graph
    assert [repr(node) for node in diff.removed] == ["%b : Tensor = aten::mul(%x, %y)"]
    assert diff.added == []
    assert str(diff.before) == str(parse_ir(REPEATED_PRODUCT))
    assert diff.before.lint() and diff.after.lint()


def test_fusion_adds_a_group_and_removes_what_it_took() -> None:
    diff = diff_pass("fuse_graph", parse_ir(CHAIN))
    assert [str(node.kind) for node in diff.removed] == ["aten::sin", "aten::mul", "aten::relu"]
    (group, *inside) = diff.added
    assert str(group.kind) == "prim::FusionGroup"
    assert inside == list(group.g("Subgraph").nodes())


def test_an_unchanged_graph_keeps_every_node() -> None:
    diff = diff_pass(eliminate_common_subexpression, parse_ir(CHAIN))
    assert not diff.changed and diff.removed == [] and diff.added == []
    assert "after eliminate_common_subexpression (unchanged)" in diff.dot()


def test_an_unknown_pass_is_named() -> None:
    with pytest.raises(KeyError, match="no_such_pass"):
        diff_pass("no_such_pass", parse_ir(CHAIN))


@needs_dot
def test_the_picture_colours_removed_and_added_nodes() -> None:
    diff = diff_pass("fuse_graph", parse_ir(CHAIN))
    picture = read_svg(diff.svg())
    assert classes(picture, "before_") == {"removed": ["aten::sin", "aten::mul", "aten::relu"]}
    assert classes(picture, "after_") == {"added": ["prim::FusionGroup", "aten::sin", "aten::mul", "aten::relu"]}
    (before,) = picture.cluster_titled("before fuse_graph")
    (after,) = picture.cluster_titled("after fuse_graph (changed)")
    assert before.box[2] <= after.box[0]  # side by side, before on the left
    assert len(ir_node_titles(picture, "after_")) == len(list(diff.after.nodes_with_held_graphs()))


@needs_dot
def test_kept_nodes_are_grey_on_both_sides() -> None:
    picture = read_svg(diff_pass("cse", parse_ir(REPEATED_PRODUCT)).svg())
    assert classes(picture, "before_") == {"kept": ["prim::Constant", "aten::mul", "aten::add"],
                                           "removed": ["aten::mul"]}
    assert classes(picture, "after_") == {"kept": ["prim::Constant", "aten::mul", "aten::add"]}


def test_the_docs_picture_is_todays_fuser_diff_of_the_lstm_cell() -> None:
    """docs/lstm_cell_fuse_graph.svg (`tsjit diff -p fuse_graph docs/lstm_cell.ir`) colours the nodes the fuser
    removes and adds today."""
    diff = diff_pass("fuse_graph", parse_ir((DOCS / "lstm_cell.ir").read_text()))
    picture = read_svg((DOCS / "lstm_cell_fuse_graph.svg").read_text())
    removed, added = set(diff.removed), set(diff.added)
    for prefix, graph, changed, style in (("before_", diff.before, removed, "removed"),
                                          ("after_", diff.after, added, "added")):
        expected: dict[str, list[str]] = {}
        for node in graph.nodes_with_held_graphs():
            expected.setdefault(style if node in changed else "kept", []).append(str(node.kind))
        assert classes(picture, prefix) == expected
