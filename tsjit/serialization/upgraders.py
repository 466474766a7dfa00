"""Operator upgraders: archives from before an operator changed keep the behaviour they were saved with.

An archive's `version` record says which operator semantics its code was written for (torch's
`_get_operator_version_map()`). Two changes matter to code that still compiles today:

- version 4: `torch.div` of integer tensors became true division; before, it truncated;
- version 5: `torch.full(size, 1)` without a dtype became an integer tensor; before, it was float.

When an archive is older than the change, every call of the changed operator is replaced by its upgrader, the
old behaviour written in TorchScript (as torch's upgraders_entry.cpp does), compiled once and inlined:

    %r : Tensor = aten::div(%a, %b)        ->    %f : bool = aten::is_floating_point(%a) ...
                                                 %r : Tensor = prim::If(...)   # true_divide, or trunc division
"""

from __future__ import annotations

import threading

from tsjit.frontend.ir_emitter import compile_source
from tsjit.frontend.resolver import NativeResolver
from tsjit.ir import types as T
from tsjit.ir.graph import Block, Graph, Node
from tsjit.passes.inliner import insert_graph

UPGRADER_SOURCE = '''
def div_Tensor_0_3(self: Tensor, other: Tensor) -> Tensor:
    if self.is_floating_point() or other.is_floating_point():
        return self.true_divide(other)
    return self.divide(other, rounding_mode="trunc")

def div_Scalar_0_3(self: Tensor, other: int) -> Tensor:
    if self.is_floating_point():
        return self.true_divide(other)
    return self.divide(other, rounding_mode="trunc")

def div__Tensor_0_3(self: Tensor, other: Tensor) -> Tensor:
    if self.is_floating_point() or other.is_floating_point():
        return self.true_divide_(other)
    return self.divide_(other, rounding_mode="trunc")

def div__Scalar_0_3(self: Tensor, other: int) -> Tensor:
    if self.is_floating_point():
        return self.true_divide_(other)
    return self.divide_(other, rounding_mode="trunc")

def full_0_4(size: List[int], fill_value: number, dtype: Optional[int], layout: Optional[int],
             device: Optional[Device], pin_memory: Optional[bool]) -> Tensor:
    if dtype is None:
        fill_value = float(fill_value)
    return torch.full(size, fill_value, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
'''

# operator -> (the version that changed it, the upgrader, the input types it applies to)
UPGRADERS: dict[str, tuple[int, str, tuple[type, ...] | None]] = {
    "aten::div.Tensor": (4, "div_Tensor_0_3", None),
    "aten::div.Scalar": (4, "div_Scalar_0_3", (T.TensorType, T.IntType)),
    "aten::div_.Tensor": (4, "div__Tensor_0_3", None),
    "aten::div_.Scalar": (4, "div__Scalar_0_3", (T.TensorType, T.IntType)),
    "aten::full": (5, "full_0_4", None),
}

_compiled: dict[str, Graph] = {}
_lock = threading.Lock()


def apply_upgraders(graph: Graph, version: int) -> bool:
    """Replace the calls of operators that changed after `version` by their old behaviour."""
    if version >= max(bumped for bumped, _, _ in UPGRADERS.values()):
        return False
    return _upgrade_block(graph.block, version)


def _upgrade_block(block: Block, version: int) -> bool:
    changed = False
    for node in list(block.nodes()):
        for inner in node.blocks:
            changed |= _upgrade_block(inner, version)
        upgrader = _upgrader_for(node, version)
        if upgrader is not None:
            _inline(node, upgrader)
            changed = True
    return changed


def _upgrader_for(node: Node, version: int) -> Graph | None:
    if node.kind.ns != "aten" or node.kind.name not in ("div", "div_", "full"):
        return None
    schema = node.maybe_schema()
    entry = UPGRADERS.get(schema.operator_name) if schema is not None else None
    if entry is None or version >= entry[0]:
        return None
    input_types = entry[2]
    if input_types is not None and not all(isinstance(v.type, t) for v, t in zip(node.inputs, input_types)):
        return None
    return upgrader_graph(entry[1])


def upgrader_graph(name: str) -> Graph:
    """The compiled graph of one upgrader (all of them compile together, once)."""
    with _lock:
        if not _compiled:
            for function in compile_source(UPGRADER_SOURCE, NativeResolver()):
                function.ensure_defined()
                _compiled[function.name] = function.graph
        return _compiled[name]


def _inline(node: Node, upgrader: Graph) -> None:
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        outputs = insert_graph(graph, upgrader, list(node.inputs))
    node.output().replace_all_uses_with(outputs[0])
    node.destroy()
