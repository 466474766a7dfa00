"""The one shape of a pass test (STYLE.md "Text is the test language"):

    graph = check_pass(eliminate_dead_code, '''
    graph(%x : Tensor):
      %y : Tensor = aten::neg(%x)
      return (%x)''', absent=["aten::neg"])

IR text in, the pass run through run_pass (so TSJIT_LINT applies), the `changed` flag asserted and no change on a
second run, the graph linted, the output checked (`present`: lines that must appear in this order, each a
substring; `absent`: substrings that must not appear), and the graph run before and after on random inputs
(made from the input types, or given as `inputs`) with the results compared. `oracle` names a torch.jit pass
(`torch._C._jit_pass_dce`) to run on the same text parsed by torch._C.parse_ir: the node kinds must agree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.passes.pass_runner import run_pass
from tsjit.runtime.run import run_graph


def check_pass(pass_fn: Callable[..., bool], text: str, *, changed: bool = True, present: Sequence[str] = (),
               absent: Sequence[str] = (), inputs: Sequence[tuple] | None = None, oracle: str | None = None,
               run: bool = True, **kwargs: Any) -> Graph:
    """Run `pass_fn(graph, **kwargs)` on the graph of `text` and check it as the module docstring says."""
    original, graph = parse_ir(text), parse_ir(text)
    assert run_pass(pass_fn, graph, **kwargs) is changed, f"changed should be {changed}:\n{graph}"
    assert run_pass(pass_fn, graph, **kwargs) is False, f"a second run changed the graph again:\n{graph}"
    graph.lint()
    file_check(str(graph), present, absent)
    if oracle is not None:
        assert kinds(graph) == torch_kinds(text, oracle), f"torch.jit's {oracle} disagrees:\n{graph}"
    if run:
        for args in inputs if inputs is not None else random_inputs(original):
            assert_same(run_graph(graph, *args, optimize=False), run_graph(original, *args, optimize=False))
    return graph


def file_check(text: str, present: Sequence[str], absent: Sequence[str]) -> None:
    """`present` appear in this order (each after the previous one's line); `absent` appear nowhere."""
    lines, position = text.splitlines(), 0
    for pattern in present:
        found = next((i for i in range(position, len(lines)) if pattern in lines[i]), None)
        assert found is not None, f"{pattern!r} not found after line {position} of:\n{text}"
        position = found + 1
    for pattern in absent:
        assert pattern not in text, f"{pattern!r} should be gone from:\n{text}"


def kinds(graph: Graph) -> list[str]:
    return [str(node.kind) for node in graph.all_nodes()]


def torch_kinds(text: str, oracle: str) -> list[str]:
    """The node kinds (nested blocks included, in print order) after torch.jit's pass on the same text."""
    graph = torch._C.parse_ir(text)
    getattr(torch._C, oracle)(graph)
    return [node.kind() for node in _torch_nodes(graph.block())]


def _torch_nodes(block) -> list:
    nodes = []
    for node in block.nodes():
        nodes.append(node)
        for inner in node.blocks():
            nodes += _torch_nodes(inner)
    return nodes


def random_inputs(graph: Graph, count: int = 3, seed: int = 0) -> list[tuple]:
    """`count` argument tuples for the graph's inputs, from their types (tensors of their refined sizes and
    dtype, or 2x3 floats)."""
    generator = random.Random(seed)
    torch.manual_seed(seed)
    return [tuple(_random_value(v.type, generator) for v in graph.inputs) for _ in range(count)]


def _random_value(type_: T.Type, generator: random.Random) -> Any:
    if isinstance(type_, T.TensorType):
        sizes = [s if s is not None else 3 for s in type_.sizes] if type_.sizes is not None else [2, 3]
        dtype = type_.dtype or torch.float32
        if dtype.is_floating_point:
            return torch.randn(sizes, dtype=dtype)
        return torch.randint(0, 5, sizes).to(dtype)
    if isinstance(type_, T.BoolType):
        return generator.random() < 0.5
    if isinstance(type_, T.IntType):
        return generator.randint(0, 5)
    if isinstance(type_, T.FloatType):
        return generator.uniform(-2, 2)
    if isinstance(type_, T.TupleType):
        return tuple(_random_value(t, generator) for t in type_.elements)
    raise NotImplementedError(f"no random input of type {type_}: give `inputs`")


def assert_same(actual: Any, expected: Any) -> None:
    """Equal results: tensors close (NaNs equal, dtypes and shapes exact), containers element by element."""
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected, equal_nan=True)
    elif isinstance(expected, tuple | list):
        assert type(actual) is type(expected) and len(actual) == len(expected), f"{actual!r} != {expected!r}"
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, float) and expected != expected:
        assert actual != actual, f"{actual!r} != nan"
    else:
        assert actual == expected and type(actual) is type(expected), f"{actual!r} != {expected!r}"
