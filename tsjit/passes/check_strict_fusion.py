"""CheckStrictFusion: a `with torch.jit.strict_fusion():` block (or `tsjit.strict_fusion()`) must be fused whole.

After fusion, the nodes between the block's prim::Enter and prim::Exit must all be prim::FusionGroup nodes:

    %sf : __torch__.torch.jit.strict_fusion = prim::CreateObject()
    %1 : NoneType = prim::Enter(%sf)
    %y : Tensor = prim::FusionGroup_0(%x)          # fine
    %s : Tensor = aten::sum(%y, %none)             # "Found unfused operators: aten::sum(...)"
    %2 : Tensor = prim::Exit(%sf)

The error points at the `strict_fusion()` call, as TorchScript's does. The check never changes the graph; the
graph executor runs it after fusion, so with fusion off (`tsjit.fuser("none")`) every operator in such a block
is reported, as torch.jit reports them where its fusers do not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tsjit.errors import CompileError
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import prim
from tsjit.ir.types import ClassType

STRICT_FUSION_CLASS = "__torch__.torch.jit.strict_fusion"
_MANGLE = re.compile(r"\.___torch_mangle_\d+")


def check_strict_fusion(graph: Graph) -> bool:
    """Raise a CompileError naming the unfused operators of the first strict_fusion block that has some;
    returns False (nothing changes)."""
    for node in graph.all_nodes():
        if node.kind is prim.Enter and is_strict_fusion(node.inputs[0].type):
            _check_block(node)
    return False


def is_strict_fusion(type_) -> bool:
    """Whether `type_` is the strict_fusion class (a mangled copy of its name too: torch.jit's and tsjit's
    classes compile to the same name)."""
    return isinstance(type_, ClassType) and _MANGLE.sub("", type_.qualified_name) == STRICT_FUSION_CLASS


def _check_block(enter: Node) -> None:
    unfused = [node for node in _nodes_inside(enter) if node.kind is not prim.FusionGroup]
    if unfused:
        lines = "".join(f"\t{_describe(n)}\n" for n in unfused)
        raise CompileError(f"Found unfused operators: \n{lines}", enter.inputs[0].node.source_range)


def _nodes_inside(enter: Node) -> Iterator[Node]:
    """The nodes after `enter` up to its block's prim::Exit (or the block's end)."""
    end = enter.owning_block.return_node if enter.owning_block is not None else None
    node = enter.next
    while node is not None and node is not end and node.kind is not prim.Exit:
        yield node
        node = node.next


def _describe(node: Node) -> str:
    schema = node.maybe_schema()
    return str(schema) if schema is not None else str(node.kind)
