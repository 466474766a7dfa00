"""Which nodes draw random numbers (TorchScript's Node::isNondeterministic): the operators PyTorch tags
nondeterministic_seeded, except the dropout-like ones whose `train`/`training` input is a constant False.

Passes must neither merge such nodes (CSE) nor reorder them among themselves: each draws from the generator in
program order, and eager's results under a seed depend on that order."""

from __future__ import annotations

import torch

from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Node
from tsjit.ir.schema import FunctionSchema
from tsjit.ir.symbols import prim


def is_nondeterministic(node: Node) -> bool:
    """Whether the node draws random numbers."""
    if node.kind.ns != "aten":
        return False
    schema = node.maybe_schema()
    if schema is None or not _seeded(schema):
        return False
    names = [argument.name for argument in schema.arguments]
    for flag in ("train", "training"):
        if flag in names:
            train = node.inputs[names.index(flag)].node
            return not (train.kind is prim.Constant and constant_value(train) is False)
    return True


def _seeded(schema: FunctionSchema) -> bool:
    """Whether the dispatcher tags the operator nondeterministic_seeded: remembered per operator, as CSE asks it
    of every node it sees (and a JIT-only builtin, not in the dispatcher, costs a raised exception to find)."""
    name = schema.operator_name
    found = _SEEDED.get(name)
    if found is None:
        try:
            packet = getattr(torch.ops.aten, schema.name.split("::", 1)[1])
            overload = getattr(packet, schema.overload_name or "default")
            found = torch.Tag.nondeterministic_seeded in overload.tags
        except (AttributeError, RuntimeError):
            found = False  # a JIT-only builtin: not in the dispatcher, so not random
        _SEEDED[name] = found
    return found


_SEEDED: dict[str, bool] = {}
