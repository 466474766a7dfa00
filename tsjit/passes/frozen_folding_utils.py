"""What the folding passes of frozen graphs share: reading constant inputs and installing folded tensors.

A frozen graph's parameters are tensor constants, so a pattern such as conv2d followed by batch_norm can be
computed into new weights at compile time when every parameter input of both nodes is a prim::Constant.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.ir.constants import constant_of
from tsjit.ir.graph import Node, Value
from tsjit.ir.symbols import prim


def constant_input(node: Node, name: str) -> Any:
    """The value of the node's input `name` if it is a constant, else NOT_CONSTANT."""
    return constant_of(node.named_input(name))


def all_parameters_constant(node: Node) -> bool:
    """Whether every input but the first (the data) is a constant."""
    return all(v.node.kind is prim.Constant for v in node.inputs[1:])


def only_use_is(value: Value, user: Node) -> bool:
    return len(value.uses) == 1 and value.uses[0].user is user


def set_constant_input(node: Node, name: str, tensor: torch.Tensor, suffix: str) -> None:
    """Make the node's input `name` a new tensor constant (inserted before it), named after the old input
    with `suffix` when the old one had a name."""
    old = node.named_input(name)
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        new = graph.insert_constant(tensor.detach())
    if old.has_debug_name():
        new.set_debug_name(old.debug_name + suffix)
    node.replace_input_with(old, new)
