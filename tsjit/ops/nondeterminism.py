"""Which nodes draw random numbers (TorchScript's Node::isNondeterministic): the operators PyTorch tags
nondeterministic_seeded, except the dropout-like ones whose `train`/`training` input is a constant False.

Passes must neither merge such nodes (CSE) nor reorder them among themselves: each draws from the generator in
program order, and eager's results under a seed depend on that order."""

from __future__ import annotations

import torch

from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Node
from tsjit.ir.symbols import prim


def is_nondeterministic(node: Node) -> bool:
    """Whether the node draws random numbers."""
    if node.kind.ns != "aten":
        return False
    schema = node.maybe_schema()
    if schema is None:
        return False
    try:
        packet = getattr(torch.ops.aten, node.kind.name)
        overload = getattr(packet, schema.overload_name or "default")
    except (AttributeError, RuntimeError):
        return False  # a JIT-only builtin: not in the dispatcher, so not random
    if torch.Tag.nondeterministic_seeded not in overload.tags:
        return False
    names = [argument.name for argument in schema.arguments]
    for flag in ("train", "training"):
        if flag in names:
            train = node.inputs[names.index(flag)].node
            return not (train.kind is prim.Constant and constant_value(train) is False)
    return True
