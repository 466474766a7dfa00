"""`tsjit diff` run as a subprocess: one pass's effect as a picture, removed nodes red and added ones green on
IR text and on programs; unknown passes are usage errors."""

from __future__ import annotations

import sys
from pathlib import Path

from cli_runner import REPOSITORY, tsjit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ir"))
from svg_picture import ir_node_titles, needs_dot, read_svg  # noqa: E402  (tests/ir on sys.path)

REPEATED = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::mul(%x, %y)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)
"""


def boxes(picture, prefix: str, style: str) -> list[str]:
    return [picture.nodes[t].texts[0] for t in ir_node_titles(picture, prefix) if style in picture.nodes[t].classes]


@needs_dot
def test_cse_on_ir_text_colours_the_repeated_product(tmp_path):
    graph, out = tmp_path / "g.ir", tmp_path / "cse.svg"
    graph.write_text(REPEATED)
    result = tsjit("diff", "-p", "cse", str(graph), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr == "eliminate_common_subexpression: changed, 1 nodes removed, 0 added\n"
    picture = read_svg(out.read_text())
    assert boxes(picture, "before_", "removed") == ["aten::mul"]
    assert boxes(picture, "before_", "kept") == ["prim::Constant", "aten::mul", "aten::add"]
    assert boxes(picture, "after_", "kept") == ["prim::Constant", "aten::mul", "aten::add"]


@needs_dot
def test_the_fuser_on_the_lstm_cell_adds_one_group(tmp_path):
    out = tmp_path / "fused.svg"
    result = tsjit("diff", "-p", "fuse_graph", str(REPOSITORY / "docs" / "lstm_cell.ir"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    picture = read_svg(out.read_text())
    fused = ["aten::add", "aten::add", "aten::add"]
    pointwise = ["aten::sigmoid", "aten::sigmoid", "aten::tanh", "aten::sigmoid", "aten::mul", "aten::mul",
                 "aten::add", "aten::tanh", "aten::mul"]
    assert boxes(picture, "before_", "removed") == [
        "prim::Constant", "prim::Constant", *fused, "aten::chunk", "prim::ListUnpack", *pointwise]
    assert boxes(picture, "after_", "added") == [
        "prim::FusionGroup", "prim::Constant", *fused, "prim::ConstantChunk", *pointwise]
    assert boxes(picture, "after_", "kept") == ["aten::t", "aten::mm", "aten::t", "aten::mm", "prim::TupleConstruct"]
    (group,), (subgraph,) = picture.cluster_titled("prim::FusionGroup"), picture.cluster_titled("Subgraph")
    assert group.contains(subgraph)


def test_a_pass_on_an_archive_as_dot(net_archive):
    result = tsjit("diff", "-p", "inline_calls", str(net_archive), "--dot")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("inline_calls: changed, 1 nodes removed, ")
    assert 'subgraph "cluster_before_" {' in result.stdout and 'class="removed"' in result.stdout


def test_unknown_and_missing_passes_are_usage_errors(tmp_path):
    graph = tmp_path / "g.ir"
    graph.write_text(REPEATED)
    unknown = tsjit("diff", "-p", "no_such_pass", str(graph))
    assert unknown.returncode == 2 and "tsjit diff: error: unknown pass 'no_such_pass'" in unknown.stderr
    missing = tsjit("diff", str(graph))
    assert missing.returncode == 2 and "the following arguments are required: -p/--pass" in missing.stderr
