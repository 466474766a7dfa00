"""Tracing fork and wait: `tsjit.fork`/`tsjit.wait` called by traced code are recorded as torch.jit.trace
records `torch.jit.fork`/`wait`, a prim::fork whose Subgraph is the trace of the forked call and an aten::wait on
its Future. The programs call `fork`/`wait` through this module's globals: tsjit's when tsjit traces, torch.jit's
when the oracle does (tsjit does not intercept torch.jit's own functions). The graphs are compared with
torch.jit's as text (each graph section numbered on its own), and the traces run, check and round-trip through
archives like eager PyTorch."""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import pytest
import torch

import tsjit
from tsjit.api.trace import trace
from tsjit.errors import TsjitError
from tsjit.ir.symbols import prim

jit = pytest.importorskip("torch.jit")
fork, wait = tsjit.fork, tsjit.wait  # what the traced programs call; `with_torch_jit` swaps in torch.jit's
WEIGHT = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


@contextlib.contextmanager
def with_torch_jit():
    """The programs call torch.jit's fork and wait (for torch.jit.trace, the oracle, and for eager runs)."""
    global fork, wait
    fork, wait = jit.fork, jit.wait
    try:
        yield
    finally:
        fork, wait = tsjit.fork, tsjit.wait


def oracle(function, *args, **kwargs):
    with with_torch_jit():
        return quietly(function, *args, **kwargs)


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def canonical(text: str) -> str:
    """Graph text without source comments, scopes and class name mangling, values numbered in order of appearance
    per section (a forked graph's values have their own names)."""
    text = re.sub(r"___torch_mangle_\d+\.", "", text)
    return "\nwith ".join(_renumbered(section) for section in text.split("\nwith "))


def _renumbered(section: str) -> str:
    section = re.sub(r"(, scope: [^\s#]+)?( # \S+:\d+:\d+)?$", "", section, flags=re.M)
    names: dict[str, str] = {}
    return re.sub(r"%([\w.]+)", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), section)


# ---- traced functions --------------------------------------------------------------------------------------------
def scale(a, b):
    return a * b + 1


def forks_and_computes_meanwhile(x, y):
    future = fork(scale, x, y)
    z = x - 1
    return wait(future) + z


def relu_and_sin(a):
    return a.relu(), a.sin()


def tuple_result(x):
    a, b = wait(fork(relu_and_sin, x))
    return a + b


def list_result(x):
    return wait(fork(lambda a: [a + 1, a], x))[0]


def negate_forked(a):
    return wait(fork(torch.neg, a)) * 2


def nested(x):
    outer = fork(negate_forked, x)
    other = fork(lambda a: a + 3, x)
    return wait(outer) + wait(other)


def nested_captures(x, y):
    def inner(a):
        return wait(fork(lambda: y * a)) + x

    return wait(fork(inner, x))


def captures_and_constants(x, y):
    w = x * 2
    first = fork(lambda a, b, k: b * WEIGHT + k, x, y, 3)  # `a` unused: not an input
    second = fork(lambda: w.sin())
    return wait(first) + wait(second)


def inputs_in_order_of_use(x, y):
    return wait(fork(lambda a, b: b * a, x, y))


def waits_on_a_future_of_the_caller(x):
    first = fork(torch.sin, x)
    second = fork(lambda: wait(first) + 1)
    return wait(second)


def waits_twice(x):
    future = fork(torch.sin, x)
    return wait(future) + wait(future)


def sizes_in_fork(x):
    return wait(fork(lambda a: a.view(a.size(0), -1) * a.shape[1], x))


def keyword_arguments(x):
    return wait(fork(torch.add, x, x, alpha=2))


FUNCTIONS = [forks_and_computes_meanwhile, tuple_result, list_result, nested, nested_captures,
             captures_and_constants, inputs_in_order_of_use, waits_on_a_future_of_the_caller, waits_twice,
             sizes_in_fork, keyword_arguments]


