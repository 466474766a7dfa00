"""What a first call costs: scripting and running the bench programs must not import torch._dynamo (seconds on
its own; most meta kernels import it on their first call, so shape propagation must get by on its rules)."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

import tsjit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT_AND_RUN_THE_BENCH_PROGRAMS = """
import sys
import tsjit
from bench.first_call import WORKLOADS, first_call

for workload in WORKLOADS:
    first_call(tsjit, workload)
loaded = sorted(name for name in sys.modules if name.startswith("torch._dynamo"))
assert not loaded, f"scripting and running the bench programs imported {loaded[:5]}"
print("ran", len(WORKLOADS), "programs")
"""


def test_scripting_and_running_the_bench_programs_does_not_import_dynamo():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    result = subprocess.run([sys.executable, "-c", _SCRIPT_AND_RUN_THE_BENCH_PROGRAMS], capture_output=True,
                            text=True, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ran 5 programs" in result.stdout


_SCRIPT_AND_RUN_A_FUNCTION = """
import sys
import torch

before = set(sys.modules)
import tsjit

imported = set(sys.modules) - before
frontend = {"tsjit.api.function", "tsjit.frontend.ir_emitter", "tsjit.frontend.parser", "tsjit.frontend.resolver",
            "tsjit.frontend.builtin_functions", "tsjit.frontend.convert_to_ssa", "tsjit.frontend.cleanup_passes"}
assert frontend <= imported, f"import tsjit did not load the scripting frontend: {sorted(frontend - imported)}"
lazy = ("tsjit.mlir", "tsjit.serialization", "tsjit.frontend.tracer", "tsjit.frontend.trace_", "tsjit.ir.printer",
        "tsjit.ir.parser", "tsjit.api.module", "tsjit.frontend.module_sugared_values", "tsjit.frontend.script_class",
        "tsjit.frontend.concrete_module_type", "tsjit.ops.prim_ops", "tsjit.ops.builtins", "tsjit.cli")
eager = sorted(name for name in imported if name.startswith(lazy))
assert not eager, f"import tsjit loaded what only some programs need: {eager}"

from bench.programs import chain_source

loaded = set(sys.modules)
tsjit.CompilationUnit(chain_source(10)).chain(torch.randn(4), torch.randn(4))
beyond = sorted(name for name in set(sys.modules) - loaded if name.startswith("tsjit"))
assert not beyond, f"scripting and running a function of tensor operators imported {beyond}"
tsjit.script(torch.nn.Linear(2, 3))(torch.randn(1, 2))  # which scripting a module imports
print("ok")
"""


def test_import_loads_the_function_frontend_and_a_function_needs_no_more():
    """`import tsjit` loads the scripting frontend every `script` call needs (as `import torch` loads torch.jit's),
    and nothing that only some programs need: the module and class frontends (api/module.py,
    frontend/script_class.py and what they import) come with the first nn.Module or class scripted, the tracer
    with the first trace, the printer, archives and MLIR with their first use, and the tables of JIT-only builtins
    (ops/builtins, ops/prim_ops) with the first program that calls one. Scripting and running a function of tensor
    operators then imports no module of tsjit (TSJIT_LINT=1 would load the graph linter: it is unset here)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    env.pop("TSJIT_LINT", None)
    result = subprocess.run([sys.executable, "-c", _SCRIPT_AND_RUN_A_FUNCTION], capture_output=True, text=True,
                            env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


class _Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _halve(x) * 3


def _halve(x: torch.Tensor) -> torch.Tensor:
    return x / 2


class _ThreeCalls(torch.nn.Module):
    """One submodule and one function, each called from several places (as the encoder's `_canonical_mask`)."""

    def __init__(self):
        super().__init__()
        self.scale = _Scale()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale(x) + self.scale(x + 1) + _halve(self.scale(x - 1))


def test_each_function_is_optimized_once_however_many_callers_inline_it(monkeypatch):
    from tsjit.frontend import ir_emitter
    from tsjit.passes import inliner

    optimized, inlined = [], []
    inline_calls, inline_call = ir_emitter.inline_calls, inliner._inline_call

    def counting_inline_calls(graph):  # GraphFunction.optimized_graph's first step, once per optimized graph built
        optimized.append(graph)
        return inline_calls(graph)

    def counting_inline_call(node, function):
        inlined.append(function.qualname)
        return inline_call(node, function)

    monkeypatch.setattr(ir_emitter, "inline_calls", counting_inline_calls)
    monkeypatch.setattr(inliner, "_inline_call", counting_inline_call)
    module, x = _ThreeCalls(), torch.randn(4)
    assert torch.equal(tsjit.script(module)(x), module(x))
    # forward, _Scale.forward and _halve: three graphs optimized, however many times they are inlined
    assert len(optimized) == 3
    assert sorted(name.rsplit(".", 1)[-1] for name in inlined) == ["_halve", "_halve", "forward", "forward", "forward"]
