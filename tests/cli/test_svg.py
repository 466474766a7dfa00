"""`tsjit svg` run as a subprocess: a program's graph or optimized plan as a picture (read back from the SVG),
DOT source without Graphviz, and the errors of a missing `dot` and of usage."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from cli_programs import lstm_cell
from cli_runner import REPOSITORY, program, tsjit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ir"))
from svg_picture import ir_node_titles, needs_dot, read_svg  # noqa: E402  (tests/ir on sys.path)

import tsjit as ts  # noqa: E402

LSTM_INPUTS = ["3x10", "(3x20,3x20)", "80x10", "80x20", "80", "80"]
LSTM_IR = REPOSITORY / "docs" / "lstm_cell.ir"


@needs_dot
def test_the_lstm_cell_plan_as_a_picture(tmp_path):
    out = tmp_path / "plan.svg"
    result = tsjit("svg", program("lstm_cell"), "--plan", "--inputs", *LSTM_INPUTS, "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    picture = read_svg(out.read_text())
    inputs = (torch.randn(3, 10), (torch.randn(3, 20), torch.randn(3, 20)), torch.randn(80, 10),
              torch.randn(80, 20), torch.randn(80), torch.randn(80))
    plan = ts.script(lstm_cell).graph_for(*inputs)
    boxes = [picture.nodes[title].texts[0] for title in ir_node_titles(picture)]
    assert boxes == [str(node.kind) for node in plan.nodes_with_held_graphs()]
    (group,) = picture.cluster_titled("prim::FusionGroup")  # and its Subgraph inside (the profiling executor's
    assert any(group.contains(subgraph) for subgraph in picture.cluster_titled("Subgraph"))  # fallback has one)


@needs_dot
def test_an_archive_to_stdout_with_the_installed_script(net_archive):
    result = tsjit("svg", str(net_archive), script=True)
    assert result.returncode == 0, result.stderr
    picture = read_svg(result.stdout)
    boxes = [picture.nodes[title].texts[0] for title in ir_node_titles(picture)]
    assert boxes == [str(node.kind) for node in ts.load(str(net_archive)).forward.graph.nodes()]
    assert "prim::CallMethod" in boxes


def test_dot_source_needs_no_graphviz(tmp_path):
    result = tsjit("svg", str(LSTM_IR), "--dot", PATH=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith('digraph "tsjit" {') and '[label="aten::chunk"' in result.stdout
    missing = tsjit("svg", str(LSTM_IR), "-o", str(tmp_path / "x.svg"), PATH=str(tmp_path))
    assert missing.returncode == 1 and not (tmp_path / "x.svg").exists()
    assert missing.stderr == "tsjit svg: error: Graphviz's `dot` is not installed: apt-get install graphviz\n"


@pytest.mark.parametrize("arguments, message", [
    (["--plan"], "--plan needs example inputs: --inputs SPEC..."),
    (["--plan", "--inlined", "--inputs", "2"], "--plan and --inlined are different graphs: choose one"),
    (["--inlined", "IR"], "--plan and --inlined need a program (an archive or file.py:name), not IR text"),
])
def test_usage_errors_exit_2(arguments, message):
    named = [str(LSTM_IR) if a == "IR" else a for a in arguments]
    result = tsjit("svg", *(named if "IR" in arguments else [program("scale"), *named]))
    assert result.returncode == 2 and result.stderr.splitlines()[-1] == f"tsjit svg: error: {message}"


def test_unparsable_ir_names_the_file(tmp_path):
    bad = tmp_path / "bad.ir"
    bad.write_text("graph(%x : Tensor):\n  %y = \n")
    result = tsjit("svg", str(bad), "--dot")
    assert result.returncode == 1 and result.stderr.startswith(f"tsjit svg: error: cannot parse {bad}: ")
    assert result.stdout == ""
