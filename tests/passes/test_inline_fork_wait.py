"""inline_fork_wait: forks whose future is only waited on run their subgraph where they are forked."""

from __future__ import annotations

import torch

import tsjit
from tsjit.passes.inline_fork_wait import inline_fork_wait
from tsjit.passes.inliner import inline_calls
from tsjit.passes.pass_runner import run_pass
from tsjit.runtime.run import run_graph


def _negate(x: torch.Tensor) -> torch.Tensor:
    return -x


def _fork_twice(x: torch.Tensor) -> torch.Tensor:
    inner = torch.jit.fork(_negate, x)
    return torch.jit.wait(inner) * 2


def _nested(x: torch.Tensor) -> torch.Tensor:
    outer = torch.jit.fork(_fork_twice, x)
    return torch.jit.wait(outer) - x


def _kept(x: torch.Tensor):
    futures = [torch.jit.fork(_negate, x)]
    return torch.jit.wait(futures[0])


def _kinds(graph) -> set[str]:
    return {str(n.kind) for n in graph.all_nodes()}


def test_nested_forks_become_sequential_and_compute_the_same():
    graph = tsjit.script(_nested).graph.copy()
    assert run_pass(inline_fork_wait, graph) is True
    assert run_pass(inline_calls, graph) is True  # the inlined body calls the function that forks again
    assert run_pass(inline_fork_wait, graph) is True
    run_pass(inline_calls, graph)
    assert run_pass(inline_fork_wait, graph) is False
    graph.lint()
    assert not _kinds(graph) & {"prim::fork", "aten::wait"}, graph
    x = torch.randn(3)
    assert torch.equal(run_graph(graph, x), _nested(x))


def test_a_future_that_is_not_only_waited_on_stays():
    graph = tsjit.script(_kept).graph.copy()
    assert run_pass(inline_fork_wait, graph) is False
    assert "prim::fork" in _kinds(graph)