def example_inputs(function) -> tuple:
    count = function.__code__.co_argcount
    return tuple(torch.randn(2, 3) for _ in range(count))


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_functions_trace_as_torch_jit(function) -> None:
    inputs = example_inputs(function)
    expected = oracle(jit.trace, function, inputs).graph
    traced = quietly(trace, function, inputs)
    assert canonical(str(traced.graph)) == canonical(str(expected))
    torch.testing.assert_close(traced(*inputs), oracle(function, *inputs))
    other = tuple(torch.randn(2, 3) for _ in inputs)
    torch.testing.assert_close(traced(*other), oracle(function, *other))


def test_nested_forks_are_subgraphs_of_subgraphs() -> None:
    traced = quietly(trace, nested, (torch.randn(2, 3),))
    forks = [node for node in traced.graph.nodes() if node.kind is prim.fork]
    assert len(forks) == 2
    inner = [node for node in forks[0].g("Subgraph").nodes() if node.kind is prim.fork]
    assert len(inner) == 1 and [str(n.kind) for n in inner[0].g("Subgraph").nodes()] == ["aten::neg"]


def test_check_inputs_of_other_sizes() -> None:
    inputs = (torch.randn(2, 3), torch.randn(2, 3))
    traced = quietly(trace, nested_captures, inputs, check_inputs=[(torch.randn(4, 5), torch.randn(4, 5))])
    other = (torch.randn(4, 5), torch.randn(4, 5))
    torch.testing.assert_close(traced(*other), oracle(nested_captures, *other))


# ---- traced modules ----------------------------------------------------------------------------------------------
class Sub(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, a):
        return self.lin(a).relu()

    def other(self, a):
        return a + self.lin.weight.sum()


class Forking(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.p = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        submodule = fork(self.sub, x)
        method = fork(self.sub.other, x)
        own = fork(self.helper, x)
        return wait(submodule) + wait(method) + wait(own)

    def helper(self, x):
        return x * self.p


class ForksInSubmodule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Forking()

    def forward(self, x):
        a, b = wait(fork(lambda: (self.inner(x), x.cos())))
        return a - b


@pytest.mark.parametrize("cls", [Forking, ForksInSubmodule])
def test_modules_trace_as_torch_jit(cls) -> None:
    module = cls()
    x = torch.randn(2, 3)
    expected = oracle(jit.trace, module, (x,))
    traced = quietly(trace, module, (x,))
    assert canonical(str(traced.graph)) == canonical(str(expected.graph))
    for name, submodule in traced.named_modules():
        if name and not name.endswith("lin"):  # Linear's own GetAttrs come in another order (not about forks)
            expected_graph = expected.get_submodule(name)._c._get_method("forward").graph
            assert canonical(str(submodule.forward.graph)) == canonical(str(expected_graph)), name
    with torch.no_grad():
        torch.testing.assert_close(traced(x), oracle(module, x))


@pytest.mark.parametrize("loader", ["tsjit", "torch.jit"])
def test_archives_round_trip(loader) -> None:
    module = ForksInSubmodule()
    x = torch.randn(2, 3)
    traced = quietly(trace, module, (x,))
    function = quietly(trace, nested_captures, (x, x.cos()))
    cases = [(traced, (x,), oracle(module, x)), (function, (x, x.cos()), oracle(nested_captures, x, x.cos()))]
    for program, inputs, expected in cases:
        buffer = io.BytesIO()
        tsjit.save(program, buffer)
        buffer.seek(0)
        loaded = tsjit.load(buffer) if loader == "tsjit" else quietly(jit.load, buffer)
        with torch.no_grad():
            torch.testing.assert_close(loaded(*inputs), expected)


# ---- errors ------------------------------------------------------------------------------------------------------
def test_forked_calls_return_tensors() -> None:
    def returns_a_number(x):
        return wait(fork(lambda a: (a + 1, 3), x))[0]

    with pytest.raises(TsjitError, match="forked call returned int"):
        quietly(trace, returns_a_number, (torch.randn(2, 3),))
