"""A FusionGroup made of a whole graph, for the kernel tests."""

from __future__ import annotations

import tsjit.runtime.fusion as fusion
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import prim
from tsjit.passes.graph_fuser import create_fusion_group


def fused(text: str):
    """The graph of `text` with all its operators in one FusionGroup, and that group's Operation."""
    graph = parse_ir(text)
    group = create_fusion_group(graph, [n for n in graph.nodes() if n.kind is not prim.Constant])
    graph.lint()
    return group, fusion.fusion_group_operation(group)
