"""ProfilingRecord: prim::profile nodes on the uses of tensors, recording the types the profiled runs see.

(seed: jit-overview.md "Profiling Programs": "prim::profile nodes are inserted on every use of a value by
ProfilingRecord::instrumentBlock. Every prim::profile node runs a lambda that uses a captured, initial type value
and the type of an incoming Tensor and merges the two into a refined TensorType".) Instrumenting a graph puts a
prim::profile in front of every use of a tensor-typed value, in every block, and one prim::profile without inputs
before the return, which counts the profiled runs:

    %y : Tensor = aten::mul(%x, %x)          %x.1 : Tensor = prim::profile(%x)
    return (%y)                        ->    %x.2 : Tensor = prim::profile(%x)
                                             %y : Tensor = aten::mul(%x.1, %x.2)
                                              = prim::profile()
                                             return (%y)

While the graph runs, each prim::profile merges the complete type of the tensor it passes (sizes, strides, dtype,
device, and requires_grad as autograd sees it: only while grad mode is on) into its `profiled_type` attribute, as
TensorType.merge does: what all runs agree on stays known, so two shapes give a dynamic dimension

    Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)  merged with  Float(5, 3, ...)  =  Float(*, 3, ...)

A None seen on an optional tensor sets `seen_none`. `remove_profile_nodes` and `specialize_types` turn the record
into value types for the optimizing passes (TorchScript's RemoveProfileNodesAndSpecializeTypes), and
`restore_types` takes them back once the passes that needed them (fusion, its guards) ran.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import torch

from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import TensorType, Type
from tsjit.runtime.operations import PROFILED_GRAPHS, Operation

PROFILED_TYPE = "profiled_type"
SEEN_NONE = "seen_none"


class ProfilingRecord:
    """A graph instrumented with prim::profile nodes, and how many profiled runs it still waits for."""

    def __init__(self, graph: Graph, num_profiled_runs: int):
        self.profiled_graph = graph
        self.remaining_runs = num_profiled_runs
        self._lock = threading.Lock()
        instrument_block(graph.block)
        with graph.insert_point_guard(graph.return_node):
            graph.insert_node(graph.create(prim.profile, (), 0))
        PROFILED_GRAPHS[graph] = weakref.WeakMethod(self.operation)

    def ready(self) -> bool:
        """Whether the profiled runs are done, so that the optimized graph can be built."""
        return self.remaining_runs <= 0

    def operation(self, node: Node) -> Operation:
        """The Operation of one of the graph's prim::profile nodes: the run counter, or a recorder."""
        if not node.inputs:
            return self._count_run
        return _Recorder(node, self._lock)

    def _count_run(self) -> None:
        with self._lock:
            self.remaining_runs -= 1


class _Recorder:
    """A prim::profile node's Operation: merges what it sees into the node's `profiled_type`, passes it on.

    The last observation is kept as a tuple (sizes, strides, dtype, device, requires_grad), so that a run
    seeing what the previous one saw costs a comparison; a new observation is merged into the attribute."""

    __slots__ = ("node", "lock", "seen")

    def __init__(self, node: Node, lock: threading.Lock):
        self.node, self.lock, self.seen = node, lock, None

    def __call__(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            observed = (value.shape, value.stride() if value.layout == torch.strided else None, value.dtype,
                        value.device, value.requires_grad and torch.is_grad_enabled())
            if observed != self.seen:
                self.record(observed, value)
        elif value is None:
            self.node.i_(SEEN_NONE, 1)
        return value

    def record(self, observed: tuple, tensor: torch.Tensor) -> None:
        type_ = _observed_types.get(observed)
        if type_ is None:
            type_ = TensorType.create_from_tensor(tensor).with_requires_grad(observed[4])
            if len(_observed_types) >= _OBSERVED_TYPES_SIZE:
                _observed_types.clear()
            _observed_types[observed] = type_
        with self.lock:
            if self.node.has_attribute(PROFILED_TYPE):
                type_ = self.node.ty(PROFILED_TYPE).merge(type_)
            self.node.ty_(PROFILED_TYPE, type_)
            self.seen = observed


# The type of each observation recorded lately, shared by all recorders: the profile nodes of a graph mostly see
# tensors of a few shapes (a 100-op chain on one input size: one), so each builds its TensorType once, not per node.
_OBSERVED_TYPES_SIZE = 1024
_observed_types: dict[tuple, TensorType] = {}


def instrument_block(block: Block) -> None:
    """A prim::profile in front of every use of a tensor-typed value by a node of `block` (and its blocks) and
    by its return. Constants are left alone: their types are known, and a traced Python number (a wrapped-number
    tensor constant) must stay a constant to promote as a number."""
    for node in [*block.nodes(), block.return_node]:
        for offset, value in enumerate(node.inputs):
            if isinstance(value.type, TensorType) and value.node.kind is not prim.Constant:
                _profile_use(node, offset, value)
        for inner in node.blocks:
            instrument_block(inner)


def _profile_use(node: Node, offset: int, value: Value) -> None:
    profile = node.graph.create(prim.profile, (value,)).insert_before(node)
    node.replace_input(offset, profile.outputs[0].set_type(value.type))


def profiled_types(graph: Graph) -> dict[Value, TensorType]:
    """What the profiled runs saw of each value, merged over its prim::profile nodes (those that ran)."""
    seen: dict[Value, TensorType] = {}
    for node in graph.all_nodes():
        if node.kind is prim.profile and node.inputs and node.has_attribute(PROFILED_TYPE):
            value, type_ = node.input(), node.ty(PROFILED_TYPE)
            seen[value] = seen[value].merge(type_) if value in seen else type_
    return seen


def remove_profile_nodes(graph: Graph) -> dict[Value, TensorType]:
    """Remove the prim::profile nodes, returning what they saw (`profiled_types`), for `specialize_types`."""
    seen = profiled_types(graph)
    for node in [n for n in graph.all_nodes() if n.kind is prim.profile]:
        if node.inputs:
            node.output().replace_all_uses_with(node.input())
        node.destroy()
    return seen


def specialize_types(seen: dict[Value, TensorType]) -> dict[Value, Type]:
    """Give each value still in its graph its profiled type where that refines its static type; returns the
    static types of those values, for `restore_types`."""
    static: dict[Value, Type] = {}
    for value, profiled in seen.items():
        if value.node.owning_block is None:
            continue  # removed by the passes run between the removal of the profile nodes and now
        if isinstance(value.type, TensorType) and profiled.is_subtype_of(value.type):
            static[value] = value.type
            value.set_type(profiled)
    return static


def restore_types(static: dict[Value, Type]) -> None:
    """Give the values the profiled types were given their static types again."""
    for value, type_ in static.items():
        value.set_type(type_)
