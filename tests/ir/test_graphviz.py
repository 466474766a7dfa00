"""Graphs as pictures: real graphs (the LSTM cell's optimized plan with its FusionGroup, a loop around an if)
drawn to DOT, rendered by Graphviz, and the SVG read back: one box per node in program order labelled with its
kind, clusters titled by kind and nested as the blocks are, edges labelled with each use's value and type; and a
headless browser's screenshot of it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from pathlib import Path

import pytest
import torch
from shared_programs import lstm_cell_s as lstm_cell
from svg_picture import ir_node_titles, needs_dot, png_colours, read_svg, screenshot

import tsjit
from tsjit.errors import GraphvizError
from tsjit.ir.graphviz import (
    LABEL_LIMIT,
    graph_to_dot,
    graph_to_svg,
    quote,
    render_svg,
)
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import prim

REPOSITORY = Path(__file__).resolve().parents[2]


def countdown(x: torch.Tensor, n: int) -> torch.Tensor:
    for _ in range(n):
        if bool(x.sum() > 0):
            x = x - 1
        else:
            x = x * 2
    return x


def lstm_cell_plan():
    """The optimized plan the graph executor makes for the scripted LSTM cell."""
    scripted = tsjit.script(lstm_cell)
    inputs = [torch.randn(shape) for shape in ((3, 10), (3, 20), (3, 20), (80, 10), (80, 20), (80,), (80,))]
    with torch.no_grad():
        torch.testing.assert_close(scripted(*inputs), lstm_cell(*inputs))
        return scripted.graph_for(*inputs)  # the optimized plan (the first call only profiles)


def use_labels(graph) -> list[str]:
    """`%name : type` of every use of a value, block and graph outputs included, as the edges must say."""
    labels = []
    for node in graph.nodes_with_held_graphs():
        labels += [f"%{value.debug_name} : {value.type}" for value in node.inputs]
        labels += [f"%{value.debug_name} : {value.type}" for block in node.blocks for value in block.outputs]
        labels += [f"%{value.debug_name} : {value.type}" for _, held in node.held_graphs() for value in held.outputs]
    return labels + [f"%{value.debug_name} : {value.type}" for value in graph.outputs]


def check_boxes_and_edges(graph, picture) -> None:
    nodes = list(graph.nodes_with_held_graphs())
    titles = ir_node_titles(picture)
    assert len(titles) == len(nodes)
    assert [picture.nodes[title].texts[0] for title in titles] == [str(node.kind) for node in nodes]
    labelled = sorted(edge.texts[0] for edge in picture.edges if edge.texts)
    shortened = [text if len(text) <= LABEL_LIMIT else text[:LABEL_LIMIT - 3] + "..." for text in use_labels(graph)]
    assert labelled == sorted(shortened)


@needs_dot
def test_the_lstm_cell_plan_shows_its_fusion_group_as_a_nested_cluster() -> None:
    graph = lstm_cell_plan()
    picture = read_svg(graph_to_svg(graph))
    check_boxes_and_edges(graph, picture)
    (group,) = picture.cluster_titled("prim::FusionGroup")
    (subgraph,) = [cluster for cluster in picture.cluster_titled("Subgraph") if group.contains(cluster)]
    fused = [title for title in ir_node_titles(picture) if subgraph.contains(picture.nodes[title])]
    (node,) = [n for n in graph.all_nodes() if n.kind is prim.FusionGroup]  # behind its type guard
    assert len(fused) == len(list(node.g("Subgraph").nodes()))
    assert "Float(*, *, device=cpu)" in " ".join(edge.texts[0] for edge in picture.edges if edge.texts)
    inputs = picture.nodes["p0"].texts
    assert inputs == ["graph inputs", "%x.1", "%hx.1", "%cx.1", "%w_ih.1", "%w_hh.1", "%b_ih.1", "%b_hh.1"]


@needs_dot
def test_a_loop_around_an_if_is_clusters_within_clusters() -> None:
    graph = tsjit.script(countdown).graph
    picture = read_svg(graph_to_svg(graph))
    check_boxes_and_edges(graph, picture)
    (loop,), (branch,) = picture.cluster_titled("prim::Loop"), picture.cluster_titled("prim::If")
    blocks = picture.cluster_titled("block0") + picture.cluster_titled("block1")
    assert len(blocks) == 3  # the loop's body, the if's two branches
    body = next(block for block in blocks if block.contains(branch))
    assert loop.contains(body) and loop.contains(branch)
    branches = [block for block in blocks if branch.contains(block)]
    assert len(branches) == 2
    for kind in ("aten::sub", "aten::mul"):
        (box,) = [picture.nodes[t] for t in ir_node_titles(picture) if picture.nodes[t].texts[0] == kind]
        assert sum(block.contains(box) for block in branches) == 1


@needs_dot
@pytest.mark.parametrize("path", sorted((REPOSITORY / "tests" / "ir" / "corpus" / "graphs").glob("*.ir")),
                         ids=lambda path: path.stem)
def test_every_graph_torch_jit_printed_is_drawn(path) -> None:
    """The corpus: graphs torch.jit printed (DifferentiableGraphs with their fallbacks, FusionGroups nested in
    FusionGroups, forks, loops, classes...), each a box per node and an edge per use."""
    graph = parse_ir(path.read_text())
    check_boxes_and_edges(graph, read_svg(graph_to_svg(graph)))


def test_every_node_is_one_box_in_program_order_with_its_attributes() -> None:
    graph = parse_ir("""graph(%x : Tensor):
      %s : str = prim::Constant[value="a \\"quoted\\" {word} | <here>"]()
      %c : int[] = prim::Constant[value=[1, 2]]()
      %false : bool = prim::Constant[value=0]()
      %none : NoneType = prim::Constant()
      %y : Tensor = aten::sum(%x, %c, %false, %none)
      return (%y, %s)
    """)
    dot = graph_to_dot(graph)
    assert '[label="prim::Constant\\nvalue=\\"a \\\\\\"quoted\\\\\\" {word} | <here>\\""' in dot
    assert '[label="prim::Constant\\nvalue=[1, 2]"' in dot
    assert '[label="prim::Constant", tooltip="%none : NoneType = prim::Constant()"]' in dot
    assert re.findall(r'^\s*(n\d+) \[label="([^"\\]+)', dot, re.M) == [
        ("n0", "prim::Constant"), ("n1", "prim::Constant"), ("n2", "prim::Constant"), ("n3", "prim::Constant"),
        ("n4", "aten::sum")]


def test_quoting_keeps_text_literal() -> None:
    assert quote('say "hi"\\n\nnext') == '"say \\"hi\\"\\\\n\\nnext"'


def test_a_missing_dot_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setenv("PATH", os.devnull)
    with pytest.raises(GraphvizError, match=r"Graphviz's `dot` is not installed: apt-get install graphviz"):
        render_svg("digraph { a }")


@needs_dot
def test_dot_failing_names_its_message() -> None:
    with pytest.raises(GraphvizError, match=r"`dot -Tsvg` failed with exit status \d+: .*syntax error"):
        render_svg("digraph { a -> }")


@needs_dot
def test_the_lstm_cell_plan_looks_like_a_picture_in_a_browser(tmp_path) -> None:
    svg = tmp_path / "lstm_cell_plan.svg"
    svg.write_text(graph_to_svg(lstm_cell_plan()))
    try:
        png = screenshot(svg, tmp_path)
    except subprocess.CalledProcessError as error:
        raise AssertionError(f"chromium failed: {error.stderr.decode(errors='replace')[-2000:]}") from error
    assert len(png_colours(png)) > 8  # white, text, boxes, records, edges and their anti-aliasing: not blank


def test_the_readme_picture_is_todays_plan_of_the_demo_lstm_cell() -> None:
    """docs/lstm_cell_plan.svg, which the README shows (`tsjit svg examples/demo.py:lstm_cell --plan ...`), has
    the boxes and typed edges of the plan the executor makes today."""
    spec = importlib.util.spec_from_file_location("demo", REPOSITORY / "examples" / "demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    plan = tsjit.script(demo.lstm_cell).graph_for(*demo.example_inputs())
    picture = read_svg((REPOSITORY / "docs" / "lstm_cell_plan.svg").read_text())
    check_boxes_and_edges(plan, picture)
    assert picture.cluster_titled("prim::FusionGroup") and picture.cluster_titled("Subgraph")
