"""tsjit living beside torch.jit: torch.jit.trace over tsjit code, tsjit over torch.jit's compiled objects.

- `torch.jit.trace` of a module holding a tsjit-scripted submodule, or of a function calling a tsjit function,
  records the operators tsjit runs and passes torch.jit's own trace check. It once killed the process (a probe
  under a dispatch mode, stopped mid-call while torch.jit's tracer recorded), so it runs in a subprocess: a
  crash fails the test instead of killing pytest.
- tsjit.script takes modules holding torch.jit-scripted or traced submodules, calls of torch.jit-scripted
  functions, and those objects themselves; tsjit.trace takes such submodules; the results are eager's.
- tsjit.trace over Python code calling torch.jit's compiled functions (scripted or traced) records calls of their
  converted graphs, and calls of a torch.jit submodule's methods as prim::CallMethod: never their results as
  constants, so the trace runs as eager does on other inputs.
- torch.compile over a tsjit function, a tsjit module and a function or module loaded from an archive compiles,
  fullgraph=True included (skipped where torch.compile cannot run).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch._dynamo  # noqa: F401  (before any trace: see test_torch_compile_over_tsjit_modules_...)

import tsjit

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")

ROOT = Path(__file__).resolve().parents[2]

TORCH_JIT_TRACES_TSJIT = textwrap.dedent("""
    import torch
    import tsjit

    class Inner(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) * 2 + x.sum(0)

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = tsjit.script(Inner())
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.inner(self.linear(x))

    @tsjit.script
    def scaled(x, y):
        return torch.tanh(x) * y - 1

    def calls_tsjit(x, y):
        return scaled(x, y) + 1

    x, y = torch.randn(4, 3), torch.randn(4, 3)
    model = Outer()
    model(x)                      # plans compiled before the trace, with and without grad (fused kernels)
    with torch.no_grad():
        model(x)
    traced = torch.jit.trace(model, x)   # with torch.jit's check: a second trace, without grad
    print("module", torch.allclose(traced(y), model(y)))
    print("kinds", sorted({node.kind() for node in traced.inlined_graph.nodes()} & {"aten::relu", "aten::sum"}))
    traced_function = torch.jit.trace(calls_tsjit, (x, y))
    print("function", torch.allclose(traced_function(y, x), calls_tsjit(y, x)))
""")


def test_torch_jit_trace_over_tsjit_code_never_crashes(tmp_path) -> None:
    program = tmp_path / "traces_tsjit.py"  # a file: scripting reads the source
    program.write_text(TORCH_JIT_TRACES_TSJIT)
    done = subprocess.run([sys.executable, str(program)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"exit status {done.returncode}:\n{done.stderr[-3000:]}"
    assert done.stdout.split("\n")[:3] == ["module True", "kinds ['aten::relu', 'aten::sum']", "function True"]


class Sub(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1


@torch.jit.script
def torch_jit_helper(x):
    return x - 1


@torch.jit.script
def torch_jit_function(x, n: int = 2):
    return torch_jit_helper(x) * n


class Holder(torch.nn.Module):
    def __init__(self, sub):
        super().__init__()
        self.sub = sub

    def forward(self, x):
        return torch_jit_function(self.sub(x)) + torch_jit_function(x, 3)


def _submodules():
    return {"torch.jit.script": torch.jit.script(Sub()), "torch.jit.trace": torch.jit.trace(Sub(), torch.ones(5))}


@pytest.mark.parametrize("how", ["torch.jit.script", "torch.jit.trace"])
def test_tsjit_script_takes_torch_jit_submodules_and_functions(how) -> None:
    model = Holder(_submodules()[how])
    scripted = tsjit.script(model)
    x = torch.randn(5)
    assert torch.equal(scripted(x), model(x))
    assert isinstance(scripted.sub, tsjit.ScriptModule)


class TracedHolder(torch.nn.Module):
    def __init__(self, sub):
        super().__init__()
        self.sub = sub
        self.linear = torch.nn.Linear(5, 5)

    def forward(self, x):
        return self.sub(self.linear(x)) * 2


@pytest.mark.parametrize("how", ["torch.jit.script", "torch.jit.trace"])
def test_tsjit_trace_takes_torch_jit_submodules(how) -> None:
    """The submodule runs as the tsjit module it converts to, so the trace calls it (prim::CallMethod)."""
    model = TracedHolder(_submodules()[how])
    x, y = torch.randn(5), torch.randn(5)
    forward = vars(model.sub).get("forward")
    traced = tsjit.trace(model, x)
    assert torch.equal(traced(y), model(y)) and isinstance(traced.sub, tsjit.ScriptModule)
    calls = [n for n in traced.graph.nodes() if n.kind == "prim::CallMethod"]
    assert [call.inputs[0].debug_name for call in calls] == ["linear", "sub"]
    assert vars(model.sub).get("forward") is forward  # the torch.jit module is given back as it was


def test_tsjit_script_takes_torch_jit_objects_themselves() -> None:
    x = torch.randn(4)
    function = tsjit.script(torch_jit_function)
    assert torch.equal(function(x), torch_jit_function(x)) and torch.equal(function(x, n=5), torch_jit_function(x, 5))
    assert tsjit.script(torch_jit_function) is not None and str(function.schema) == str(torch_jit_function.schema)
    module = torch.jit.script(Sub())
    assert torch.equal(tsjit.script(module)(x), module(x))


# ---- tsjit.trace over calls of torch.jit's functions and methods ------------------------------------------------
@torch.jit.script
def torch_jit_relu_add(x, y):
    return torch.relu(x) + y * 2


torch_jit_traced = torch.jit.trace(lambda a: a * a + 1, torch.ones(3))


def calls_torch_jit_script(x):
    return torch_jit_relu_add(x, x + 1).sin()


def calls_torch_jit_trace(x):
    return torch_jit_traced(x).exp()


def calls_with_control_flow(x):
    return torch_jit_function(x, n=4) + torch_jit_function(x.abs())


@pytest.mark.parametrize("model", [calls_torch_jit_script, calls_torch_jit_trace, calls_with_control_flow])
def test_tsjit_trace_records_calls_of_torch_jit_functions(model) -> None:
    traced = tsjit.trace(model, (torch.randn(3),))
    kinds = [node.kind for node in traced.graph.nodes()]
    assert "prim::CallFunction" in kinds
    assert "CPUFloatType{3}" not in str(traced.graph)  # no result baked in as a constant
    for _ in range(3):
        x = torch.randn(3)
        assert torch.allclose(traced(x), model(x))


class ExportingSub(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1

    @torch.jit.export
    def shifted(self, x, k: int = 2):
        if bool(x.sum() > 0):
            return x * k
        return x - k


class CallsMethods(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = torch.jit.script(ExportingSub())

    def forward(self, x):
        return self.sub.shifted(x, 3) + self.sub(x)


def test_tsjit_trace_records_calls_of_a_torch_jit_submodules_methods() -> None:
    """As torch.jit's tracer: prim::CallMethod of `shifted`, whose control flow is kept."""
    model = CallsMethods()
    traced = tsjit.trace(model, torch.ones(4))
    calls = [(n.s("name"), n.inputs[0].debug_name) for n in traced.graph.nodes() if n.kind == "prim::CallMethod"]
    assert calls == [("shifted", "sub"), ("forward", "sub")]
    for x in (torch.ones(4), -torch.ones(4), torch.randn(4)):
        assert torch.equal(traced(x), model(x))


