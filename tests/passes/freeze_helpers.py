"""Shared by the freezing tests: torch.jit as the oracle (skipped where it is missing) and node-kind lists."""

import pytest
import torch

import tsjit


def torch_jit():
    """torch.jit, or skip the test."""
    jit = getattr(torch, "jit", None)
    if jit is None or not hasattr(jit, "freeze"):
        pytest.skip("torch.jit.freeze is not available")
    return jit


def kinds(graph) -> list[str]:
    """The kinds of a graph's nodes (nested blocks included), constants left out: torch.jit and tsjit pool and
    order constants differently."""
    if isinstance(graph, tsjit.Graph):
        found = [str(node.kind) for node in graph.all_nodes()]
    else:
        found = list(_torch_kinds(graph.nodes()))
    return [kind for kind in found if kind != "prim::Constant"]


def _torch_kinds(nodes):
    for node in nodes:
        yield node.kind()
        for block in node.blocks():
            yield from _torch_kinds(block.nodes())


def freeze_both(module: torch.nn.Module, **kwargs):
    """(tsjit's frozen module, torch.jit's frozen module) of an eval-mode module."""
    jit = torch_jit()
    module = module.eval()
    return tsjit.freeze(tsjit.script(module), **kwargs), jit.freeze(jit.script(module), **kwargs)
