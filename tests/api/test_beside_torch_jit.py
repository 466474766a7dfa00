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
- tsjit.trace over a call of a scripted module's method whose module is not part of the trace raises, as
  torch.jit's tracer does (with no module value to call it on, recording its operators would fix its branches).
- torch.compile over a tsjit function, a tsjit module and a function or module loaded from an archive compiles,
  fullgraph=True included (skipped where torch.compile cannot run), also for modules scripted and called before
  torch._dynamo was first imported; torch._dynamo first imported inside a tsjit trace still compiles plain
  nn.Modules afterwards (both in subprocesses: they are about the order of imports).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tsjit
from tsjit.errors import TsjitError

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


class Branching(torch.nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2
        return x - 2

    @torch.jit.export
    def shifted(self, x, k: int = 2):
        return x + k


def _not_part_of_the_trace_message(tracer, model) -> str:
    with pytest.raises(RuntimeError) as raised:
        tracer(model, torch.ones(3))
    return re.sub(r"<\S+ object at 0x[0-9a-f]+>", "<module>", str(raised.value))


@pytest.mark.parametrize("how", ["torch.jit.script", "torch.jit.trace", "tsjit.script"])
@pytest.mark.parametrize("method", ["forward", "shifted"])
def test_tsjit_trace_of_a_scripted_module_outside_the_trace_raises_as_torch_jit(how, method) -> None:
    """A function traced by tsjit calls a scripted module that is no submodule of anything traced: torch.jit's
    tracer raises (the oracle, for torch.jit's own modules); so does tsjit's, a TsjitError with the same message,
    instead of recording the method's operators with its branch fixed."""
    make = {"torch.jit.script": lambda: torch.jit.script(Branching()),
            "torch.jit.trace": lambda: torch.jit.trace(Branching(), torch.ones(3)),
            "tsjit.script": lambda: tsjit.script(Branching())}[how]
    module = make()

    def calls_module(x):
        return getattr(module, method)(x) + 1

    oracle = torch.jit.script(Branching())
    expected = _not_part_of_the_trace_message(torch.jit.trace, lambda x: getattr(oracle, method)(x) + 1)
    assert "is not part of the active trace" in expected
    with pytest.raises(TsjitError):
        tsjit.trace(calls_module, torch.ones(3))
    assert _not_part_of_the_trace_message(tsjit.trace, calls_module) == expected


def test_a_torch_jit_module_met_in_traces_is_converted_once() -> None:
    """A scripted module called from traced code is converted on its first trace and kept while it lives: each
    trace names the same module, whose class name gains no `___torch_mangle_N` from trace to trace."""
    module = torch.jit.script(Branching())

    def calls_module(x):
        return module.shifted(x) + module(x)

    messages = set()
    for _ in range(3):
        with pytest.raises(TsjitError, match="not part of the active trace") as raised:
            tsjit.trace(calls_module, torch.ones(3))
        messages.add(str(raised.value))  # `<qualified name object at address>`: the same converted module
    assert len(messages) == 1


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
    torch.compile first asks for it: runtime/torch_compile_plans.py)."""
    import torch._dynamo  # the tests may use it (tsjit never imports it)

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


def _run_program(tmp_path, source: str) -> list[str]:
    """A program in a fresh process (a file: scripting reads the source); its output lines."""
    program = tmp_path / "program.py"
    program.write_text(source)
    done = subprocess.run([sys.executable, str(program)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"exit status {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout.split("\n")


SCRIPTED_AND_CALLED_BEFORE_DYNAMO = textwrap.dedent("""
    import io
    import sys
    import torch
    import tsjit

    class LinearRelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)
            self.inner = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Linear(3, 2))

        def forward(self, x, scale: float = 2.0):
            return self.inner(torch.relu(self.linear(x)) * scale)

    model, x = LinearRelu(), torch.randn(4, 3)
    scripted = tsjit.script(model)
    scripted(x), scripted(x)  # plans, entries and fused kernels made before torch.compile is first used
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    buffer.seek(0)
    loaded = tsjit.load(buffer)
    loaded(x)
    print("dynamo before", "torch._dynamo" in sys.modules)
    for module in (scripted, loaded):
        torch.testing.assert_close(torch.compile(module, backend="eager", fullgraph=True)(x), model(x))
        caller = torch.compile(lambda a: module(a, 3.0) - 1, backend="eager", fullgraph=True)
        torch.testing.assert_close(caller(x), model(x, 3.0) - 1)
    print("compiled", 2)
    # the mark tsjit sets on prepare_for_torch_compile is the one torch.compiler.assume_constant_result sets
    print("mark", getattr(torch.compiler.assume_constant_result(lambda: 0), "_dynamo_marked_constant", None))
""")


@torch_compile
def test_torch_compile_fullgraph_over_modules_scripted_and_called_before_dynamo_was_imported(tmp_path) -> None:
    """The straight-line Python torch.compile traces is made when torch.compile first asks for it, not when the
    module is scripted or called: no graph break however late torch._dynamo is first imported."""
    assert _run_program(tmp_path, SCRIPTED_AND_CALLED_BEFORE_DYNAMO)[:3] == ["dynamo before False", "compiled 2",
                                                                            "mark True"]


DYNAMO_IMPORTED_DURING_A_TRACE = textwrap.dedent("""
    import sys
    import torch
    import torch.nn.functional as F
    import tsjit

    tsjit.trace(lambda x: F.layer_norm(x, (3,)) * 2, torch.ones(2, 3))  # operators recorded through a dispatch mode
    print("dynamo after a trace", "torch._dynamo" in sys.modules)

    def imports_dynamo(x):
        import torch._dynamo  # noqa: F401  (as torch's own _disable_dynamo wrappers do on their first call)
        return x * 2

    tsjit.trace(imports_dynamo, torch.ones(3))
    x = torch.randn(2, 3)
    linear = torch.nn.Linear(3, 3)
    torch.testing.assert_close(torch.compile(linear, backend="eager", fullgraph=True)(x), linear(x))
    # a module called inside compiled code: torch.compile traces Module.__call__, which asks
    # torch._C._get_tracing_state()
    sequential = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
    sequential.register_forward_hook(lambda module, inputs, output: output * 2)
    torch.testing.assert_close(torch.compile(lambda a: sequential(a) + 1, backend="eager", fullgraph=True)(x),
                               sequential(x) + 1)
    scripted = tsjit.script(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU()))
    torch.testing.assert_close(torch.compile(lambda a: scripted(a) + 1, backend="eager", fullgraph=True)(x),
                               scripted(x) + 1)
    print("compiled", 3)
    traced = tsjit.trace(lambda a: a * 3 if torch.jit.is_tracing() else a, torch.ones(3))
    print("traced after", torch.equal(traced(x), x * 3), torch.jit.is_tracing(), torch._C._get_tracing_state())
""")


@torch_compile
def test_torch_compile_after_dynamo_was_first_imported_inside_a_tsjit_trace(tmp_path) -> None:
    """torch._dynamo builds its tables of torch functions from `torch._C`'s attributes on import: imported while
    tsjit traces, they hold tsjit's stand-ins for the tracing questions, which then stay in place (answering as
    torch's own outside traces), so torch.compile still traces Module.__call__. tsjit's own tracing never
    imports torch._dynamo."""
    assert _run_program(tmp_path, DYNAMO_IMPORTED_DURING_A_TRACE)[:3] == [
        "dynamo after a trace False", "compiled 3", "traced after True False None"]