def test_torch_jit_calls_outside_traces_go_to_torch_jit() -> None:
    """The calls are replaced only while tsjit traces."""
    original = torch._C.ScriptFunction.__call__
    tsjit.trace(calls_torch_jit_script, (torch.randn(3),))
    assert torch._C.ScriptFunction.__call__ is original


# ---- torch.compile over tsjit functions ---------------------------------------------------------------------------
def _torch_compile_runs() -> bool:
    try:
        return bool(torch.compile(lambda x: x + 1, backend="eager", fullgraph=True)(torch.ones(1)).eq(2).all())
    except Exception:  # no dynamo for this Python, no compiler support: nothing to test against
        return False


torch_compile = pytest.mark.skipif("not _torch_compile_runs()", reason="torch.compile cannot run here")


def scaled_relu(x, y):
    return torch.relu(x) * y + 1


def calls_scaled_relu(x, y):
    return tsjit.script(scaled_relu)(x, y) * 2


@torch_compile
@pytest.mark.parametrize("fullgraph", [False, True])
def test_torch_compile_over_a_tsjit_function_compiles(fullgraph) -> None:
    """torch.compile traces a ScriptFunction's Python source (its tracer cannot see tsjit's plans and kernels),
    also inside a compiled caller, with no graph break (fullgraph=True)."""
    x, y = torch.randn(4), torch.randn(4)
    scripted = tsjit.script(scaled_relu)
    scripted(x, y)  # a plan and its entry exist: the compiled call still takes the Python source
    assert torch.equal(torch.compile(scripted, backend="eager", fullgraph=fullgraph)(x, y), scaled_relu(x, y))
    compiled_caller = torch.compile(calls_scaled_relu, backend="eager", fullgraph=fullgraph)
    assert torch.equal(compiled_caller(x, y), calls_scaled_relu(x, y))


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3)
        self.inner = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Linear(3, 2))

    def forward(self, x, scale: float = 2.0):
        return self.inner(torch.relu(self.linear(x)) * scale)


def _loaded(scripted):
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    buffer.seek(0)
    return tsjit.load(buffer)


@torch_compile
@pytest.mark.parametrize("what", ["module", "loaded module", "loaded function"])
def test_torch_compile_over_tsjit_modules_and_loaded_functions_compiles(what) -> None:
    """With no Python source to trace, torch.compile traces the method's graph as straight-line Python (made when
    the module is scripted or loaded after torch.compile is in use: runtime/torch_compile_plans.py).

    torch._dynamo is imported with this file (the tests may use it; tsjit never imports it): imported first while
    tsjit traces (torch's own `_disable_dynamo` wrappers import it on their first call), it would take tsjit's
    stand-in for torch._C._get_tracing_state into its tables and could no longer trace nn.Module.__call__."""
    torch._dynamo.reset()  # each case compiles afresh
    model = LinearRelu()
    x = torch.randn(4, 3)
    if what == "loaded function":
        compiled_object, args, expected = _loaded(tsjit.script(scaled_relu)), (x, x), scaled_relu(x, x)
    else:
        scripted = tsjit.script(model)
        compiled_object, args, expected = scripted if what == "module" else _loaded(scripted), (x,), model(x)
    compiled = torch.compile(compiled_object, backend="eager", fullgraph=True)  # no graph break
    torch.testing.assert_close(compiled(*args), expected)
    if what == "module":  # inside a compiled caller too
        caller = torch.compile(lambda *a: compiled_object(*a) - 1, backend="eager", fullgraph=True)
        torch.testing.assert_close(caller(*args), expected - 1)
