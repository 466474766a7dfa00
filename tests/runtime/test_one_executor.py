"""A compiled function's runtime (its GraphExecutor and plan cache) is built once, whichever way it is called."""

from __future__ import annotations

import io

import torch

import tsjit
from tsjit.runtime.function import runtime_function


class Counter(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 + 1

    @torch.jit.export
    def twice(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward(x) + self.forward(x)


def test_a_method_has_one_executor_through_every_path():
    scripted = tsjit.script(Counter())
    x = torch.randn(3)
    method = scripted._c.type.methods["twice"]
    expected = x * 4 + 2
    torch.testing.assert_close(scripted.twice(x), expected)          # ScriptMethod on the module
    executor = runtime_function(method).executor
    torch.testing.assert_close(scripted._c.twice(x), expected)       # the runtime object's bound Method
    torch.testing.assert_close(method(scripted._c, x), expected)     # the GraphFunction itself
    assert runtime_function(method).executor is executor


def test_a_script_function_and_its_graph_function_share_one_executor():
    def f(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    scripted = tsjit.script(f)
    x = torch.randn(2)
    torch.testing.assert_close(scripted(x), x + 1)
    torch.testing.assert_close(scripted.graph_function(x), x + 1)
    assert scripted._runtime_function() is runtime_function(scripted.graph_function)


def test_a_loaded_module_runs_on_one_executor_per_method():
    buffer = io.BytesIO()
    tsjit.save(tsjit.script(Counter()), buffer)
    loaded = tsjit.load(io.BytesIO(buffer.getvalue()))
    x = torch.randn(3)
    torch.testing.assert_close(loaded(x), x * 2 + 1)
    forward = loaded._c.type.methods["forward"]
    executor = runtime_function(forward).executor
    torch.testing.assert_close(loaded._c.forward(x), x * 2 + 1)
    assert runtime_function(forward).executor is executor


def test_the_executor_runs_the_optimized_graph_without_a_copy_of_its_own():
    """Every plan copies the graph it starts from, so the runtime Function shares the optimized graph callers
    inline (as C++'s GraphFunction shares it with its executor): one copy less on every first call."""
    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    scripted = tsjit.script(f)
    optimized = scripted.graph_function.optimized_graph()
    before = str(optimized)
    torch.testing.assert_close(scripted(torch.ones(2)), torch.full((2,), 2.0))
    assert runtime_function(scripted.graph_function).graph is optimized
    assert str(optimized) == before
