"""Tracing nn.Modules: a ScriptModule mirroring the hierarchy, parameters and buffers read through prim::GetAttr,
submodule calls kept as prim::CallMethod of methods named forward, forward1, ... (as torch.jit.trace_module
does), several methods in one module, and results that match eager PyTorch."""

from __future__ import annotations

import collections
import re
import warnings

import pytest
import torch
from torch import nn

from tsjit.api.module import RecursiveScriptModule, ScriptMethod, ScriptModule
from tsjit.api.trace import trace, trace_module
from tsjit.ir.symbols import prim

jit = pytest.importorskip("torch.jit")


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x, k: int = 2, t=None):
        return (x * self.w + k, x) if t is None else (x + t, t)


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.s = Sub()
        self.p = nn.Parameter(torch.randn(3))
        self.register_buffer("b", torch.ones(3))
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])

    def forward(self, x):
        a, _ = self.s(x)
        b, _ = self.s(x, 3)
        c, _ = self.s(x, t=self.p)
        return self.layers[1](self.layers[0](a + b + c + self.b))

    def scaled(self, x):
        return self.s(x)[0] * 2


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def calls(graph) -> list[tuple[str, str]]:
    return [(node.inputs[0].type.name, node.s("name")) for node in graph.nodes() if node.kind is prim.CallMethod]


@pytest.fixture
def top() -> Top:
    torch.manual_seed(0)
    return Top()


def test_result_is_a_script_module_mirroring_the_hierarchy(top: Top):
    traced = trace(top, torch.randn(3))
    assert isinstance(traced, RecursiveScriptModule) and isinstance(traced.s, ScriptModule)
    assert traced.state_dict().keys() == top.state_dict().keys()
    assert traced.p is top.p and traced.layers[0].weight is top.layers[0].weight
    # mangled if Top was traced before in the process: each trace makes a type of its own, as torch.jit.trace does
    assert re.fullmatch(r"__torch__\.test_tracer_modules\.(___torch_mangle_\d+\.)?Top", str(traced._c.type))


def test_traced_module_matches_eager(top: Top):
    traced = trace(top, torch.randn(3))
    x = torch.randn(3)
    assert torch.allclose(traced(x), top(x))


def test_each_call_of_a_submodule_is_a_method(top: Top):
    traced = trace(top, torch.randn(3))
    assert calls(traced.graph) == [("Sub", "forward"), ("Sub", "forward1"), ("Sub", "forward2"),
                                   ("Linear", "forward"), ("Linear", "forward")]
    assert {"forward", "forward1", "forward2"} <= set(traced.s._c.type.methods)


def test_call_method_graphs_are_torch_jits(top: Top):
    ours = trace(top, torch.randn(3))
    theirs = quietly(jit.trace, top, torch.randn(3))
    for method in ("forward", "forward1"):
        expected = collections.Counter(n.kind() for n in theirs.s._c._get_method(method).graph.nodes())
        assert collections.Counter(str(n.kind) for n in getattr(ours.s, method).graph.nodes()) == expected


def test_unused_results_of_a_method_are_dropped(top: Top):
    """Sub returns (x * w + k, x): the caller uses only the first, and x is its own input anyway."""
    schema = trace(top, torch.randn(3)).s.forward.schema
    assert [a.name for a in schema.arguments] == ["self", "x"] and str(schema.returns[0].type) == "Tensor"
    traced = trace(top, torch.randn(3))
    assert prim.TupleConstruct not in [n.kind for n in traced.s.forward.graph.nodes()]


def test_parameters_are_read_with_get_attr(top: Top):
    traced = trace(top, torch.randn(3))
    reads = [n.s("name") for n in traced.s.forward.graph.nodes() if n.kind is prim.GetAttr]
    assert reads == ["w"]
    chains = [(n.inputs[0].debug_name, n.s("name")) for n in traced.graph.nodes() if n.kind is prim.GetAttr]
    assert chains == [("self", "s"), ("self", "p"), ("self", "b"), ("self", "layers"), ("layers", "0"),
                      ("layers", "1")]


def test_several_methods_trace_into_one_module(top: Top):
    traced = trace_module(top, {"forward": torch.randn(3), "scaled": torch.randn(3)})
    x = torch.randn(3)
    assert torch.allclose(traced.scaled(x), top.scaled(x)) and torch.allclose(traced(x), top(x))
    assert calls(traced.scaled.graph) == [("Sub", "forward3")]


def test_forward_of_a_module_traces_the_module(top: Top):
    assert isinstance(trace(top.forward, torch.randn(3)), ScriptModule)


def test_tracing_a_script_module_returns_it(top: Top):
    traced = trace(top, torch.randn(3))
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        assert trace(traced, torch.randn(3)) is traced


class InPlace(nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 2


class UsesInPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = InPlace()

    def forward(self, x):
        y = self.inner(x)
        return x + y


def test_an_input_changed_in_place_is_returned_to_the_caller():
    traced = trace(UsesInPlace(), torch.zeros(2))
    assert str(traced.inner.forward.schema.returns[0].type) == "(Tensor, Tensor)"
    x = torch.zeros(2)
    assert torch.equal(traced(x), torch.full((2,), 3.0)) and torch.equal(x, torch.ones(2))


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = self.a

    def forward(self, x):
        return self.b(self.a(x))


def test_a_module_registered_twice_is_one_module():
    module = Shared()
    traced = trace(module, torch.randn(2))
    assert traced.a is traced.b
    x = torch.randn(2)
    assert torch.allclose(traced(x), module(x))


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.linear.register_forward_hook(lambda module, inputs, output: output * 10)
        self.register_forward_hook(lambda module, inputs, output: output + 1)

    def forward(self, x):
        return self.linear(x)


def test_hooks_run_in_the_trace_like_torch_jit():
    torch.manual_seed(0)
    module = Hooked()
    traced = trace(module, torch.randn(3))
    x = torch.randn(3)
    assert torch.allclose(traced(x), module(x))
    assert [n.kind.name for n in traced.graph.nodes() if n.kind is not prim.Constant][-3:] == [
        "CallMethod", "mul", "add"]


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4)

    def forward(self, x):
        output, (h, c) = self.lstm(x)
        return output[-1] + h[0], c


def test_tuple_results_of_submodules_are_unpacked():
    torch.manual_seed(0)
    module = Recurrent()
    traced = quietly(trace, module, torch.randn(5, 2, 3))
    assert str(traced.lstm.forward.graph.outputs[0].type).startswith("(Float(5, 2, 4")
    x = torch.randn(7, 2, 3)
    expected = module(x)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(expected, traced(x)))


def test_scripted_submodules_keep_their_type():
    from tsjit.api.function import script

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = script(nn.Linear(2, 2))

        def forward(self, x):
            return self.inner(x).relu()

    module = Outer()
    traced = trace(module, torch.randn(2))
    assert traced.inner is module.inner
    x = torch.randn(2)
    assert torch.allclose(traced(x), module(x))


class Looping(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, x, n: int):
        for _ in range(n):
            x = self.linear(x)
        return x


class CallsScripted(nn.Module):
    def __init__(self):
        from tsjit.api.function import script

        super().__init__()
        self.inner = script(Looping())

    def forward(self, x):
        return self.inner(x, 3).relu()


METHOD_HOOKED = not {"get_tracing_state", "no_trace_running"}.isdisjoint(ScriptMethod.__call__.__code__.co_names)


@pytest.mark.xfail(not METHOD_HOOKED, reason="ScriptMethod.__call__ does not yet hand calls to the tracer (the "
                                             "hook in tsjit/api/module.py the tracer's report describes)")
def test_scripted_submodule_calls_keep_their_loop():
    torch.manual_seed(0)
    module = CallsScripted()
    traced = trace(module, torch.randn(2))
    assert calls(traced.graph) == [("Looping", "forward")]
    assert prim.Loop in [n.kind for n in traced.inlined_graph.all_nodes()]
    x = torch.randn(2)
    assert torch.allclose(traced(x), module(x))


def test_traced_module_saves_and_loads(top: Top, tmp_path):
    from tsjit.api.archive import load, save

    traced = trace(top, torch.randn(3))
    save(traced, tmp_path / "traced.pt")
    x = torch.randn(3)
    assert torch.allclose(load(tmp_path / "traced.pt")(x), top(x))
    assert torch.allclose(quietly(jit.load, tmp_path / "traced.pt")(x), top(x))


class Failing(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(2, 2)

    def forward(self, x):
        return self.inner(x).view(7)


def test_a_failing_trace_leaves_the_module_as_it_was():
    module = Failing()
    with pytest.raises(RuntimeError):
        trace(module, torch.randn(2))
    assert "forward" not in module.inner.__dict__
    assert module.inner(torch.randn(2)).shape == (2,)
